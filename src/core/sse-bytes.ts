/**
 * Reading an upstream's `text/event-stream` on its bytes. The body is read into one
 * buffer kept for the whole stream (a BYOB read where the body takes one, see
 * byte-reads.ts), lines and events are found on the bytes (the line breaks CR, LF and CRLF
 * are single bytes no UTF-8 character contains), and an event's data lines are handed out
 * as views of that buffer: nothing per event is decoded or copied unless its reader wants
 * it so. core/sse.ts decodes them; the relay passes some on as they are
 * (upstream/reply-body.ts).
 *
 * An event's first data line longer than the buffer holds is not copied into ever larger
 * buffers: the bytes read of it stay where they were read, the rest is read into fresh
 * buffers of the first size, and the pieces are kept: an event of that one line hands
 * them out as they are (`line`), and they are joined (one copy) only if its data is read.
 * Otherwise the buffer grows to hold the longest event read (up to the bound past which an
 * event's data is handed over as a stream instead, which the pieces count toward) and
 * returns to its first size after it.
 * Comments, unknown fields and `id`, `event` or `retry` lines longer than
 * MAX_FIELD_LINE_BYTES are skipped as they arrive, however long. Work is linear in
 * the body's length however it is cut into chunks.
 */
import { byteReader, type ByteReader } from "./byte-reads";
import { joinPieces } from "./pieces";

/** The buffer a stream is read into at first. */
export const SSE_BUFFER_BYTES = 64 * 1024;
/** A read is not started into less room than this: the buffer is compacted or grown first. */
const MIN_READ_BYTES = 4 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
/** The longest field name the reader knows ("event", "retry") is 5 bytes: a line with no colon in its first 6 is another field. */
const KNOWN_FIELD_MAX = 5;
const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;
/**
 * The longest line of another field than `data` that is read (an `id`, an `event` name, a
 * `retry`): a longer one is skipped as it arrives, as an unknown field is, instead of held
 * whole (an upstream could otherwise make the buffer hold a line of any length).
 */
export const MAX_FIELD_LINE_BYTES = 4 * 1024;

/**
 * What each data line of an event after its first costs beyond its value's bytes (its
 * offsets, and a view of it when the event is dispatched), counted toward `largeBytes`: an
 * event of a million empty data lines has no data bytes, and would otherwise be held whole.
 */
export const DATA_LINE_COST_BYTES = 64;

/** Field values are decoded alone: a BOM at a value's start is a character of it, not a mark to drop. */
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * One event as bytes; `id` and `retry` are the stream's values in force when it was
 * dispatched. `data` holds the values of its data lines (to be joined with "\n"), as views
 * of the reader's buffer: valid only until the next event is asked for. An event whose
 * data is too long to hold comes with `large`: its data (lines joined) as a byte stream
 * read from the same connection, and `data` empty. The next event is read after it.
 */
export type SseRawEvent = {
  readonly event: string;
  readonly data: readonly Uint8Array[];
  /** The pieces of the event's one data line when it was read across buffers, each the reader's no longer (`data` joins them). */
  readonly line?: readonly Uint8Array[];
  readonly id?: string;
  readonly retry?: number;
  readonly large?: ReadableStream<Uint8Array>;
};

