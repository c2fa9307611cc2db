/**
 * Reading an upstream's answer: a JSON body (one message, a batch, or messages one per
 * line) or an SSE stream turned into JSON-RPC
 * messages, each held whole only up to a bound (a larger one goes to the large-answer
 * consumer, offload, or fails the request); an upstream's unreadable or error text goes
 * to the log with secrets redacted, never to the client.
 */
import type { JsonRpcId, WireMessage } from "../core/jsonrpc";
import { elements, rootSpan } from "../core/raw-json";
import { dataText } from "../core/sse";
import { DATA_LINE_COST_BYTES, readSseEvents } from "../core/sse-bytes";
import { notificationHead, type NotificationHead } from "../core/json-bytes";
import { jsonValues, JsonValuesError } from "../core/json-values";
import { readUpstreamMessage } from "../core/validate-message";
import { afterHeld, byteReader, readableOf, type ByteReader } from "../core/byte-reads";
import { piecesLength, piecesText } from "../core/pieces";
import { redactedStart } from "../config/secrets";
import { UpstreamBreak, type BodyGuard } from "./deadlines";
import { byteWireOf, FlowWire, PASS_THROUGH_MIN_BYTES } from "./byte-answer";
import { ResponseFlow } from "../core/response-flow";

/** The largest upstream message held in memory whole (lists, reads, prompts; tool results past it go to offload). */
export const MAX_HELD_MESSAGE_BYTES = 16 * 1024 * 1024;
/** How much of an upstream's unreadable or error body goes to the log (never to the client). */
export const MAX_ERROR_BODY_CHARS = 300;
/** Bytes of an error body read for the log before the rest is cancelled. */
export const MAX_ERROR_BODY_BYTES = 4 * 1024;
/** Of a refusal that may be a JSON-RPC error answering the request (HTTP 400/404), this much is read to tell. */
export const MAX_ERROR_ANSWER_BYTES = 64 * 1024;

/**
 * The body's length in bytes as its headers declare it, or NaN when they do not say: no
 * Content-Length (a chunked body), one that is not a number, or a Content-Encoding. fetch
 * decodes a gzip/deflate/br body but keeps its Content-Length, which then counts the
 * encoded bytes: a small one may inflate a thousandfold. Beside a Transfer-Encoding the
 * length says nothing either: HTTP/1.1 frames such a body by its chunks and ignores it
 * (RFC 9112, 6.3), and fetch keeps the header.
 */
export function declaredLength(response: Response): number {
  if (response.headers.has("transfer-encoding")) return Number.NaN;
  const encoding = response.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") return Number.NaN;
  const length = response.headers.get("content-length")?.trim();
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : Number.NaN;
}

/** What a fetch sends as a header value whatever the runtime: printable ASCII and tabs. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** Where an SSE stream can be resumed from: its last event id and the retry delay it asked for. */
export type ResumePoint = { lastEventId?: string; retryMs?: number };

/**
 * Takes a message of at least `minBytes` as a byte stream instead of holding it, and
 * returns the text of the message that stands for it (offload's compact answer).
 */
export type LargeAnswerConsumer = {
  readonly minBytes: number;
  readonly take: (body: ReadableStream<Uint8Array>) => Promise<string>;
};

/**
 * A call's consumer of large answers (offload, filters, guardrails), told `id`: the request whose answer is read, as
 * the upstream got it (a 2026-07-28 client's goes under an id of the gateway's). Its stand-in answers that request.
 * One that reads the message answers with the message's own id (offload: an answer to another request is then dropped
 * as any stray); one that withholds it unread answers `id`, so a large SSE event ends the call whatever it was
 * (without a consumer it fails the call).
 */
export type LargeAnswerTaker = {
  readonly minBytes: number;
  readonly take: (body: ReadableStream<Uint8Array>, id: JsonRpcId) => Promise<string>;
};

/** `taker` as the consumer of the answer to request `id`. */
export function answering(taker: LargeAnswerTaker, id: JsonRpcId): LargeAnswerConsumer {
  return { minBytes: taker.minBytes, take: (body) => taker.take(body, id) };
}

/**
 * Takes a notification of an SSE answer as the upstream's bytes, never decoded (`bytes`,
 * its JSON text, are valid only until the returned promise settles), with what was read
 * of it; answers false for one it wants read as a message after all (one it would change).
 */
