/**
 * Server-Sent Events, both ways: reading an upstream's `text/event-stream` as it
 * arrives, and framing messages for the client.
 *
 * Framing keeps bytes: a data payload with line breaks is written as several `data:`
 * lines, which a reader joins back with "\n" into the same text.
 */
import { textSlices, type TextSliceReader } from "./text-slices";

/**
 * One event; `id` and `retry` are the stream's values in force when it was dispatched.
 * An event whose data is too long to hold comes with `large`: its data as a byte stream
 * (and `data` empty), read from the same connection. The next event is read after that
 * stream is finished.
 */
export type SseEvent = { readonly event: string; readonly data: string; readonly id?: string; readonly retry?: number; readonly large?: ReadableStream<Uint8Array> };

const LF = 0x0a;
const CR = 0x0d;

/** A piece of the line being read: up to its end (`end`), or as much of it as has arrived. */
type LinePiece = { readonly text: string; readonly end: boolean };

/**
 * Splits decoded text into lines (ended by CRLF, LF or CR) in time linear in its length:
 * each chunk is searched once, from where the last line ended, and the pieces of a line
 * that spans chunks are joined once, when it ends.
 */
class LineSplitter {
  private chunk = "";
  private at = 0;
  /** The next CR and LF of `chunk` at or after `at`; `chunk.length` when there is none. */
  private cr = -1;
  private lf = -1;
  /** The last line ended with a CR at the end of a chunk: a LF opening the next is part of that break. */
  private afterCr = false;
  /** Pieces of the line in progress, from earlier chunks. */
  private parts: string[] = [];
  private partsChars = 0;
  ended = false;
  private readonly reader: TextSliceReader;

  constructor(reader: TextSliceReader) {
    this.reader = reader;
  }

  /** Reads the next chunk; false at the end of the body. */
  async fill(): Promise<boolean> {
    const { value, done } = await this.reader.read();
    if (done) {
      this.ended = true;
      return false;
    }
    this.chunk = value;
    this.at = 0;
    this.cr = -1;
    this.lf = -1;
    return true;
  }

  /** The next piece of the line in progress from the chunk in hand; undefined once the chunk is used up. */
  piece(): LinePiece | undefined {
    const { chunk } = this;
    if (this.afterCr && this.at < chunk.length) {
      if (chunk.charCodeAt(this.at) === LF) this.at++;
      this.afterCr = false;
    }
    if (this.at >= chunk.length) return undefined;
    if (this.cr < this.at) this.cr = indexOrEnd(chunk, "\r", this.at);
    if (this.lf < this.at) this.lf = indexOrEnd(chunk, "\n", this.at);
    const end = Math.min(this.cr, this.lf);
    const text = chunk.slice(this.at, end);
    if (end === chunk.length) {
      this.at = end;
      return { text, end: false };
    }
    this.at = end + 1;
    if (chunk.charCodeAt(end) === CR) {
      if (this.at === chunk.length) this.afterCr = true;
      else if (chunk.charCodeAt(this.at) === LF) this.at++;
    }
    return { text, end: true };
  }

  /** The next whole line from the chunk in hand; undefined when it has none (its rest is kept). */
  line(): string | undefined {
    for (let piece = this.piece(); piece; piece = this.piece()) {
      if (piece.end) {
        if (this.parts.length === 0) return piece.text;
        this.parts.push(piece.text);
        return this.takePending();
      }
      this.parts.push(piece.text);
      this.partsChars += piece.text.length;
    }
    return undefined;
  }

  /** Characters of the unfinished line held so far. */
  get pendingChars(): number {
    return this.partsChars;
  }

  /** Whether the unfinished line held so far starts with `prefix`. */
  pendingStartsWith(prefix: string): boolean {
    let head = "";
    for (const part of this.parts) {
      if (head.length >= prefix.length) break;
      head += part.slice(0, prefix.length);
    }
    return head.startsWith(prefix);
  }

  /** The unfinished line held so far, no longer held. */
  takePending(): string {
    const text = this.parts.join("");
    this.parts = [];
    this.partsChars = 0;
    return text;
  }
}

function indexOrEnd(text: string, search: string, from: number): number {
  const at = text.indexOf(search, from);
  return at < 0 ? text.length : at;
}

function dataValue(line: string): string {
  return line.slice(line.startsWith("data: ") ? 6 : 5);
}

