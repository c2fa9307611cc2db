/**
 * A result far larger than an isolate's 128 MB, through the gateway: streamed from the
 * upstream into R2 as it arrives, with its preview and schema computed on the way, and
 * readable back by byte range. (Peak memory is measured by `npm run bench`.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { hugePayloadBytes } from "./fixtures/raw-upstream-bytes";
import { initialize, request, type Json } from "./helpers/gateway";

const HUGE_MB = 300;

describe("an answer larger than the isolate", () => {
  const { raw } = inject("fixtureUrls");
  it.each([
    ["a JSON body", HUGE_MB, raw],
    ["an SSE event", 40, raw.replace(/\/mcp$/, "/sse/mcp")],
  ])(`offloads %s of %i MiB while it streams`, { timeout: 300_000 }, async (_label, HUGE_MB, url) => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url, timeoutMs: 60_000 }]) };
    const { session } = await initialize("/mcp", { vars });
    const answer = await request("/mcp", session, "tools/call", { name: "raw___huge", arguments: { mb: HUGE_MB } }, { vars });
    const envelope = JSON.parse(answer.result.content[0].text) as Json;
    const expected = hugePayloadBytes(HUGE_MB);
    expect(envelope.originalSize).toBe(expected);
    expect(envelope.payloadSchema).toEqual({ items: [{ id: "number", name: "string", pad: "string", score: "number", tags: ["string"] }], total: "number" });
    expect(envelope.payloadPreview.startsWith('{"items":[{"id":0,"name":"item 0"')).toBe(true);
    expect(answer.result.isError).toBe(true); // its payload was structuredContent
    const head = await env.PAYLOADS.head(`payloads/${envelope.payloadId}`);
    expect(head?.size).toBe(expected);
    const tail = await request("/mcp", session, "tools/call", { name: "sys___read_payload", arguments: { id: envelope.payloadId, byteOffset: expected - 40, byteLength: 40 } }, { vars });
    expect(tail.result.structuredContent.text.endsWith(`],"total":${Math.floor((HUGE_MB * 1024 * 1024) / 100)}}`)).toBe(true);
  });
});
