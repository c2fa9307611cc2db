/**
 * A plain success response passed on while it arrives (issue 38): the upstream's bytes are
 * checked as they come (core/response-check.ts) and handed to the client's stream piece by
 * piece, at the client's pace, so that the upstream's writing and the client's reading
 * overlap as through a forwarding Worker. The relay starts one only for an answer no
 * layer reads (context/answer.ts, `Answer.ofFlow`), once at least FLOW_HEAD_BYTES of it
 * read as the start of a plain response to the request; anything that then breaks it (the
 * body cut short, a deadline, bytes that are not a plain response, an answer to another
 * id) ends the client's stream with an error where it stands, the last piece never sent
 * (it waits for the end's check): the front makes that a cut JSON body or, on an SSE
 * answer, an event no client dispatches as a message followed by the JSON-RPC error
 * (front/http/sse-writer.ts).
 */
import type { ByteReader, IntoResult } from "./byte-reads";
import type { JsonRpcId } from "./jsonrpc";
import { ResponseCheck, type ResponseLayout } from "./response-check";

/** What is read of a response before it may flow: a start that does not read as a plain response is held and read whole instead. */
export const FLOW_HEAD_BYTES = 64 * 1024;
/**
 * The rest is read into blocks of this size, each handed to the client's stream once it
 * holds FLOW_PIECE_BYTES (or the body ended) and never reused: an upstream's body comes in
 * reads of a few KiB, and each piece handed on costs a turn of every stream on the way.
 */
const FLOW_READ_BYTES = 64 * 1024;
const FLOW_PIECE_BYTES = 32 * 1024;
const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;

/** How a flow ended: the response's layout and length, or the error that broke it off. */
export type FlowEnd =
  | { readonly ok: true; readonly layout: ResponseLayout; readonly byteLength: number }
  | { readonly ok: false; readonly error: unknown; readonly byteLength: number };

/** Bytes that broke off a flow for what they are (not a plain response, or not the answer expected). */
export class FlowBreak extends Error {
  override readonly name = "FlowBreak";
  /** `byClient`: the client went away (or stopped reading), which says nothing of the upstream. */
  constructor(
    message: string,
    readonly byClient = false,
  ) {
    super(message);
  }
}

/** The start of a body read for a flow: the flow, or (its start not a plain response's) what was read, to be held. */
export type FlowStart = { readonly flow: ResponseFlow } | { readonly held: Uint8Array[] };

/** A response flowing from an upstream's body to the client's (see the header). */
export class ResponseFlow {
  /** Settles once the flow ended, whether it went through or broke off. */
  readonly ended: Promise<FlowEnd>;
  #settle!: (end: FlowEnd) => void;
  #settled = false;
  #head: Uint8Array[];
  #length: number;
  #started = false;
  #errorOf: (error: unknown) => unknown = (error) => error;

