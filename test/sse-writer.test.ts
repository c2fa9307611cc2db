/**
 * The writer of SSE answers (front/http/sse-writer.ts): while an answer writes nothing it
 * sends a keepalive comment every ANSWER_KEEPALIVE_INTERVAL_MS, so that a closed stream is
 * noticed by a failed write; a client that stays connected but stops reading gets one
 * keepalive waiting for it, not one more for every interval (an idle hour would queue
 * thousands of writes).
 */
import { describe, expect, it } from "vitest";
import { ANSWER_KEEPALIVE_INTERVAL_MS, SseWriter } from "../src/front/http/sse-writer";
import { SSE_KEEPALIVE } from "../src/core/sse";

/** Reads a stream in windows of time; a read still pending when a window closes is kept for the next. */
function windowed(body: ReadableStream<Uint8Array>): (ms: number) => Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  return async (ms) => {
    let text = "";
    const until = Date.now() + ms;
    for (;;) {
      const left = until - Date.now();
      if (left <= 0) return text;
      pending ??= reader.read();
      const next = await Promise.race([pending, new Promise<"late">((resolve) => setTimeout(() => resolve("late"), left))]);
      if (next === "late") return text;
      pending = undefined;
      if (next.done) return text;
      text += decoder.decode(next.value, { stream: true });
    }
  };
}

describe("an SSE answer nobody reads for a while", () => {
  it("holds one keepalive for its client, not one per interval", { timeout: 20_000 }, async () => {
    const writer = new SseWriter(() => {});
    const readFor = windowed(writer.body);
    // Five and a half intervals unread (five keepalives queued, were each tick to queue one),
    // then whatever is waiting is taken at once: the one waiting, and at most one more if the
    // next tick falls in the window.
    await new Promise((resolve) => setTimeout(resolve, ANSWER_KEEPALIVE_INTERVAL_MS * 5.5));
    const waiting = await readFor(ANSWER_KEEPALIVE_INTERVAL_MS / 4);
    const keepalive = new TextDecoder().decode(SSE_KEEPALIVE);
    const count = waiting.split(keepalive).length - 1;
    expect(count).toBeGreaterThanOrEqual(1);
    expect(count).toBeLessThanOrEqual(2);
    // And the answer still goes on: a message, then its end.
    const written = writer.message('{"jsonrpc":"2.0","id":1,"result":{}}');
    const rest = readFor(ANSWER_KEEPALIVE_INTERVAL_MS / 2);
    await written;
    expect(await rest).toContain('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    writer.abandon();
  });
});