function bytesEqual(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** The body's bytes in one buffer, with the position of the line being read. */
class SseBuffer {
  bytes = new Uint8Array(SSE_BUFFER_BYTES);
  /** Bytes read so far (the buffer holds `[0, end)`). */
  end = 0;
  ended = false;
  /** Where the line being read starts, and where the search for its end goes on. */
  lineStart = 0;
  pos = 0;
  /** The last line ended with a CR as the last byte read: a LF opening the next read is part of that break. */
  afterCr = false;
  /** The next CR and LF at or after `pos` (-1: none before `crScanned`/`lfScanned`, where the search goes on). */
  private cr = -1;
  private lf = -1;
  private crScanned = 0;
  private lfScanned = 0;
  private readonly reader: ByteReader;

  constructor(reader: ByteReader) {
    this.reader = reader;
  }

  /** The next CR or LF in `[pos, end)`, or -1; each byte is searched once for each. */
  lineEnd(): number {
    if (this.afterCr && this.pos < this.end) {
      if (this.bytes[this.pos] === LF) this.lineStart = ++this.pos;
      this.afterCr = false;
    }
    if (this.cr < this.pos) {
      const from = Math.max(this.pos, this.crScanned);
      const at = this.bytes.subarray(from, this.end).indexOf(CR);
      this.cr = at < 0 ? -1 : from + at;
      this.crScanned = at < 0 ? this.end : this.cr + 1;
    }
    if (this.lf < this.pos) {
      const from = Math.max(this.pos, this.lfScanned);
      const at = this.bytes.subarray(from, this.end).indexOf(LF);
      this.lf = at < 0 ? -1 : from + at;
      this.lfScanned = at < 0 ? this.end : this.lf + 1;
    }
    if (this.cr < 0) return this.lf;
    return this.lf < 0 ? this.cr : Math.min(this.cr, this.lf);
  }

  /** Moves past the line break at `at`: the next line starts after it. */
  passBreak(at: number): void {
    this.pos = at + 1;
    if (this.bytes[at] === CR) {
      if (this.pos === this.end) this.afterCr = true;
      else if (this.bytes[this.pos] === LF) this.pos++;
    }
    this.lineStart = this.pos;
  }

  /**
   * Reads more bytes, keeping those from `keep` on (which may move: the return value is
   * how far they moved toward the start, to subtract from offsets into them). False at
   * the body's end.
   */
  async fill(keep: number): Promise<{ moved: number; more: boolean }> {
    let moved = 0;
    if (this.bytes.byteLength - this.end < MIN_READ_BYTES) {
      const kept = this.end - keep;
      if (kept <= this.bytes.byteLength / 2) this.bytes.copyWithin(0, keep, this.end);
      else {
        const grown = new Uint8Array(this.bytes.byteLength * 2);
        grown.set(this.bytes.subarray(keep, this.end));
        this.bytes = grown;
      }
      moved = keep;
      this.shift(moved);
    }
    const { done, value } = await this.reader.readInto(this.bytes.subarray(this.end));
    if (!value) throw new Error("the SSE body was cancelled while it was read");
    this.bytes = new Uint8Array(value.buffer as ArrayBuffer);
    if (done) this.ended = true;
    else this.end += value.byteLength;
    return { moved, more: !done };
  }

  /** True when reading on, keeping the bytes from `keep`, would grow the buffer (copying them into one twice its size). */
  wouldGrow(keep: number): boolean {
    return this.bytes.byteLength - this.end < MIN_READ_BYTES && this.end - keep > this.bytes.byteLength / 2;
  }

  /**
   * Reads on into a fresh buffer of the first size, mid-line: the bytes read so far stay
   * where they are (the caller keeps views of them), none is copied.
   */
  restart(): void {
    this.bytes = new Uint8Array(SSE_BUFFER_BYTES);
    this.end = this.lineStart = this.pos = this.crScanned = this.lfScanned = 0;
    this.cr = this.lf = -1;
  }

  /** After an event: a buffer grown for a long one goes back to its first size. */
  shrink(): void {
    if (this.bytes.byteLength <= SSE_BUFFER_BYTES || this.end - this.lineStart > SSE_BUFFER_BYTES / 2) return;
    const small = new Uint8Array(SSE_BUFFER_BYTES);
    small.set(this.bytes.subarray(this.lineStart, this.end));
    this.bytes = small;
    this.shift(this.lineStart);
  }

  private shift(by: number): void {
    this.end -= by;
    this.lineStart -= by;
    this.pos -= by;
    this.cr = this.cr < 0 ? -1 : this.cr - by;
    this.lf = this.lf < 0 ? -1 : this.lf - by;
    this.crScanned = Math.max(0, this.crScanned - by);
    this.lfScanned = Math.max(0, this.lfScanned - by);
  }

  /** Drops the line read so far (it is skipped): the buffer need not keep it. */
  dropLine(): void {
    this.lineStart = this.pos = this.end;
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }

  release(): void {
    this.reader.releaseLock();
  }
}

/** What the line being read is, once it is known before its end. */
type Pending = "unknown" | "skip-comment" | "skip-field";

/**
 * Yields each event of an SSE body as soon as its terminating blank line arrives.
 * Events without data (a "priming" event that only sets `id` and `retry`) are yielded
 * too, with no data, so a reader can resume from their id. An event is not held past
 * `largeBytes`: once the bytes kept for it (its data lines, each after the first counted with
 * DATA_LINE_COST_BYTES, and the comments and other lines among them) pass that, or a data
 * line in progress would take it past, the event is yielded with `large` at once, and the
 * rest of it is read as that stream (which holds no more than a line at a time).
 */
export async function* readSseEvents(
  body: ReadableStream<Uint8Array>,
  largeBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<SseRawEvent> {
  const buffer = new SseBuffer(byteReader(body));
  /** Start and end offsets of the current event's data values, in pairs. */
  let data: number[] = [];
  let dataBytes = 0;
  let event = "";
  let fields = 0;
  let id: string | undefined;
  let retry: number | undefined;
  let pending: Pending = "unknown";
  /**
   * The value read so far of the event's first data line while it is longer than the buffer
   * can hold without growing: views of earlier buffers, in order (the line goes on at the
   * buffer's `lineStart`, without its `data:` prefix), joined once at the line's end into
   * `first`, whose offsets in `data` are then those of the line's end.
   */
  let spill: Uint8Array[] = [];
  let spillBytes = 0;
  let first: Uint8Array | undefined;
  /** The first data line's pieces when it was read across buffers (each its own memory), joined into `first` only if read. */
  let firstPieces: Uint8Array[] | undefined;
  let firstLength = 0;
  const reset = () => {
    data = [];
    dataBytes = 0;
    first = undefined;
    firstPieces = undefined;
    firstLength = 0;
    event = "";
    fields = 0;
  };
  const stamped = (fieldsOf: {
    event: string;
    data: readonly Uint8Array[];
    large?: ReadableStream<Uint8Array>;
  }): SseRawEvent => ({
    ...fieldsOf,
    ...(id !== undefined ? { id } : {}),
    ...(retry !== undefined ? { retry } : {}),
  });
  /** What the event being read holds: the bytes read of it from its first data line on, and each further data line's cost. */
  const held = () =>
    data.length === 0 ? 0 : buffer.pos - data[0]! + firstLength + (data.length / 2 - 1) * DATA_LINE_COST_BYTES;
  /** The `i`th data value: the first line read across buffers (joined once), or a view of the buffer. */
  const value = (i: number): Uint8Array => {
    if (i > 0 || !firstPieces) return buffer.bytes.subarray(data[i]!, data[i + 1]!);
    first ??= joinPieces(firstPieces, firstLength);
    return first;
  };
  /** The event's complete data lines, joined with "\n", as one copy (the start of a large event's stream). */
  const dataCopy = (): Uint8Array => {
    let length = 0;
    for (let i = 0; i < data.length; i += 2) length += value(i).byteLength + (i > 0 ? 1 : 0);
    const copy = new Uint8Array(length);
    let at = 0;
    for (let i = 0; i < data.length; i += 2) {
      if (i > 0) copy[at++] = LF;
      copy.set(value(i), at);
      at += value(i).byteLength;
    }
    return copy;
  };
  /**
   * Yields the event being read as a stream: `before` (copies of what was read of its data),
   * then the rest of it from the buffer, `from` where its line is. True once the stream was
   * read to the event's end (the next event is read after it); false when its reader gave
   * up on it: the connection is no use then.
   */
  const handOver = function* (before: Uint8Array[], from: "data" | "start" | "skip"): Generator<SseRawEvent, boolean> {
    const done = { finished: false };
    yield stamped({ event: event || "message", data: [], large: largeDataStream(buffer, before, done, from) });
    if (!done.finished) return false;
    reset();
    pending = "unknown";
    buffer.shrink();
    return true;
  };
  try {
    // A byte order mark may open the stream (the SSE spec drops it).
    while (buffer.end < UTF8_BOM.length && !buffer.ended) await buffer.fill(0);
    if (UTF8_BOM.every((byte, i) => buffer.bytes[i] === byte) && buffer.end >= UTF8_BOM.length)
      buffer.lineStart = buffer.pos = UTF8_BOM.length;
    for (;;) {
      const at = buffer.lineEnd();
      if (at < 0) {
        buffer.pos = buffer.end;
        if (buffer.ended) break; // an unfinished event at the end is not dispatched
        const { bytes, lineStart } = buffer;
        if (spill.length > 0) {
          // The event's first data line, too long to hold without growing: read on into a fresh buffer, or as a stream.
          if (spillBytes + buffer.end - lineStart > largeBytes) {
            const before = [...spill, bytes.slice(lineStart, buffer.end)];
            spill = [];
            spillBytes = 0;
            buffer.dropLine();
            if (!(yield* handOver(before, "data"))) return;
            continue;
          }
          if (buffer.wouldGrow(lineStart)) {
            spill.push(bytes.subarray(lineStart, buffer.end));
            spillBytes += buffer.end - lineStart;
            buffer.restart();
          }
          await buffer.fill(buffer.lineStart);
          continue;
        }
        const length = buffer.end - lineStart;
        if (pending === "unknown" && length > 0 && bytes[lineStart] === COLON) pending = "skip-comment";
        if (
          pending === "unknown" &&
          length > KNOWN_FIELD_MAX &&
          bytes.subarray(lineStart, lineStart + KNOWN_FIELD_MAX + 1).indexOf(COLON) < 0
        )
          pending = "skip-field";
        if (pending === "unknown" && length > MAX_FIELD_LINE_BYTES && !bytesEqual(bytes, lineStart, "data:"))
          pending = "skip-field";
        // "data: " and one byte at least: the prefix is known whole.
        if (
          pending === "unknown" &&
          length > 5 &&
          length + dataBytes + (data.length / 2) * DATA_LINE_COST_BYTES > largeBytes &&
          bytesEqual(bytes, lineStart, "data:")
        ) {
          const before = data.length > 0 ? [dataCopy(), Uint8Array.of(LF)] : [];
          const valueStart = lineStart + (bytes[lineStart + 5] === SPACE ? 6 : 5);
          before.push(bytes.slice(valueStart, buffer.end));
          buffer.dropLine();
          if (!(yield* handOver(before, "data"))) return;
          continue;
        } else if (held() > largeBytes) {
          // Held past the bound by what came among its data lines (comments, other fields, a line in progress).
          if (!(yield* handOver([dataCopy()], pending === "unknown" ? "start" : "skip"))) return;
          continue;
        } else if (pending !== "unknown") buffer.dropLine();
        else if (
          data.length === 0 &&
          length > 5 &&
          buffer.wouldGrow(lineStart) &&
          bytesEqual(bytes, lineStart, "data:")
        ) {
          // The event's first data line outgrows the buffer: its value so far is kept where it is, the rest read on.
          const valueStart = lineStart + (bytes[lineStart + 5] === SPACE ? 6 : 5);
          spill = [bytes.subarray(valueStart, buffer.end)];
          spillBytes = buffer.end - valueStart;
          buffer.restart();
          await buffer.fill(0);
          continue;
        }
        const { moved } = await buffer.fill(data.length > 0 ? data[0]! : buffer.lineStart);
        for (let i = 0; i < data.length; i++) data[i]! -= moved;
        continue;
      }
      const { bytes, lineStart } = buffer;
      buffer.passBreak(at);
      if (spill.length > 0) {
        // The end of a first data line read across buffers: its pieces kept (the last copied out of the buffer).
        firstPieces = [...spill, bytes.slice(lineStart, at)];
        firstLength = spillBytes + at - lineStart;
        spill = [];
        spillBytes = 0;
        fields++;
        data.push(at, at);
        dataBytes += firstLength;
      } else if (pending !== "unknown") {
        // The end of a line skipped as it arrived.
        if (pending === "skip-field") fields++;
        pending = "unknown";
      } else if (at === lineStart) {
        if (fields > 0 && data.length === 2 && firstPieces) {
          // One data line read across buffers: its pieces, joined only if the data is read.
          const pieces = firstPieces;
          const length = firstLength;
          let data: Uint8Array[] | undefined;
          yield {
            event: event || "message",
            get data() {
              data ??= [joinPieces(pieces, length)];
              return data;
            },
            line: pieces,
            ...(id !== undefined ? { id } : {}),
            ...(retry !== undefined ? { retry } : {}),
          };
        } else if (fields > 0) {
          const views = [];
          for (let i = 0; i < data.length; i += 2) views.push(value(i));
          yield stamped({ event: event || "message", data: views });
        }
        reset();
        buffer.shrink();
        continue;
      } else if (bytes[lineStart] !== COLON) {
        // A field (a comment is passed over).
        fields++;
        let nameEnd = lineStart;
        while (nameEnd < at && bytes[nameEnd] !== COLON) nameEnd++;
        let valueStart = nameEnd < at ? nameEnd + 1 : at;
        if (valueStart < at && bytes[valueStart] === SPACE) valueStart++;
        const is = (name: string) => nameEnd - lineStart === name.length && bytesEqual(bytes, lineStart, name);
        if (is("data")) {
          data.push(valueStart, at);
          dataBytes += at - valueStart;
        } else if (at - lineStart > MAX_FIELD_LINE_BYTES) {
          // Skipped however it arrived (a line cut across reads is skipped as it arrives, above).
        } else if (is("event")) event = decoder.decode(bytes.subarray(valueStart, at));
        else if (is("id")) {
          // An id holding NULL is ignored (the SSE spec's rule).
          if (bytes.subarray(valueStart, at).indexOf(0) < 0) id = decoder.decode(bytes.subarray(valueStart, at));
        } else if (is("retry")) {
          const value = decoder.decode(bytes.subarray(valueStart, at));
          if (/^\d+$/.test(value)) retry = Number(value);
        }
      }
      if (held() > largeBytes) {
        // Held past the bound by its data lines (each with its cost) or what came among them: the rest comes as a stream.
        if (!(yield* handOver([dataCopy()], "start"))) return;
      }
    }
  } finally {
    if (buffer.ended) buffer.release();
    else await buffer.cancel().catch(() => {});
  }
}

/**
 * The data of the event being read, as bytes: the data already read (`before`, copies),
 * then the data line in progress to the event's end. Further `data:` lines are joined
 * with "\n" as a reader would, other fields are skipped, a blank line ends it. A byte
 * stream: a reader that brings its own buffer (offload's) gets the bytes copied into it
 * straight from the reader's buffer.
 */
function largeDataStream(
  buffer: SseBuffer,
  before: Uint8Array[],
  done: { finished: boolean },
  from: "data" | "start" | "skip",
): ReadableStream<Uint8Array> {
  /** Inside a data line, at the start of a line (not yet known), or inside another field's line. */
  let where: "data" | "start" | "skip" = from;
  return new ReadableStream(
    {
      type: "bytes",
      async pull(controller) {
        /** Hands on `bytes`: into a BYOB request's view (what does not fit comes next), or as a chunk of its own. */
        const hand = (bytes: Uint8Array, owned: boolean) => {
          const request = controller.byobRequest;
          const view = request?.view;
          if (!request || !view) return controller.enqueue(owned ? bytes : bytes.slice());
          const length = Math.min(bytes.byteLength, view.byteLength);
          new Uint8Array(view.buffer, view.byteOffset, view.byteLength).set(bytes.subarray(0, length));
          if (length < bytes.byteLength) before.unshift(bytes.slice(length));
          request.respond(length);
        };
        const finish = () => {
          done.finished = true;
          controller.close();
          controller.byobRequest?.respond(0);
        };
        // An empty data line, or a first line of "data: " alone, leaves an empty piece: a byte stream may not hand one on.
        let chunk = before.shift();
        while (chunk !== undefined && chunk.byteLength === 0) chunk = before.shift();
        if (chunk) return hand(chunk, true);
        for (;;) {
          const at = buffer.lineEnd();
          const { bytes, lineStart } = buffer;
          if (at < 0) {
            buffer.pos = buffer.end;
            if (where === "data" && buffer.end > lineStart) {
              const piece = bytes.subarray(lineStart, buffer.end);
              buffer.dropLine();
              return hand(piece, false);
            }
            const length = buffer.end - lineStart;
            if (where === "skip") buffer.dropLine();
            else if (where === "start" && length > 5) {
              // "data: " and one byte at least, or enough to know it is another field.
              if (!bytesEqual(bytes, lineStart, "data:")) where = "skip";
              else {
                where = "data";
                const piece = withNewline(
                  bytes.subarray(lineStart + (bytes[lineStart + 5] === SPACE ? 6 : 5), buffer.end),
                );
                buffer.dropLine();
                return hand(piece, true);
              }
              continue;
            }
            // The body ended inside the event: what was read is all there is.
            if (buffer.ended || !(await buffer.fill(buffer.lineStart)).more) return finish();
            continue;
          }
          buffer.passBreak(at);
          if (where === "skip") {
            where = "start";
            continue;
          }
          if (where === "data") {
            where = "start";
            if (at > lineStart) return hand(bytes.subarray(lineStart, at), false);
            continue;
          }
          if (at === lineStart) return finish();
          if (
            at - lineStart >= 4 &&
            bytesEqual(bytes, lineStart, "data") &&
            (at - lineStart === 4 || bytes[lineStart + 4] === COLON)
          ) {
            const valueStart = Math.min(at, lineStart + (bytes[lineStart + 5] === SPACE ? 6 : 5));
            return hand(withNewline(bytes.subarray(valueStart, at)), true);
          }
          // another field: not data
        }
      },
    },
    { highWaterMark: 0 },
  );
}

/** "\n" and a copy of `value`: a data line after another. */
function withNewline(value: Uint8Array): Uint8Array {
  const all = new Uint8Array(value.byteLength + 1);
  all[0] = LF;
  all.set(value, 1);
  return all;
}