  private constructor(
    private readonly check: ResponseCheck,
    head: Uint8Array[],
    length: number,
    private readonly reader: ByteReader,
    private readonly id: JsonRpcId,
  ) {
    this.#head = head;
    this.#length = length;
    this.ended = new Promise((settle) => (this.#settle = settle));
  }

  /**
   * Reads the start of a response to request `id` (`held`, what was read already, then
   * `reader`) until FLOW_HEAD_BYTES are checked: a flow when they read as the start of a
   * plain success response, else what was read (the rest is still `reader`'s).
   */
  static async start(held: Uint8Array[], reader: ByteReader, id: JsonRpcId): Promise<FlowStart> {
    const check = new ResponseCheck();
    const head: Uint8Array[] = [];
    let length = 0;
    for (const piece of held) {
      check.push(piece);
      head.push(piece);
      length += piece.byteLength;
    }
    while (length < FLOW_HEAD_BYTES && !check.failed) {
      const { value } = await reader.readInto(new Uint8Array(FLOW_HEAD_BYTES - length));
      if (!value || value.byteLength === 0) return { held: head };
      check.push(value);
      head.push(value);
      length += value.byteLength;
    }
    // An answer to another request (its id read already) is read whole, to be dropped as any stray.
    const answered = check.idRaw;
    if (check.failed || (answered !== undefined && JSON.parse(answered) !== id)) return { held: head };
    return { flow: new ResponseFlow(check, head, length, reader, id) };
  }

  /** Says what a break is to the client (the relay's failure for it): `pieces` throws, and `ended` holds, that instead. */
  mapErrors(errorOf: (error: unknown) => unknown): void {
    this.#errorOf = errorOf;
  }

  /**
   * The pieces, each checked before it is handed on; throws what broke the flow off. Read
   * once. `oneLine`: for an SSE event's data line, a line break (between tokens, where the
   * text may have one) is handed on as a space, the same JSON.
   */
  async *pieces(oneLine = false): AsyncGenerator<Uint8Array> {
    if (this.#started) throw new Error("a response flow is read once");
    this.#started = true;
    const out = (piece: Uint8Array) => (oneLine && this.check.lineBreaks ? spaced(piece) : piece);
    /**
     * The read under way: the next one starts before a piece is handed on, so the client's
     * writing and the upstream's reading overlap. It may fail while nobody awaits it (the
     * client takes its time): the failure is taken when it is awaited.
     */
    const readInto = (into: Uint8Array): Promise<IntoResult> => {
      const read = this.reader.readInto(into);
      read.catch(() => {});
      return read;
    };
    let reading: Promise<IntoResult> | undefined;
    try {
      let block: Uint8Array = new Uint8Array(FLOW_READ_BYTES);
      let filled = 0;
      /** The last full piece, handed on once more bytes show the answer goes on: the end's are checked before they go. */
      let ready: Uint8Array | undefined;
      reading = readInto(block);
      while (this.#head.length > 0) yield out(this.#head.shift()!);
      for (;;) {
        const { value } = await reading;
        reading = undefined;
        if (!value) throw new FlowBreak("the answer's reading was cancelled");
        // A BYOB read moves the block's memory to `value`'s buffer, the end's too (its empty view may be at 0):
        // the block is that buffer, what it held kept.
        block = new Uint8Array(value.buffer, 0, FLOW_READ_BYTES);
        if (value.byteLength === 0) break;
        this.check.push(value);
        if (this.check.failed) throw new FlowBreak("sent an answer that is not a JSON-RPC success response");
        this.#length += value.byteLength;
        filled += value.byteLength;
        if (filled < FLOW_PIECE_BYTES) {
          reading = readInto(block.subarray(filled));
          continue;
        }
        const piece = block.subarray(0, filled);
        block = new Uint8Array(FLOW_READ_BYTES);
        filled = 0;
        reading = readInto(block);
        const last = ready;
        ready = piece;
        if (last) yield out(last);
      }
      const layout = this.check.end();
      if (!layout) throw new FlowBreak("sent an answer that breaks off before its end");
      if (JSON.parse(layout.idRaw) !== this.id)
        throw new FlowBreak(`answered id ${layout.idRaw.slice(0, 64)}, not the request's`);
      if (ready) yield out(ready);
      if (filled > 0) yield out(block.subarray(0, filled));
      this.#end({ ok: true, layout, byteLength: this.#length });
    } catch (error) {
      const mapped = this.#errorOf(error);
      this.#end({ ok: false, error: mapped, byteLength: this.#length });
      throw mapped;
    } finally {
      // Ended early (the client went away): the upstream's body is not read on.
      if (!this.#settled)
        this.#end({
          ok: false,
          error: this.#errorOf(new FlowBreak("the client stopped reading the answer", true)),
          byteLength: this.#length,
        });
      // A read left under way (the flow broke off, or its reader stopped) ends with the cancel: nobody waits for it.
      reading?.catch(() => {});
      try {
        this.reader.releaseLock();
      } catch {
        // A read still pending (cancelled with the flow) keeps the lock: nothing more is read anyway.
      }
    }
  }

  /** The pieces as a byte stream for a Response (errored where it broke off), pulled at the client's pace. */
  stream(): ReadableStream<Uint8Array> {
    const pieces = this.pieces();
    const stop = () => this.cancel(new FlowBreak("the client stopped reading the answer", true));
    return new ReadableStream(
      {
        async pull(controller) {
          const next = await pieces.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          // Stopped first: a read still waiting on a silent upstream ends with it (the generator's return waits for that read).
          stop();
          await pieces.return(undefined);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** Stops the flow before it is read (the call ended another way): the upstream's body is cancelled. */
  cancel(reason: unknown): void {
    if (this.#settled) return;
    this.#end({ ok: false, error: this.#errorOf(reason), byteLength: this.#length });
    this.#started = true;
    this.reader.cancel(reason).catch(() => {});
  }

  #end(end: FlowEnd): void {
    if (this.#settled) return;
    this.#settled = true;
    if (!end.ok) this.reader.cancel(end.error).catch(() => {});
    this.#settle(end);
  }
}

/** `piece` with each line break made a space (a copy when it has one). */
function spaced(piece: Uint8Array): Uint8Array {
  if (piece.indexOf(LF) < 0 && piece.indexOf(CR) < 0) return piece;
  const copy = piece.slice();
  for (let i = 0; i < copy.length; i++) if (copy[i] === LF || copy[i] === CR) copy[i] = SPACE;
  return copy;
}