export type NotificationPass = (bytes: Uint8Array, head: NotificationHead) => Promise<boolean>;

/** Where upstream text may be logged: the upstream's name, and the env whose secrets are redacted. */
export type LogContext = { readonly upstream: string; readonly env: Readonly<Record<string, unknown>> };

export function logUpstreamText(where: LogContext, what: string, text: string): void {
  console.warn(
    `mcp-edge-gateway: upstream "${where.upstream}" ${what}: ${redactedStart(text, MAX_ERROR_BODY_CHARS, where.env)}`,
  );
}

/** The first block a body held whole is read into; each next one twice as large, up to READ_BLOCK_MAX_BYTES. */
const READ_BLOCK_MIN_BYTES = 64 * 1024;
const READ_BLOCK_MAX_BYTES = 1024 * 1024;

/**
 * Reads a body up to `limit` bytes, held as the blocks it was read into: each block is
 * read straight into (no copy of what was read) until full, and they are never joined
 * (a 10 MiB answer: fourteen blocks, none copied; it was 160 chunks copied out of the
 * reader's buffer, then all of them into one array). Past the limit, returns what was read
 * (one byte past it) and the reader of the rest instead of holding it (`bodyAfter`).
 */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ pieces: Uint8Array[]; length: number } | { over: BodyRest }> {
  const reader = byteReader(body);
  const pieces: Uint8Array[] = [];
  let length = 0;
  let size = READ_BLOCK_MIN_BYTES;
  let block: Uint8Array = new Uint8Array(size);
  let filled = 0;
  for (;;) {
    // Never more than one byte past the limit: what is held stays within it (and the byte that says it is over).
    const want = Math.min(size - filled, limit + 1 - length);
    const { value, done } = await reader.readInto(block.subarray(filled, filled + want), want);
    // A BYOB read moves the block's memory to `value`'s buffer (`block` is then empty)
    // (the view of the end may be empty at offset 0): the block is that whole buffer.
    if (value) block = new Uint8Array(value.buffer, 0, size);
    const read = value?.byteLength ?? 0;
    filled += read;
    length += read;
    // Cancelled mid-read: the block went with the read, and what it held is lost (the body reads as cut short).
    if (!value) {
      filled = 0;
      break;
    }
    if (done || read === 0) break;
    if (length > limit) return { over: { held: [...pieces, block.subarray(0, filled)], reader } };
    if (filled === size) {
      pieces.push(block);
      size = Math.min(size * 2, READ_BLOCK_MAX_BYTES);
      block = new Uint8Array(size);
      filled = 0;
    }
  }
  if (filled > 0) pieces.push(block.subarray(0, filled));
  return { pieces, length };
}

/** A body read in part: what was read of it, and the reader of the rest. */
export type BodyRest = { readonly held: Uint8Array[]; readonly reader: ByteReader };

/** The whole body of `rest` as a byte stream (a reader with its own buffer, offload's, gets the rest read into it). */
function bodyAfter(rest: BodyRest): ReadableStream<Uint8Array> {
  return readableOf(afterHeld(rest.held, rest.reader));
}

/** A protocol break as the error that `upstreamMessages` turns into a `bad-response` failure. */
export function badResponse(upstream: string, detail: string): UpstreamBreak {
  return new UpstreamBreak({ reason: "bad-response", upstream, detail });
}

/** An answer the gateway would have to hold whole (one that offload cannot take) but is too large to. */
function tooLarge(upstream: string): UpstreamBreak {
  return badResponse(
    upstream,
    `sent a message larger than ${MAX_HELD_MESSAGE_BYTES} bytes (each data line of an SSE event after its first counted ${DATA_LINE_COST_BYTES} bytes more), more than the gateway holds in memory (only tool results may be larger: they are offloaded)`,
  );
}

/**
 * Runs `read`, reporting a deadline that ended the body as its `timeout` failure whatever
 * error the reader saw (a pipe may hand on its own error instead of the guard's).
 */
export async function* deadlineAware(read: AsyncGenerator<WireMessage>, guard: BodyGuard): AsyncGenerator<WireMessage> {
  try {
    yield* read;
  } catch (error) {
    if (guard.broke.failure) throw new UpstreamBreak(guard.broke.failure);
    throw error;
  }
}

