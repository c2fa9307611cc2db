/**
 * Writing an SSE answer to the client without a new buffer per message. A stream made in
 * JS hands workerd a new ArrayBuffer per chunk, and those are freed only when a collection
 * finds them: relaying 150 MiB of notifications at full speed grew the isolate by about
 * 40 MB through one, by about 24 MB through this (docs/benchmarks.md). Here each message
 * is framed into one buffer kept for the whole answer and written through an
 * IdentityTransformStream, whose write resolves once the client's side has taken the
 * bytes: the buffer is then free for the next message, and the writer goes at the
 * client's pace.
 *
 * Such a stream tells its writer that the reader went away only when a write fails. So
 * while nothing is being written, a keepalive comment goes out every
 * `ANSWER_KEEPALIVE_INTERVAL_MS`: the answer notices a closed stream within that time
 * (2026-07-28 cancels a request that way), and intermediaries keep the stream open.
 */
import type { JsonRpcId, OutgoingMessage } from "../../core/jsonrpc";
import { SSE_KEEPALIVE, sseFrame } from "../../core/sse";
import { writeSlices } from "../../core/pieces";
import { ResponseBytes } from "../../core/response-bytes";
import { ResponseFlow } from "../../core/response-flow";
import { errorTextOf } from "../../core/errors";

/** How often an answer that is writing nothing checks, by a keepalive comment, that its client still reads. */
export const ANSWER_KEEPALIVE_INTERVAL_MS = 1_000;
/** The buffer messages are framed into; a larger one is written from its own memory. */
const FRAME_BUFFER_BYTES = 256 * 1024;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_PER_UNIT = 3;

const encoder = new TextEncoder();
const EVENT_PREFIX = encoder.encode("event: message\ndata: ");
const EVENT_END = encoder.encode("\n\n");
/**
 * Ends an event whose data broke off (a flow cut short): its type is no longer `message`,
 * so a client discards it (the MCP SDKs read only `message` events) before the error that follows.
 */
const EVENT_DISCARDED = encoder.encode("\nevent: incomplete\n\n");

/** The SSE body of one answer, written a message at a time; `gone` once its client stopped reading. */
export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly frame = new Uint8Array(FRAME_BUFFER_BYTES);
  private readonly timer: ReturnType<typeof setInterval>;
  /** A write is under way: a keepalive would only queue behind it (and that write fails if the client went away). */
  private busy = false;
  /** A keepalive not yet taken: a client that stopped reading gets no second one queued behind it. */
  private keepalivePending = false;
  private goneReported = false;

  /** `gone` is called once, when a write fails because the client no longer reads. */
  constructor(private readonly gone: () => void) {
    const { readable, writable } = new IdentityTransformStream();
    this.body = readable;
    this.writer = writable.getWriter();
    this.timer = setInterval(() => {
      if (this.busy || this.keepalivePending) return;
      this.keepalivePending = true;
      void this.write(SSE_KEEPALIVE)
        .catch(() => {})
        .finally(() => (this.keepalivePending = false));
    }, ANSWER_KEEPALIVE_INTERVAL_MS);
  }

  /**
   * Writes `message` as one `message` event (text framed as `sseFrame` frames it, a
   * notification's bytes or an answer's, on one line, behind the same prefix); `framed` is called as soon as its bytes
   * are no longer needed. Rejects when the client went away.
   */
  async message(message: OutgoingMessage | ResponseBytes, framed: () => void = () => {}): Promise<void> {
    this.busy = true;
    try {
      if (message instanceof ResponseBytes) return await this.pieces(message.pieces);
      const bytes = typeof message === "string" ? undefined : message.bytes;
      const length = bytes === undefined ? this.frameText(message as string) : this.frameBytes(bytes);
      if (length >= 0) {
        framed();
        return await this.write(this.frame.subarray(0, length));
      }
      if (bytes === undefined) {
        const text = message as string;
        if (/[\r\n]/.test(text)) return await this.write(sseFrame(text));
        // Larger than the buffer: its own bytes between the prefix and the end, not encoded from a concatenated copy.
        await this.write(EVENT_PREFIX);
        await this.write(encoder.encode(text));
        return await this.write(EVENT_END);
      }
      // Larger than the buffer: written from the upstream's bytes themselves, free once written.
      await this.pieces([bytes]);
      framed();
    } finally {
      this.busy = false;
      framed();
    }
  }

  /**
   * The answer to request `id` as one event: as `message` writes it, or a flow's pieces as
   * they come. A flow that breaks off is discarded (EVENT_DISCARDED) and the request is
   * answered with the error instead. Rejects when the client went away.
   */
  async answer(body: string | ResponseBytes | ResponseFlow, id: JsonRpcId): Promise<void> {
    if (!(body instanceof ResponseFlow)) return this.message(body);
    this.busy = true;
    try {
      await this.write(EVENT_PREFIX);
      const pieces = body.pieces(true);
      for (;;) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await pieces.next();
        } catch (error) {
          await this.write(EVENT_DISCARDED);
          this.busy = false;
          return await this.message(errorTextOf(error, id));
        }
        if (next.done) break;
        try {
          await this.write(next.value);
        } catch (error) {
          await pieces.return(undefined);
          throw error;
        }
      }
      await this.write(EVENT_END);
    } finally {
      this.busy = false;
    }
  }

  /** One event whose data is `pieces` (on one line), each written from its own memory, in pieces as a large JSON answer goes (core/byte-reads.ts). */
  private async pieces(pieces: readonly Uint8Array[]): Promise<void> {
    await this.write(EVENT_PREFIX);
    for (const slice of writeSlices(pieces)) await this.write(slice);
    await this.write(EVENT_END);
  }

  /** Ends the answer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.writer.close();
  }

  /** Stops writing: the client is gone (or the answer failed). */
  abandon(): void {
    clearInterval(this.timer);
    this.writer.abort().catch(() => {});
  }

  /** The frame of `text` in the buffer, its length; -1 when it may not fit or has line breaks (`sseFrame` writes those). */
  private frameText(text: string): number {
    if (
      EVENT_PREFIX.length + text.length * MAX_UTF8_PER_UNIT + EVENT_END.length > this.frame.length ||
      /[\r\n]/.test(text)
    )
      return -1;
    this.frame.set(EVENT_PREFIX);
    const { written } = encoder.encodeInto(text, this.frame.subarray(EVENT_PREFIX.length));
    this.frame.set(EVENT_END, EVENT_PREFIX.length + written);
    return EVENT_PREFIX.length + written + EVENT_END.length;
  }

  /** The frame of a notification's bytes (one line) in the buffer, its length; -1 when it does not fit. */
  private frameBytes(bytes: Uint8Array): number {
    const length = EVENT_PREFIX.length + bytes.length + EVENT_END.length;
    if (length > this.frame.length) return -1;
    this.frame.set(EVENT_PREFIX);
    this.frame.set(bytes, EVENT_PREFIX.length);
    this.frame.set(EVENT_END, EVENT_PREFIX.length + bytes.length);
    return length;
  }

  private async write(bytes: Uint8Array): Promise<void> {
    try {
      await this.writer.write(bytes);
    } catch (error) {
      clearInterval(this.timer);
      if (!this.goneReported) {
        this.goneReported = true;
        this.gone();
      }
      throw error;
    }
  }
}
