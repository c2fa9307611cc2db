/**
 * core/response-flow.ts: a response passed on while it arrives hands on exactly the bytes
 * it read, however they were cut, each checked before it goes; it breaks off (and says
 * why, once) where the bytes stop being a plain success response to the request, where
 * the body ends early, and when its reader stops (the body is then cancelled).
 */
import { describe, expect, it } from "vitest";
import { byteReader } from "../../src/core/byte-reads";
import { FLOW_HEAD_BYTES, FlowBreak, ResponseFlow } from "../../src/core/response-flow";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A body of `chunks` (a byte stream, read into the reader's memory, or one of chunks); `cancelled` says whether its reader cancelled it. */
function body(chunks: readonly Uint8Array[], bytes = false) {
  const state = { cancelled: false };
  let at = 0;
  const source = {
    pull(controller: ReadableStreamDefaultController<Uint8Array> | ReadableByteStreamController) {
      if (at < chunks.length) controller.enqueue(chunks[at++]!.slice());
      else controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
  };
  const stream = bytes
    ? new ReadableStream({ type: "bytes", ...source })
    : new ReadableStream<Uint8Array>(source as UnderlyingSource<Uint8Array>);
  return { reader: byteReader(stream as ReadableStream<Uint8Array>), state };
}

/** `text`'s bytes cut at random sizes up to `max` (seeded, so a failure repeats). */
function cut(text: string, max: number, seed = 7): Uint8Array[] {
  const all = encoder.encode(text);
  const pieces: Uint8Array[] = [];
  let state = seed;
  for (let at = 0; at < all.length; ) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const size = 1 + (state % max);
    pieces.push(all.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

const answer = (id: unknown, chars: number, tail = '"}]}}') =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"${"é".repeat(chars / 2)}${tail}`;

/** What `flow` handed on, as bytes and text, and the error it ended with. */
async function drain(flow: ResponseFlow): Promise<{ bytes: Uint8Array; text: string; error?: unknown }> {
  const pieces: Uint8Array[] = [];
  let error: unknown;
  try {
    for await (const piece of flow.pieces()) pieces.push(piece.slice());
  } catch (thrown) {
    error = thrown;
  }
  const bytes = new Uint8Array(Buffer.concat(pieces));
  return { bytes, text: decoder.decode(bytes), error };
}

/** Whether `bytes` are the start of `text`'s bytes. */
const startsWith = (text: string, bytes: Uint8Array) =>
  Buffer.from(encoder.encode(text).subarray(0, bytes.byteLength)).equals(Buffer.from(bytes));

async function started(text: string, id: unknown, max = 5000, bytes = false) {
  const source = body(cut(text, max), bytes);
  const start = await ResponseFlow.start([], source.reader, id as number);
  return { start, source };
}

describe("ResponseFlow", () => {
  it.each([
    [41, false],
    [97, true],
    [5000, false],
    [5000, true],
    [70_000, true],
  ])("hands on every byte as it came, cut at up to %i bytes (a byte stream: %s)", async (max, bytes) => {
    const text = answer(4, 300_000);
    const { start } = await started(text, 4, max, bytes);
    expect("flow" in start).toBe(true);
    const flow = (start as { flow: ResponseFlow }).flow;
    const got = await drain(flow);
    expect(got.error).toBeUndefined();
    expect(got.text).toBe(text);
    const end = await flow.ended;
    expect(end).toMatchObject({ ok: true, byteLength: encoder.encode(text).byteLength });
    expect(end.ok && end.layout.idRaw).toBe("4");
  });

  it("is not started for a start that is not a success response: what was read is handed back", async () => {
    const text = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${"n".repeat(200_000)}"}}`;
    const { start } = await started(text, 4);
    expect("held" in start).toBe(true);
    const held = (start as { held: Uint8Array[] }).held;
    // No more than what told it: the start, read until it could not be one.
    expect(held.reduce((n, piece) => n + piece.byteLength, 0)).toBeLessThanOrEqual(FLOW_HEAD_BYTES);
    expect(text.startsWith(decoder.decode(Buffer.concat(held)))).toBe(true);
  });

  it.each([
    ["bytes that stop being JSON", answer(4, 300_000, '"}],}}'), 4, /not a JSON-RPC success response/],
    [
      "an answer to another id, its id last (as the SDK writes one)",
      `{"result":{"content":[{"type":"text","text":"${"x".repeat(300_000)}"}]},"jsonrpc":"2.0","id":"other"}`,
      4,
      /answered id "other", not the request's/,
    ],
    ["a body that ends early", answer(4, 300_000, ""), 4, /breaks off before its end/],
  ])("breaks off at %s, once, having handed on only checked bytes", async (_, text, id, reason) => {
    const { start } = await started(text, id);
    const flow = (start as { flow: ResponseFlow }).flow;
    const got = await drain(flow);
    expect(got.error).toBeInstanceOf(FlowBreak);
    expect(String(got.error)).toMatch(reason);
    expect(startsWith(text, got.bytes)).toBe(true);
    const end = await flow.ended;
    expect(end.ok).toBe(false);
    expect(!end.ok && end.error).toBe(got.error);
  });

  it("is not started for an answer to another id whose id comes first: it is read whole, to be dropped", async () => {
    const { start } = await started(answer("other", 300_000), 4);
    expect("held" in start).toBe(true);
  });

  it("holds back the last piece until the end is checked: a broken end never goes out whole", async () => {
    const text = `{"result":{"content":[{"type":"text","text":"${"x".repeat(300_000)}"}]},"jsonrpc":"2.0","id":"other"}`;
    const { start } = await started(text, 4, 70_000);
    const got = await drain((start as { flow: ResponseFlow }).flow);
    expect(got.error).toBeInstanceOf(FlowBreak);
    // What went out is the start, short of the end by at least a piece.
    expect(encoder.encode(text).byteLength - got.bytes.byteLength).toBeGreaterThan(1000);
  });

  it("stops and cancels the body when its reader stops reading", async () => {
    const { start, source } = await started(answer(4, 600_000), 4);
    const flow = (start as { flow: ResponseFlow }).flow;
    const pieces = flow.pieces();
    expect((await pieces.next()).done).toBe(false);
    await pieces.return(undefined);
    const end = await flow.ended;
    expect(end.ok).toBe(false);
    expect(!end.ok && end.error instanceof FlowBreak && end.error.byClient).toBe(true);
    expect(source.state.cancelled).toBe(true);
  });

  it("stops at once when the client's stream is cancelled while the upstream is silent", async () => {
    const chunks = cut(answer(4, 600_000), 5000).slice(0, 80);
    const state = { cancelled: false };
    let at = 0;
    const silent = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at < chunks.length) controller.enqueue(chunks[at++]!.slice());
        else return new Promise<void>(() => {}); // nothing more, ever
      },
      cancel() {
        state.cancelled = true;
      },
    });
    const start = await ResponseFlow.start([], byteReader(silent), 4);
    const flow = (start as { flow: ResponseFlow }).flow;
    const reader = flow.stream().getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    const end = await flow.ended;
    expect(!end.ok && end.error instanceof FlowBreak && end.error.byClient).toBe(true);
    expect(state.cancelled).toBe(true);
  });

  it("stops and cancels the body when the client's stream is cancelled before its first read", async () => {
    const { start, source } = await started(answer(4, 600_000), 4);
    const flow = (start as { flow: ResponseFlow }).flow;
    await flow.stream().cancel();
    const end = await flow.ended;
    expect(!end.ok && end.error instanceof FlowBreak && end.error.byClient).toBe(true);
    expect(source.state.cancelled).toBe(true);
  });

  it("hands on a text with line breaks between tokens on one line for an SSE event, as the same JSON", async () => {
    const text = `{"jsonrpc":"2.0",\r\n"id":4,\n"result":{"content":\n[{"type":"text","text":"${"x".repeat(300_000)}"}\n]}}\n`;
    const { start } = await started(text, 4, 3000);
    const flow = (start as { flow: ResponseFlow }).flow;
    const pieces: Uint8Array[] = [];
    for await (const piece of flow.pieces(true)) pieces.push(piece.slice());
    const got = decoder.decode(Buffer.concat(pieces));
    expect(got).not.toMatch(/[\r\n]/);
    expect(got).toHaveLength(text.length);
    expect(JSON.parse(got)).toEqual(JSON.parse(text));
  });

  it("says what a break is to the client as the relay maps it", async () => {
    const { start } = await started(answer(4, 300_000, '"}],}}'), 4);
    const flow = (start as { flow: ResponseFlow }).flow;
    flow.mapErrors((error) => new Error(`mapped: ${(error as Error).message}`));
    const got = await drain(flow);
    expect(String(got.error)).toMatch(/^Error: mapped: sent an answer that is not/);
    const end = await flow.ended;
    expect(!end.ok && end.error).toBe(got.error);
  });
});