/**
 * The messages of an `application/json` body: one message, a batch's array (2025-03-26),
 * or messages one after another (newline-delimited, as a 2026-07-28 server may answer a
 * call or a listen). An answer is read whole (offload may take it as a stream) and split
 * only when it is not one message; a stream that stays open (`open`: a listen) is split as
 * it arrives, so its messages reach the listener while its body goes on.
 */
export async function* jsonMessages(
  response: Response,
  body: ReadableStream<Uint8Array>,
  guard: BodyGuard,
  where: LogContext,
  large?: LargeAnswerConsumer,
  open = false,
  flowId?: JsonRpcId,
): AsyncGenerator<WireMessage> {
  const declared = declaredLength(response);
  if (open) {
    try {
      for await (const text of jsonValues(body, MAX_HELD_MESSAGE_BYTES)) yield* messagesOf(text, where);
    } catch (error) {
      if (!(error instanceof JsonValuesError)) throw error;
      if (error.reason === "too-large") throw tooLarge(where.upstream);
      throw notJson(where, error.text);
    }
    return;
  }
  let held: { pieces: Uint8Array[]; length: number };
  // A body that says it is small is read whole; one that is (or may be) large, chunk by chunk.
  if (large && !(declared <= large.minBytes)) {
    const read = await readBounded(body, large.minBytes);
    if ("over" in read) {
      // Handed on as a stream (offload): from here only the idle deadline applies.
      guard.deadline?.disarm();
      return yield* wholeBodyMessages(await large.take(bodyAfter(read.over)), where);
    }
    held = read;
  } else if (flowId !== undefined && !(declared <= PASS_THROUGH_MIN_BYTES)) {
    // An answer no layer reads: a large one flows to the client as it comes, when it starts as a plain response.
    const read = await readBounded(body, PASS_THROUGH_MIN_BYTES);
    if ("over" in read) {
      const started = await ResponseFlow.start(read.over.held, read.over.reader, flowId);
      if ("flow" in started) {
        // From here only the idle deadline applies: the client's pace is the flow's.
        guard.deadline?.disarm();
        yield new FlowWire(started.flow);
        return;
      }
      held = await heldWhole(bodyAfter({ held: started.held, reader: read.over.reader }), where);
    } else held = read;
  } else held = await heldWhole(body, where);
  yield* bytesMessages(held.pieces, held.length, where);
}

/** `body` read whole, within MAX_HELD_MESSAGE_BYTES (past it, the body is cancelled and the answer fails). */
async function heldWhole(
  body: ReadableStream<Uint8Array>,
  where: LogContext,
): Promise<{ pieces: Uint8Array[]; length: number }> {
  const read = await readBounded(body, MAX_HELD_MESSAGE_BYTES);
  if ("over" in read) {
    await read.over.reader.cancel();
    throw tooLarge(where.upstream);
  }
  return read;
}

/** The messages of a whole JSON body's bytes: a large success response kept as its bytes (byte-answer.ts), else read as text. */
export async function* bytesMessages(
  pieces: readonly Uint8Array[],
  length: number,
  where: LogContext,
): AsyncGenerator<WireMessage> {
  const wire = byteWireOf(pieces, length);
  if (wire) yield wire;
  else yield* wholeBodyMessages(piecesText(pieces), where);
}

/**
 * The messages of a whole JSON body's text: one message, or several (newline-delimited,
 * or a batch's array), each with the upstream's own bytes.
 */
export async function* wholeBodyMessages(text: string, where: LogContext): AsyncGenerator<WireMessage> {
  const message = readUpstreamMessage(text);
  if (message) {
    yield message;
    return;
  }
  // Several messages in one whole body (newline-delimited, or a batch's array).
  try {
    for await (const value of jsonValues(new Blob([text]).stream(), MAX_HELD_MESSAGE_BYTES))
      yield* messagesOf(value, where);
  } catch (error) {
    if (!(error instanceof JsonValuesError)) throw error;
    throw notJson(where, text);
  }
}

