/**
 * The streamed check (features/guardrails/stream-guard.ts) on its own: a JSON-RPC answer
 * cut into chunks of many sizes comes out byte for byte as the in-memory check
 * (guard-json.ts) makes it, strings of hundreds of kilobytes whose matches straddle the
 * window included; a secret-named member is replaced whatever its type; a block finding
 * errors the stream.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_REDACT_KEYS } from "../../src/features/audit/audit-config";
import type { DetectorContext } from "../../src/features/guardrails/detectors";
import { checkGuardrails, type GuardRule } from "../../src/features/guardrails/document";
import { guardValue, type GuardHit } from "../../src/features/guardrails/guard-json";
import { guardedStream, STREAMED_MATCH_WINDOW_CHARS, StreamBlocked } from "../../src/features/guardrails/stream-guard";
import { pathSpan } from "../../src/core/raw-json";

const CONTEXT: DetectorContext = { secretKeys: DEFAULT_REDACT_KEYS, patterns: new Map() };

function rules(action: string): readonly GuardRule[] {
  const checked = checkGuardrails({ rules: [{ name: "r", action, detectors: ["personal", "secrets"] }] });
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return checked.value.rules;
}

/** `text` as a byte stream in chunks of the given sizes, cycled. */
function chunked(text: string, sizes: readonly number[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  let turn = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      const size = sizes[turn++ % sizes.length]!;
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function streamed(text: string, sizes: readonly number[], action = "redact") {
  let hits: GuardHit[] = [];
  const out = await new Response(guardedStream(chunked(text, sizes), rules(action), CONTEXT, (h) => (hits = h))).text();
  return { out, hits };
}

/** A text of `chars` characters that is mostly emails and card numbers: wherever a window ends, it cuts one. */
function longText(chars: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const part = `é user${i}@example.com · 4111 1111 1111 1111 `;
    parts.push(part);
    length += part.length;
  }
  return parts.join("");
}

const ANSWER = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: {
    content: [{ type: "text", text: longText(20 * STREAMED_MATCH_WINDOW_CHARS + 123) }],
    structuredContent: { owner: "ada@example.com", password: { nested: ["x"] }, token: 42, n: 1.5 },
    _meta: { note: "outside content, still in result: bob@example.com" },
  },
});

describe("a streamed answer", () => {
  it.each([[[1 << 20]], [[1, 7, 4_093]], [[65_536, 3]], [[32_768]]])(
    "in chunks of %j comes out as the in-memory check makes it",
    async (sizes) => {
      const expected = guardValue(ANSWER, pathSpan(ANSWER, ["result"])!, rules("redact"), "result", CONTEXT);
      const { out, hits } = await streamed(ANSWER, sizes);
      expect(out).toBe(expected.text);
      expect(out).not.toContain("@example.com");
      expect(JSON.parse(out).result.structuredContent).toEqual({
        owner: "[redacted: email]",
        password: "[redacted: secret-field]",
        token: "[redacted: secret-field]",
        n: 1.5,
      });
      expect(new Map(hits.map((h) => [h.kind, h.count]))).toEqual(new Map(expected.hits.map((h) => [h.kind, h.count])));
    },
  );

  it("errors with the rule when a block rule finds something", async () => {
    await expect(streamed(ANSWER, [4_096], "block")).rejects.toBeInstanceOf(StreamBlocked);
  });
});
