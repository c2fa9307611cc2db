/**
 * Amplification: how many upstream requests one client request may cause. A list
 * cursor is authenticated (a forged one naming an upstream 2,000 times is refused), and
 * a JSON-RPC batch is bounded. Upstream requests are counted by the fixture.
 */
import { describe, expect, inject, it } from "vitest";
import { encodeJson } from "../../src/core/base64url";
import { initialize, post, request, type Json } from "../helpers/gateway";

const base = inject("namesUpstream");

async function counts(key: string): Promise<{ total: number; byMethod: Record<string, number> }> {
  return (await (await fetch(`${base}/counts/${key}`)).json()) as { total: number; byMethod: Record<string, number> };
}

describe("list cursors", () => {
  it("refuses a forged cursor naming one upstream 2,000 times, without asking it", async () => {
    const key = `cursor-${crypto.randomUUID()}`;
    const vars = { UPSTREAMS: JSON.stringify([{ name: "count", url: `${base}/plain/${key}/mcp` }]) };
    const { session } = await initialize("/mcp", { vars });
    const before = await counts(key);
    for (const cursor of [
      encodeJson(Array.from({ length: 2000 }, () => ["count", null])),
      `${encodeJson([["count", null]])}.AAAA`,
    ]) {
      const answer = await request("/mcp", session, "tools/list", { cursor }, { vars });
      expect(answer.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/cursor was not issued by this gateway/),
      });
    }
    expect((await counts(key)).byMethod["tools/list"] ?? 0).toBe(before.byMethod["tools/list"] ?? 0);
  });

  it("does not take a cursor of another session", async () => {
    const first = await initialize();
    const page = await request("/mcp", first.session, "tools/list");
    expect(typeof page.result.nextCursor).toBe("string");
    const other = await initialize();
    expect((await request("/mcp", other.session, "tools/list", { cursor: page.result.nextCursor })).error.code).toBe(
      -32602,
    );
    expect((await request("/mcp", first.session, "prompts/list", { cursor: page.result.nextCursor })).error.code).toBe(
      -32602,
    );
    expect(
      (await request("/mcp", first.session, "tools/list", { cursor: page.result.nextCursor })).result.tools.length,
    ).toBeGreaterThan(0);
  });
});

describe("batches", () => {
  const key = `batch-${crypto.randomUUID()}`;
  const vars = { UPSTREAMS: JSON.stringify([{ name: "count", url: `${base}/plain/${key}/mcp` }]) };

  it("refuses a batch of 5,000 notifications with 400, sending nothing upstream", async () => {
    const { session } = await initialize("/mcp", { vars, version: "2025-03-26" });
    const before = await counts(key);
    const batch = Array.from({ length: 5000 }, (_, i) => ({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: i, progress: 1 },
    }));
    const response = await post("/mcp", batch, { session, vars, version: "2025-03-26" });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(body.error).toMatchObject({
      code: -32600,
      message: "Invalid Request: a batch of 5000 messages; the gateway takes at most 100 per POST",
    });
    expect((await counts(key)).total).toBe(before.total);
  });

  it("still answers a batch of 100 requests", async () => {
    const { session } = await initialize("/mcp", { vars, version: "2025-03-26" });
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }));
    const response = await post("/mcp", batch, { session, vars, version: "2025-03-26" });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.match(/"result"/g)?.length).toBe(100);
  });
});
