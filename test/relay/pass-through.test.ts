/**
 * A large result no policy changes goes from the upstream's body to the client's as the
 * upstream's bytes, never decoded (issue 38): the relay makes an answer of the bytes, no
 * layer reads its text, and the front writes it as it is. The answer is byte for byte
 * what the upstream sends for the same call (the id is the client's: on the 2026-07-28
 * route the upstream saw the gateway's own). The counts are the isolate's, which the
 * Worker under test shares with this file.
 */
import { describe, expect, inject, it } from "vitest";
import { Answer } from "../../src/context/answer";
import { recordingQueue } from "../helpers/audit";
import { initialize, post } from "../helpers/gateway";
import { modernPost } from "../helpers/modern";

const vars = {
  UPSTREAMS: JSON.stringify([{ name: "raw", url: inject("fixtureUrls").raw, timeoutMs: 60_000 }]),
  OFFLOAD: JSON.stringify({ exclude: ["raw___*"] }),
};
const huge = { name: "huge", arguments: { mb: 1 } };

/** What the upstream itself answers to the call, as bytes. */
async function upstreamBytes(id: number): Promise<Uint8Array> {
  const response = await fetch(inject("fixtureUrls").raw, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: huge }),
  });
  return new Uint8Array(await response.arrayBuffer());
}

/** `response`'s bytes, and how many answers were made of bytes, decoded and made to flow while it was answered and read. */
async function counted(send: () => Promise<Response>) {
  const before = { ...Answer.counts };
  const response = await send();
  const bytes = new Uint8Array(await response.arrayBuffer());
  return {
    response,
    bytes,
    ofBytes: Answer.counts.ofBytes - before.ofBytes,
    decoded: Answer.counts.decoded - before.decoded,
    flows: Answer.counts.flows - before.flows,
  };
}

