/**
 * The small-answer path: an upstream's JSON answer to a POST is read straight from the
 * fetch body while it stays small (the common tool call), not through the guard every
 * other body gets (deadlines.ts: a timer and a race per read, a BYOB reader with its
 * 64 KiB buffer, and a reader to gather the chunks). Profiled on a small tools/call, that
 * machinery was the largest share of the gateway's own JavaScript (on 329f067, before the
 * guard read its body directly).
 *
 * It is taken only where it cannot change what happens:
 * - the answer deadline is armed (a JSON answer keeps it) and the idle deadline could not
 *   fire before it (`idleTimeoutMs >= timeoutMs`, the defaults): the answer deadline
 *   aborts the fetch, and the read fails with the same `timeout` failure as on the stream
 *   path. With a shorter idle deadline the caller takes the stream path, which restarts
 *   it per chunk;
 * - a body that declares a Content-Length of at most SMALL_ANSWER_BYTES, and no
 *   Content-Encoding, is read in one `arrayBuffer()` (the runtime holds a fetch body to its
 *   declared length: the HTTP framing; a decoded body is not held to it); any other is
 *   read chunk by chunk, and once it holds more than
 *   SMALL_ANSWER_BYTES it goes on as the stream path does (guarded, offload's or bounded),
 *   the chunks read so far first. The bound is under every bound the stream path applies
 *   (MAX_HELD_MESSAGE_BYTES, offload's `minBytes`, which the caller checks).
 */
import { afterHeld, byteReader, readableOf } from "../core/byte-reads";
import { piecesText } from "../core/pieces";
import type { JsonRpcId, WireMessage } from "../core/jsonrpc";
import { guardBody, UpstreamBreak, type BodyGuard } from "./deadlines";
import type { UpstreamFailure } from "./failures";
import { readUpstreamMessage } from "../core/validate-message";
import {
  deadlineAware,
  jsonMessages,
  wholeBodyMessages,
  type LargeAnswerConsumer,
  type LogContext,
} from "./reply-body";

/** The most of a JSON answer read straight from the fetch body (a larger one goes on as a guarded stream). */
export const SMALL_ANSWER_BYTES = 64 * 1024;

/** What decides whether an answer takes the small-answer path. */
export type SmallAnswerCheck = {
  /** The answer's length as its headers declare it (`declaredLength`: NaN for a chunked or encoded body). */
  readonly declared: number;
  /** Answers at least this large go to the large-answer consumer (offload), which reads them as a stream. */
  readonly largeMinBytes: number | undefined;
  /** The answer deadline's length. */
  readonly timeoutMs: number;
  /** The idle deadline's, when the body has one. */
  readonly idleMs: number | undefined;
};

/** True when the answer may take the small-answer path (see the header): the caller has checked it is a JSON answer to a POST. */
export function isSmallAnswer({ declared, largeMinBytes, timeoutMs, idleMs }: SmallAnswerCheck): boolean {
  if (idleMs !== undefined && idleMs < timeoutMs) return false;
  if (Number.isNaN(declared)) return largeMinBytes === undefined || SMALL_ANSWER_BYTES < largeMinBytes;
  return declared <= SMALL_ANSWER_BYTES && (largeMinBytes === undefined || declared <= largeMinBytes);
}

/**
 * The messages of a JSON answer that passed `isSmallAnswer` (`declared`: the length it was
 * checked with); a missed deadline fails as on
 * the stream path. One message (nearly every answer) is yielded from here, without the
 * generators a batch or newline-delimited messages go through.
 */
export async function* smallAnswerMessages(
  response: Response,
  body: ReadableStream<Uint8Array>,
  declared: number,
  guard: BodyGuard,
  where: LogContext,
  large: LargeAnswerConsumer | undefined,
  flowId?: JsonRpcId,
): AsyncGenerator<WireMessage> {
  // Only a declared length (`declaredLength`) bounds what arrayBuffer() holds (a chunked or encoded body is counted as it is read).
  const read = await underDeadline<ArrayBuffer | Start>(
    Number.isNaN(declared) ? readStart(body) : response.arrayBuffer(),
    guard,
  );
  if (!(read instanceof ArrayBuffer) && "rest" in read) {
    // Larger than it looked: the rest as the stream path reads it, under both deadlines again.
    return yield* deadlineAware(
      jsonMessages(response, guardBody(read.rest, guard), guard, where, large, false, flowId),
      guard,
    );
  }
  guard.deadline?.disarm();
  const text = read instanceof ArrayBuffer ? piecesText([new Uint8Array(read)]) : read.text;
  guard.received.bytes += read instanceof ArrayBuffer ? read.byteLength : read.bytes;
  const message = readUpstreamMessage(text);
  if (message) yield message;
  else yield* wholeBodyMessages(text, where);
}

type Start = { readonly text: string; readonly bytes: number } | { readonly rest: ReadableStream<Uint8Array> };

/** The whole body when it ends within SMALL_ANSWER_BYTES, else a stream of it all (what was read, then the rest). */
async function readStart(body: ReadableStream<Uint8Array>): Promise<Start> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: piecesText(chunks), bytes: length };
    if (value.byteLength === 0) continue; // held and handed on, an empty chunk would read as the end
    chunks.push(value);
    length += value.byteLength;
    if (length > SMALL_ANSWER_BYTES) {
      // The rest is read into the reader's memory (core/byte-reads.ts), as on the stream path.
      reader.releaseLock();
      return { rest: readableOf(afterHeld(chunks, byteReader(body))) };
    }
  }
}

/** `read`, failing with the answer deadline's `timeout` failure when the deadline passes first (it also aborts the fetch); disarms the deadline on a failure. */
async function underDeadline<T>(read: Promise<T>, guard: BodyGuard): Promise<T> {
  const deadline = guard.deadline;
  const late = (): UpstreamBreak => {
    const failure: UpstreamFailure = {
      reason: "timeout",
      upstream: guard.upstream,
      timeoutMs: deadline!.timeoutMs,
      waited: "answer",
    };
    guard.broke.failure = failure;
    return new UpstreamBreak(failure);
  };
  try {
    return await (deadline ? Promise.race([read, deadline.expired.then(() => Promise.reject(late()))]) : read);
  } catch (error) {
    deadline?.disarm();
    // The fetch was aborted by the answer deadline: report that, not the abort.
    if (deadline?.fired) throw late();
    throw error;
  }
}