/** A body that is not JSON: its start goes to the log, a reason to the client. */
function notJson(where: LogContext, text: string): UpstreamBreak {
  logUpstreamText(where, "answered with a body that is not JSON", text);
  return badResponse(where.upstream, "answered with a body that is not JSON (the gateway's log has its start)");
}

/** The messages of one JSON text: itself, or each element of a batch's array. */
function* messagesOf(text: string, where: LogContext): Generator<WireMessage> {
  const message = readUpstreamMessage(text);
  if (message) {
    yield message;
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw notJson(where, text);
  }
  if (!Array.isArray(parsed)) throw badResponse(where.upstream, "answered with JSON that is not a JSON-RPC message");
  // Each element keeps the upstream's own bytes (re-serialised, `1.0` or a large integer would change).
  for (const span of elements(text, rootSpan(text))) {
    const wire = readUpstreamMessage(text.slice(span.start, span.end));
    if (wire) yield wire;
  }
}

/**
 * The messages of an SSE body. A notification on one data line goes to `pass` first, as
 * the upstream's bytes, when it is a plain one (core/json-bytes.ts); it is read as a
 * message only when `pass` does not take it.
 */
export async function* sseMessages(
  body: ReadableStream<Uint8Array>,
  where: LogContext,
  resume: ResumePoint,
  large?: LargeAnswerConsumer,
  pass?: NotificationPass,
  flowId?: JsonRpcId,
): AsyncGenerator<WireMessage> {
  // An answer no layer reads: an event past PASS_THROUGH_MIN_BYTES comes as a stream, to flow to the client.
  const bound = large?.minBytes ?? (flowId !== undefined ? PASS_THROUGH_MIN_BYTES : MAX_HELD_MESSAGE_BYTES);
  for await (const event of readSseEvents(body, bound)) {
    // An id that cannot be sent back as a Last-Event-ID header (not printable ASCII) leaves nothing to resume from.
    if (event.id !== undefined) resume.lastEventId = HEADER_VALUE.test(event.id) ? event.id : undefined;
    if (event.retry !== undefined) resume.retryMs = event.retry;
    // Priming events (an id and a retry delay, no data) only mark a resume point.
    if (
      event.event !== "message" ||
      (!event.large &&
        !event.line &&
        (event.data.length === 0 || (event.data.length === 1 && event.data[0]!.byteLength === 0)))
    )
      continue;
    if (event.large && !large) {
      if (flowId === undefined) {
        await event.large.cancel();
        throw tooLarge(where.upstream);
      }
      const reader = byteReader(event.large);
      const started = await ResponseFlow.start([], reader, flowId);
      if ("flow" in started) {
        yield new FlowWire(started.flow);
        return;
      }
      // Not a plain response's start (a notification, an error): read whole as any other event, within the bound.
      const held = await heldWhole(bodyAfter({ held: started.held, reader }), where);
      yield eventMessage(piecesText(held.pieces), where);
      continue;
    }
    // A large answer on one data line is kept as the pieces it was read in (byte-answer.ts).
    const wire = event.line && byteWireOf(event.line, piecesLength(event.line));
    if (wire) {
      yield wire;
      continue;
    }
    // Read once: a line read in pieces is joined for it.
    const data = event.large ? [] : event.data;
    const line = data.length === 1 ? data[0]! : undefined;
    const head = pass && line ? notificationHead(line) : undefined;
    if (head && (await pass!(line!, head))) continue;
    yield eventMessage(event.large ? await large!.take(event.large) : dataText(data), where);
  }
}

/** An SSE event's data as the message it must be. */
function eventMessage(text: string, where: LogContext): WireMessage {
  const message = readUpstreamMessage(text);
  if (!message) {
    logUpstreamText(where, "sent an SSE event that is not a JSON-RPC message", text);
    throw badResponse(
      where.upstream,
      "sent an SSE event that is not a JSON-RPC message (the gateway's log has its start)",
    );
  }
  return message;
}

/** The start of an error body, for the log; the rest is cancelled. */
export async function errorBodyStart(
  body: ReadableStream<Uint8Array>,
  maxBytes = MAX_ERROR_BODY_BYTES,
): Promise<string> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < maxBytes) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.length;
    }
  } catch {
    // A body that breaks off (or misses its deadline) has said what it will say.
  } finally {
    reader.cancel().catch(() => {});
  }
  return piecesText(chunks);
}
