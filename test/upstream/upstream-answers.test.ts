/**
 * How the gateway reads an upstream's JSON answer to a call: a small one straight from the
 * fetch body (upstream/small-answer.ts), a larger or chunked one as a guarded stream
 * (upstream/deadlines.ts). Either way the client gets the upstream's own bytes, and an
 * answer that stalls ends with the same timeout failure. Through the real gateway in
 * workerd, against a real server on loopback (test/fixtures/faulty-upstream.ts).
 */
import { inject, describe, expect, it } from "vitest";
import { initialize, messageTexts, post, request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const faulty = inject("faultyUpstreamUrl");
/** The fixture's `json-large` result text, in characters. */
const LARGE_ANSWER_CHARS = 200 * 1024;

let tags = 0;
function faultyUrl(mode: string): string {
  return `${faulty}/${mode}/a${Date.now()}-${tags++}`;
}

function upstream(mode: string, deadlines: Record<string, number> = {}): Vars {
  return { UPSTREAMS: JSON.stringify([{ name: "up", url: faultyUrl(mode), ...deadlines }]) };
}

async function callText(vars: Vars, id: number): Promise<string> {
  const { session } = await initialize("/mcp/up", { vars });
  const response = await post(
    "/mcp/up",
    { jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: {} } },
    { session, vars },
  );
  return (await messageTexts(response)).at(-1)!;
}

describe("a JSON answer is relayed with the upstream's own bytes", () => {
  it("when it declares its Content-Length", async () => {
    expect(await callText(upstream("json-sized"), 7)).toBe(
      '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"sized \\u00e9 ü"}],"structuredContent":{"ratio":1.0,"big":9223372036854775807,"e":1e3}}}',
    );
  });

  it("when it is chunked and larger than what is read straight from the body", async () => {
    const text = await callText(upstream("json-large"), 8);
    expect(text.length).toBeGreaterThan(LARGE_ANSWER_CHARS);
    expect(text).toBe(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        result: { content: [{ type: "text", text: "y".repeat(LARGE_ANSWER_CHARS) }] },
      }),
    );
  });
});

describe("a JSON answer that stalls after its headers", () => {
  it.each([
    ["chunked, small", "json-stall"],
    ["with its Content-Length", "json-sized-stall"],
    ["chunked, past what is read straight from the body", "json-large-stall"],
  ])("%s: ends with the answer deadline's timeout, and the session goes on", async (_label, mode) => {
    const vars = upstream(mode, { timeoutMs: 500, idleTimeoutMs: 500 });
    const { session } = await initialize("/mcp/up", { vars });
    const stalled = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(stalled.error).toMatchObject({ code: -32010, data: { upstream: "up", reason: "timeout" } });
    expect(stalled.error.message).toMatch(/upstream "up" did not finish its answer within 500 ms/);
    const list = await request("/mcp/up", session, "tools/list", undefined, { vars });
    expect(list.result.tools.map((t: Json) => t.name)).toContain("echo");
  });

  it.each(["json-stall", "json-sized-stall"])(
    "%s: ends with the idle deadline's timeout when that is the shorter",
    async (mode) => {
      const vars = upstream(mode, { timeoutMs: 20_000, idleTimeoutMs: 300 });
      const { session } = await initialize("/mcp/up", { vars });
      const stalled = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
      expect(stalled.error).toMatchObject({ code: -32010, data: { upstream: "up", reason: "timeout" } });
      expect(stalled.error.message).toMatch(/upstream "up" sent nothing for 300 ms/);
    },
  );
});

describe("a compressed JSON answer", () => {
  it("is bounded by its decoded size, not the Content-Length of its compressed bytes", async () => {
    // Offload excluded: an answer a 2026-07-28 client gets is held whole, and 17 MiB decoded is past the 16 MiB bound.
    const vars = { ...upstream("json-gzip"), OFFLOAD: JSON.stringify({ exclude: ["*"] }) };
    const answer = await modern("/mcp/up", "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error?.message).toMatch(/larger than 16777216 bytes/);
  });

  it("flows to a 2025 client whole when no layer reads it (never held)", async () => {
    const vars = { ...upstream("json-gzip"), OFFLOAD: JSON.stringify({ exclude: ["*"] }) };
    const { session } = await initialize("/mcp/up", { vars });
    const answer = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error).toBeUndefined();
    expect(answer.result.content[0].text).toHaveLength(17 * 1024 * 1024);
  });

  it("is offloaded by its decoded size", async () => {
    const vars = upstream("json-gzip");
    const { session } = await initialize("/mcp/up", { vars });
    const answer = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error).toBeUndefined();
    expect(JSON.stringify(answer.result)).toMatch(/payloadId/);
  });
});

describe("an offloaded JSON answer that keeps arriving", () => {
  it("is not cut by the idle deadline while bytes come more often than it", { timeout: 30_000 }, async () => {
    const vars = {
      ...upstream("json-trickle", { timeoutMs: 20_000, idleTimeoutMs: 600 }),
      OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }),
    };
    const { session } = await initialize("/mcp/up", { vars });
    const answer = await request("/mcp/up", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(answer.error).toBeUndefined();
    expect(JSON.stringify(answer.result)).toMatch(/payloadId/);
  });
});
