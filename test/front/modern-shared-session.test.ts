/**
 * Stateless clients of one principal, route and capability set share the gateway's
 * upstream session (front/modern/upstream-client.ts), and each numbers its requests from
 * its own start. Two of them sending the same id at once must each get their own answer:
 * a 2025 upstream routes answers by id within a session.
 */
import { describe, expect, inject, it } from "vitest";
import { hugePayloadBytes } from "../fixtures/raw-upstream-bytes";
import { readSse } from "../../src/core/sse";
import type { Json } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";

describe("two stateless clients sending the same request id at once", () => {
  it("each get their own answer from the one upstream session they share", async () => {
    // Same principal (anonymous), route and capabilities: one upstream session.
    const capabilities = { experimental: { sharedSessionTest: {} } };
    const slow = await modernPost(
      "/mcp/alpha",
      "tools/call",
      { name: "count", arguments: { steps: 10 } },
      { id: 7, capabilities, progressToken: "slow" },
    );
    const events = readSse(slow.body!);
    // The first progress event: the slow call is under way at the upstream.
    expect(JSON.parse((await events.next()).value!.data).method).toBe("notifications/progress");
    const quick = await modern(
      "/mcp/alpha",
      "tools/call",
      { name: "echo", arguments: { text: "second" } },
      { id: 7, capabilities },
    );
    expect(quick).toMatchObject({ id: 7, result: { content: [{ type: "text", text: "alpha: second" }] } });
    let last: Json = {};
    for await (const event of events) last = JSON.parse(event.data) as Json;
    expect(last).toMatchObject({ id: 7, result: { content: [{ type: "text", text: "counted to 10" }] } });
  });

  it("keeps the client's id on an answer offloaded while it streams", { timeout: 120_000 }, async () => {
    const { raw } = inject("fixtureUrls");
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]) };
    const body = await modern("/mcp/raw", "tools/call", { name: "huge", arguments: { mb: 20 } }, { id: "big-1", vars });
    expect(body.id).toBe("big-1");
    expect(JSON.parse(body.result.content[0].text).originalSize).toBe(hugePayloadBytes(20));
  });

  it("keeps the client's id on errors the gateway answers for an upstream that failed", async () => {
    // Nothing listens on port 9 of loopback: the exchange fails with the gateway's own error.
    const vars = { UPSTREAMS: JSON.stringify([{ name: "down", url: "http://127.0.0.1:9/mcp", timeoutMs: 2_000 }]) };
    const failed = await modern("/mcp/down", "tools/call", { name: "anything", arguments: {} }, { id: "mine-1", vars });
    expect(failed.id).toBe("mine-1");
    expect(failed.error).toBeDefined();
    expect(JSON.stringify(failed)).not.toContain("gw-req-");
  });
});
