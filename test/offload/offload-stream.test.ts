/**
 * A result far larger than an isolate's 128 MB, through the gateway: streamed from the
 * upstream into R2 as it arrives, with its preview and schema computed on the way, and
 * readable back by byte range. (Peak memory is measured by `npm run bench`.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { hugeItem, hugeItemOffset, hugePayloadBytes } from "../fixtures/raw-upstream-bytes";
import { initialize, request, type Json } from "../helpers/gateway";

const HUGE_MB = 300;

describe("an answer larger than the isolate", () => {
  const { raw } = inject("fixtureUrls");
  it.each([
    ["a JSON body", HUGE_MB, raw],
    ["an SSE event", 40, raw.replace(/\/mcp$/, "/sse/mcp")],
  ])(`offloads %s of %i MiB while it streams`, { timeout: 300_000 }, async (_label, HUGE_MB, url) => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url, timeoutMs: 60_000 }]) };
    const { session } = await initialize("/mcp", { vars });
    const answer = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "raw___huge", arguments: { mb: HUGE_MB } },
      { vars },
    );
    const envelope = JSON.parse(answer.result.content[0].text) as Json;
    const expected = hugePayloadBytes(HUGE_MB);
    expect(envelope.originalSize).toBe(expected);
    expect(envelope.payloadSchema).toEqual({
      items: [{ id: "number", name: "string", pad: "string", score: "number", tags: ["string"] }],
      total: "number",
    });
    expect(envelope.payloadPreview.startsWith('{"items":[{"id":0,"name":"item 0"')).toBe(true);
    expect(answer.result.isError).toBe(true); // its payload was structuredContent
    const head = await env.PAYLOADS.head(`payloads/${envelope.payloadId}`);
    expect(head?.size).toBe(expected);
    const tail = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: envelope.payloadId, byteOffset: expected - 40, byteLength: 40 } },
      { vars },
    );
    expect(tail.result.structuredContent.text.endsWith(`],"total":${Math.floor((HUGE_MB * 1024 * 1024) / 100)}}`)).toBe(
      true,
    );
    // Every part holds what was sent (the parts are written from one reused buffer): items from the first part, a middle one, the last.
    const count = Math.floor((HUGE_MB * 1024 * 1024) / 100);
    for (const item of [1_000, Math.floor(count / 2), count - 1]) {
      const read = await request(
        "/mcp",
        session,
        "tools/call",
        {
          name: "sys___read_payload",
          arguments: { id: envelope.payloadId, byteOffset: hugeItemOffset(item), byteLength: 100 },
        },
        { vars },
      );
      expect({ item, text: read.result.structuredContent.text }).toEqual({ item, text: hugeItem(item) });
    }
  });

  it("drops a streamed answer to another request's id, and answers the call with its own", {
    timeout: 120_000,
  }, async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]) };
    const { session } = await initialize("/mcp", { vars });
    const answer = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "raw___huge-stale", arguments: { mb: 9 } },
      { vars },
    );
    // Offload answered with the call's id whatever the streamed message's own: the other request's result became this call's.
    expect(answer.result).toEqual({ content: [{ type: "text", text: "the call's own answer" }] });
  });

  it("offloads the call's own large answer after dropping a streamed answer to another request", {
    timeout: 120_000,
  }, async () => {
    const vars = {
      UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]),
      OFFLOAD: JSON.stringify({ thresholdBytes: 4096 }),
    };
    const { session } = await initialize("/mcp", { vars });
    const answer = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "raw___huge-stale", arguments: { mb: 9, answerKb: 100 } },
      { vars },
    );
    // The dropped answer's payload id stayed on the call's record, and the call's own answer was taken as offloaded already.
    const envelope = JSON.parse(answer.result.content[0].text) as Json;
    expect(envelope.originalSize).toBe(100 * 1024);
    const read = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: envelope.payloadId, byteOffset: 0, byteLength: 10 } },
      { vars },
    );
    expect(read.result.structuredContent.text).toBe("a".repeat(10));
  });

  it("offloads an answer once: the compact answer of a streamed payload is not offloaded again, however low the threshold", {
    timeout: 60_000,
  }, async () => {
    // The compact answer (a few KB) is above this threshold; only the "already offloaded" check keeps it from being stored in turn.
    const vars = {
      UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]),
      OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }),
    };
    const { session } = await initialize("/mcp", { vars });
    const answer = await request("/mcp", session, "tools/call", { name: "raw___huge", arguments: { mb: 9 } }, { vars });
    expect(new TextEncoder().encode(JSON.stringify(answer)).length).toBeGreaterThan(1000);
    const envelope = JSON.parse(answer.result.content[0].text) as Json;
    expect(envelope.originalSize).toBe(hugePayloadBytes(9));
    expect(envelope.payloadSchema.items).toBeDefined();
    expect(answer.result._meta["mcp-edge-gateway/offload"].originalSize).toBe(hugePayloadBytes(9));
  });
});