/**
 * Yields each event of an SSE body as soon as its terminating blank line arrives.
 * Events without data (a "priming" event that only sets `id` and `retry`) are yielded
 * too, with empty `data`, so a reader can resume from their id. A data line longer than
 * `largeChars` is not collected: the event is yielded with `large` as soon as that is known.
 * Work is linear in the body's length, however it is cut into chunks.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, largeChars = Number.POSITIVE_INFINITY): AsyncGenerator<SseEvent> {
  const reader = textSlices(body);
  const lines = new LineSplitter(reader);
  let data: string[] = [];
  let dataChars = 0;
  let event = "";
  let id: string | undefined;
  let retry: number | undefined;
  let fields = 0;
  const reset = () => {
    data = [];
    dataChars = 0;
    event = "";
    fields = 0;
  };
  try {
    for (;;) {
      let line: string | undefined;
      while ((line = lines.line()) !== undefined) {
        if (line === "") {
          if (fields > 0) yield { event: event || "message", data: data.join("\n"), ...(id !== undefined ? { id } : {}), ...(retry !== undefined ? { retry } : {}) };
          reset();
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        fields++;
        if (field === "data") {
          data.push(value);
          dataChars += value.length;
        } else if (field === "event") event = value;
        else if (field === "id") id = value;
        else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
      }
      // "data: " and one character at least: the prefix is known whole.
      if (lines.pendingChars > 5 && lines.pendingChars + dataChars > largeChars && lines.pendingStartsWith("data:")) {
        const done = { finished: false };
        const large = largeDataStream(lines, data, done);
        yield { event: event || "message", data: "", large, ...(id !== undefined ? { id } : {}), ...(retry !== undefined ? { retry } : {}) };
        if (!done.finished) return; // the consumer gave up on it: the connection is no use now
        reset();
        continue;
      }
      if (lines.ended || !(await lines.fill())) break;
    }
  } finally {
    if (lines.ended) reader.releaseLock();
    else await reader.cancel().catch(() => {});
  }
}

/**
 * The data of the event being read, as bytes, from the data lines already read (`before`)
 * through the line in progress to the event's end: further `data:` lines are joined
 * with "\n" as a reader would, other fields are skipped, a blank line ends it.
 */
function largeDataStream(lines: LineSplitter, before: readonly string[], done: { finished: boolean }): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let first: string | undefined = before.map((line) => `${line}\n`).join("") + dataValue(lines.takePending());
  /** Inside a data line, at the start of a line (its first characters in `head`), or inside another field's line. */
  let where: "data" | "start" | "skip" = "data";
  let head = "";
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (first !== undefined) {
        const text = first;
        first = undefined;
        if (text !== "") return controller.enqueue(encoder.encode(text));
      }
      for (;;) {
        const piece = lines.piece();
        if (!piece) {
          if (lines.ended || !(await lines.fill())) {
            // The body ended inside the event: what was read is all there is.
            done.finished = true;
            return controller.close();
          }
          continue;
        }
        if (where === "skip") {
          if (piece.end) where = "start";
          continue;
        }
        if (where === "data") {
          if (piece.end) where = "start";
          if (piece.text !== "") return controller.enqueue(encoder.encode(piece.text));
          continue;
        }
        head += piece.text;
        if (piece.end) {
          const line = head;
          head = "";
          if (line === "") {
            done.finished = true;
            return controller.close();
          }
          if (line.startsWith("data:")) return controller.enqueue(encoder.encode(`\n${dataValue(line)}`));
          continue; // another field: not data
        }
        // "data: " and one character at least, or enough to know it is another field.
        if (head.length > 5) {
          const line = head;
          head = "";
          if (!line.startsWith("data:")) {
            where = "skip";
            continue;
          }
          where = "data";
          return controller.enqueue(encoder.encode(`\n${dataValue(line)}`));
        }
      }
    },
  });
}

const encoder = new TextEncoder();

/** One `message` event carrying a JSON-RPC message's text. */
export function sseFrame(text: string, id?: string): Uint8Array {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  // JSON text seldom has a raw line break: one copy instead of split, map and join.
  if (!/[\r\n]/.test(text)) return encoder.encode(`event: message\n${idLine}data: ${text}\n\n`);
  const dataLines = text.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("");
  return encoder.encode(`event: message\n${idLine}${dataLines}\n`);
}

/** A comment line; keeps intermediaries from closing an idle stream. */
export const SSE_KEEPALIVE = encoder.encode(": keepalive\n\n");

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};
