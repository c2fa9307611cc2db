/**
 * The writer of SSE answers (front/http/sse-writer.ts): while an answer writes nothing it
 * sends a keepalive comment every ANSWER_KEEPALIVE_INTERVAL_MS, so that a closed stream is
 * noticed by a failed write; a client that stays connected but stops reading gets one
 * keepalive waiting for it, not one more for every interval (an idle hour would queue
 * thousands of writes). Time is the subject: the writer's interval runs on fake timers,
 * moved by hand, so the test takes no real time and no load can shift a tick.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ANSWER_KEEPALIVE_INTERVAL_MS, SseWriter } from "../../src/front/http/sse-writer";
import { SSE_KEEPALIVE } from "../../src/core/sse";

const decoder = new TextDecoder();
const KEEPALIVE = decoder.decode(SSE_KEEPALIVE);

/** A read of the stream, and whether it has settled yet. */
function tracked(reader: ReadableStreamDefaultReader<Uint8Array>): {
  readonly result: Promise<string>;
  settled: () => boolean;
} {
  let settled = false;
  const result = reader.read().then(({ value, done }) => {
    settled = true;
    return done ? "" : decoder.decode(value);
  });
  return { result, settled: () => settled };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("an SSE answer nobody reads for a while", () => {
  it("holds one keepalive for its client, not one per interval", async () => {
    const writer = new SseWriter(() => {});
    const reader = writer.body.getReader();
    // Five and a half intervals unread: five ticks, each of which would queue a keepalive.
    await vi.advanceTimersByTimeAsync(ANSWER_KEEPALIVE_INTERVAL_MS * 5.5);
    expect(await tracked(reader).result).toBe(KEEPALIVE);
    // Nothing else was waiting: the next read stays pending until the next tick.
    const next = tracked(reader);
    await vi.advanceTimersByTimeAsync(ANSWER_KEEPALIVE_INTERVAL_MS / 2 - 1);
    expect(next.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await next.result).toBe(KEEPALIVE);
    // And the answer still goes on: a message, then its end.
    const rest = tracked(reader);
    await writer.message('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(await rest.result).toBe('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    writer.abandon();
  });
});