describe("a large result no policy changes", () => {
  it("reaches a 2025 client as the upstream's bytes as they come, never decoded", async () => {
    const { session } = await initialize("/mcp/raw", { vars });
    const body = { jsonrpc: "2.0", id: 7, method: "tools/call", params: huge };
    const got = await counted(() => post("/mcp/raw", body, { session, vars }));
    expect(got.response.status).toBe(200);
    expect(got.response.headers.get("content-type")).toBe("application/json");
    expect(got.flows).toBe(1);
    expect(got.ofBytes).toBe(0);
    expect(got.decoded).toBe(0);
    expect(got.bytes).toEqual(await upstreamBytes(7));
  });

  it("reaches a 2026-07-28 client as the upstream's bytes with its own id, never decoded", async () => {
    const got = await counted(() => modernPost("/mcp/raw", "tools/call", huge, { vars, id: 8 }));
    expect(got.response.status).toBe(200);
    expect(got.ofBytes).toBeGreaterThan(0);
    expect(got.decoded).toBe(0);
    const text = new TextDecoder().decode(got.bytes);
    expect(JSON.parse(text).id).toBe(8);
    // The one change a 2026-07-28 client gets: the result says it is complete, added at its end (before `}}`).
    const own = new TextDecoder().decode(await upstreamBytes(8));
    expect(own.endsWith("}}}")).toBe(true);
    expect(text).toBe(`${own.slice(0, -2)},"resultType":"complete"}}`);
  });

  it("is not decoded for the audit event either, which records it as a success", async () => {
    const { queue, batches } = recordingQueue();
    const audited = { ...vars, AUDIT_QUEUE: queue };
    const { session } = await initialize("/mcp/raw", { vars: audited });
    const body = { jsonrpc: "2.0", id: 10, method: "tools/call", params: huge };
    const got = await counted(() => post("/mcp/raw", body, { session, vars: audited, settle: true }));
    expect(got.flows).toBe(1);
    expect(got.decoded).toBe(0);
    const events = batches.flat().map((message) => message.body);
    const call = events.find((event) => event["mcp.method.name"] === "tools/call");
    expect(call?.["gateway.outcome"]).toBe("success");
  });

  it("reaches a 2025 client as the upstream's bytes as they come when the upstream answered as SSE", async () => {
    const { session } = await initialize("/mcp/raw", { vars });
    const params = { name: "huge", arguments: { mb: 1, sse: true } };
    const got = await counted(() =>
      post("/mcp/raw", { jsonrpc: "2.0", id: 11, method: "tools/call", params }, { session, vars }),
    );
    expect(got.response.status).toBe(200);
    expect(got.response.headers.get("content-type")).toBe("text/event-stream");
    expect(got.flows).toBe(1);
    expect(got.decoded).toBe(0);
    // The event's data is the upstream's JSON answer as it came, on one line.
    const text = new TextDecoder().decode(got.bytes);
    const data = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .at(-1)!
      .slice("data: ".length);
    expect(data).toBe(new TextDecoder().decode(await upstreamBytes(11)));
  });

  it("is a 2026-07-28 upstream's complete result too, to either era's client, never decoded", async () => {
    const modern = {
      UPSTREAMS: JSON.stringify([{ name: "modern", url: inject("modernUpstreamUrl"), timeoutMs: 60_000 }]),
      OFFLOAD: JSON.stringify({ exclude: ["modern___*"] }),
    };
    const text = "b".repeat(300 * 1024);
    const echo = { name: "blob", arguments: { size: text.length } };
    const { session } = await initialize("/mcp/modern", { vars: modern });
    const legacy = await counted(() =>
      post("/mcp/modern", { jsonrpc: "2.0", id: 12, method: "tools/call", params: echo }, { session, vars: modern }),
    );
    expect(legacy.ofBytes).toBe(1);
    expect(legacy.decoded).toBe(0);
    const answered = JSON.parse(new TextDecoder().decode(legacy.bytes));
    expect(answered).toMatchObject({ id: 12, result: { content: [{ type: "text", text }], resultType: "complete" } });
    const current = await counted(() => modernPost("/mcp/modern", "tools/call", echo, { vars: modern, id: 13 }));
    expect(current.ofBytes).toBeGreaterThan(0);
    expect(current.decoded).toBe(0);
    const own = new TextDecoder().decode(current.bytes);
    // The upstream's resultType is the one the client gets: none is added beside it.
    expect(own.split('"resultType"').length).toBe(2);
    expect(JSON.parse(own)).toMatchObject({ id: 13, result: { content: [{ text }], resultType: "complete" } });
  });

  it("is downgraded for a 2025 client when its structuredContent is not an object (read, not passed on)", async () => {
    const modern = {
      UPSTREAMS: JSON.stringify([{ name: "modern", url: inject("modernUpstreamUrl"), timeoutMs: 60_000 }]),
      OFFLOAD: JSON.stringify({ exclude: ["modern___*"] }),
    };
    const blob = { name: "blob", arguments: { size: 300 * 1024, list: true } };
    const { session } = await initialize("/mcp/modern", { vars: modern });
    const got = await counted(() =>
      post("/mcp/modern", { jsonrpc: "2.0", id: 14, method: "tools/call", params: blob }, { session, vars: modern }),
    );
    // Read as text before it became an answer: no answer was made of its bytes.
    expect(got.ofBytes).toBe(0);
    const { result } = JSON.parse(new TextDecoder().decode(got.bytes));
    expect(result.structuredContent).toBeUndefined();
    expect(result._meta["mcp-edge-gateway/downgraded"]).toEqual([
      expect.objectContaining({ member: "structuredContent" }),
    ]);
  });

  it("is read by a layer with a policy for it (offload on: it is stored, not relayed)", async () => {
    const { session } = await initialize("/mcp/raw", { vars: { UPSTREAMS: vars.UPSTREAMS } });
    const body = { jsonrpc: "2.0", id: 9, method: "tools/call", params: huge };
    const got = await counted(() => post("/mcp/raw", body, { session, vars: { UPSTREAMS: vars.UPSTREAMS } }));
    expect(got.response.status).toBe(200);
    // Whichever way offload took it (as a stream, or as an answer it read), the client gets the compact answer.
    expect(got.decoded).toBe(got.ofBytes);
    expect(got.bytes.byteLength).toBeLessThan(64 * 1024);
  });
});
