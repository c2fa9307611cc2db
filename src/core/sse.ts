/**
 * Server-Sent Events, both ways: reading an upstream's `text/event-stream` as it
 * arrives (on its bytes: sse-bytes.ts), and framing messages for the client.
 *
 * Framing keeps bytes: a data payload with line breaks is written as several `data:`
 * lines, which a reader joins back with "\n" into the same text.
 */
import type { OutgoingMessage } from "./jsonrpc";
import { piecesText } from "./pieces";
import { readSseEvents } from "./sse-bytes";

/**
 * One event; `id` and `retry` are the stream's values in force when it was dispatched.
 * An event whose data is too long to hold comes with `large`: its data as a byte stream
 * (and `data` empty), read from the same connection. The next event is read after that
 * stream is finished.
 */
export type SseEvent = {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
  readonly retry?: number;
  readonly large?: ReadableStream<Uint8Array>;
};

/** Data values are decoded alone: a BOM at a value's start is a character of it. */
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** The text of an event's data lines, joined with "\n" as the SSE spec joins them. */
export function dataText(data: readonly Uint8Array[]): string {
  return data.length === 1 ? decoder.decode(data[0]) : data.map((value) => decoder.decode(value)).join("\n");
}

/**
 * Yields each event of an SSE body, its data decoded, as soon as its terminating blank
 * line arrives. Events without data (a "priming" event that only sets `id` and `retry`)
 * are yielded too, with empty `data`, so a reader can resume from their id. A data line
 * that would take the event's data past `largeBytes` is not collected: the event is
 * yielded with `large` as soon as that is known.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  largeBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<SseEvent> {
  for await (const event of readSseEvents(body, largeBytes)) {
    const { id, retry, large, line } = event;
    yield {
      event: event.event,
      // A line read in pieces is decoded piece by piece: its pieces are not joined for it.
      data: line ? piecesText(line, { ignoreBOM: true }) : dataText(event.data),
      ...(id !== undefined ? { id } : {}),
      ...(retry !== undefined ? { retry } : {}),
      ...(large !== undefined ? { large } : {}),
    };
  }
}

const encoder = new TextEncoder();

/** One `message` event carrying a JSON-RPC message's text. */
export function sseFrame(text: string, id?: string): Uint8Array {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  // JSON text seldom has a raw line break: one copy instead of split, map and join.
  if (!/[\r\n]/.test(text)) return encoder.encode(`event: message\n${idLine}data: ${text}\n\n`);
  const dataLines = text
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join("");
  return encoder.encode(`event: message\n${idLine}${dataLines}\n`);
}

const EVENT_PREFIX = encoder.encode("event: message\ndata: ");
const LF = 0x0a;

/**
 * One `message` event carrying a message toward the client: its text framed as
 * `sseFrame` does, or a notification's JSON bytes (one line: they came as one data line)
 * copied behind the same prefix, exactly as framing their text would write them.
 */
export function messageFrame(message: OutgoingMessage): Uint8Array {
  if (typeof message === "string") return sseFrame(message);
  const frame = new Uint8Array(EVENT_PREFIX.byteLength + message.bytes.byteLength + 2);
  frame.set(EVENT_PREFIX);
  frame.set(message.bytes, EVENT_PREFIX.byteLength);
  frame[frame.length - 2] = LF;
  frame[frame.length - 1] = LF;
  return frame;
}

/** A comment line; keeps intermediaries from closing an idle stream. */
export const SSE_KEEPALIVE = encoder.encode(": keepalive\n\n");

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};
