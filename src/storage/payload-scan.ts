/**
 * Reading a stored JSON payload forward from a byte offset, a window of bytes at a
 * time (`bucket.get` with a range), through the push tokenizer: what a pointer read
 * does from the nearest checkpoint of the payload's index. Memory is one window plus
 * what is captured; every byte fetched counts against the read's budget, and a read
 * that would pass it stops with a `ScanLimitError` instead of reading on.
 *
 * `ChildWalker` follows the children of one container (resumed inside it) and lets a
 * visitor capture a child's raw text, skip a large child by jumping past it, pass
 * through it, or stop.
 */
import { JsonStreamTokenizer, type Container, type JsonStreamHandler, type ResumePoint } from "../core/json-stream";
import { Utf8Position, utf8Length } from "../core/utf8-position";

/** The first window of a scan; each next one is twice as large, up to `MAX_SCAN_WINDOW_BYTES`. */
export const FIRST_SCAN_WINDOW_BYTES = 16 * 1024;
const MAX_SCAN_WINDOW_BYTES = 256 * 1024;

/** Where a read's bytes come from, and what it has fetched so far. */
export type ScanSource = {
  readonly bucket: R2Bucket;
  readonly key: string;
  readonly size: number;
  /** Bytes fetched by this read (all its ranges) and the most it may fetch. */
  readonly budget: { fetched: number; ranges: number; readonly limit: number };
};

export class ScanLimitError extends Error {
  override readonly name = "ScanLimitError";
}

/** Fetches `[offset, offset + length)`, counted against the budget. */
export async function fetchRange(source: ScanSource, offset: number, length: number): Promise<Uint8Array> {
  const { budget } = source;
  if (budget.fetched + length > budget.limit) throw new ScanLimitError(`more than ${budget.limit} bytes`);
  const object = await source.bucket.get(source.key, { range: { offset, length } });
  if (!object) throw new ScanLimitError("the payload is gone");
  const bytes = new Uint8Array(await object.arrayBuffer());
  budget.fetched += bytes.length;
  budget.ranges++;
  return bytes;
}

/** Hands decoded text from byte `from` on to `feed` (with the byte offset each piece starts at) until it returns false or the payload ends. */
async function scanText(
  source: ScanSource,
  from: number,
  feed: (text: string, byteOffset: number) => boolean,
): Promise<boolean> {
  const decoder = new TextDecoder();
  let at = from;
  let base = from;
  let window = FIRST_SCAN_WINDOW_BYTES;
  while (at < source.size) {
    const bytes = await fetchRange(
      source,
      at,
      Math.min(window, source.size - at, Math.max(1, source.budget.limit - source.budget.fetched)),
    );
    if (bytes.length === 0) break;
    at += bytes.length;
    const text = decoder.decode(bytes, { stream: at < source.size });
    if (!feed(text, base)) return false;
    base += utf8Length(text);
    window = Math.min(window * 2, MAX_SCAN_WINDOW_BYTES);
  }
  const rest = decoder.decode();
  return rest === "" || feed(rest, base);
}

/** A child of the walked container: its number, its key (in an object) and its byte offset. */
export type ChildStart = { readonly index: number; readonly key: string | undefined; readonly byte: number };

export type ChildVisitor = {
  /** What to do with the child that starts here: capture its text, skip to `skipTo(child)`, pass through it, or stop. */
  child(start: ChildStart): "capture" | "skip" | "pass" | "stop";
  /** Where a skipped child ends (byte offset just after it). */
  skipTo?(start: ChildStart): number;
  /** A captured child's raw text (undefined when longer than the capture bound); false stops the walk. */
  captured?(start: ChildStart, text: string | undefined): boolean;
};

/** Follows the direct children of a container, or (not resumed) the one top-level value at the start. */
class ChildWalker implements JsonStreamHandler {
  tokenizer: JsonStreamTokenizer | undefined;
  private readonly position = new Utf8Position();
  private chunk = "";
  private depth = 0;
  private current: ChildStart | undefined;
  private capture: { from: number; parts: string[]; length: number; overflow: boolean } | null = null;
  /** Set when the walk should go on at a byte offset (after a skipped child). */
  skipTo: number | undefined;
  done = false;

  constructor(
    private readonly visitor: ChildVisitor,
    private readonly captureChars: number,
    public index: number,
    private memberKey: string | undefined,
  ) {}

  setChunk(chunk: string, byteOffset: number): void {
    this.chunk = chunk;
    this.position.next(chunk, byteOffset);
    if (this.capture) this.capture.from = 0;
  }

  endChunk(): void {
    if (this.capture) this.append(this.chunk.slice(this.capture.from));
  }

  private append(text: string): void {
    const capture = this.capture!;
    if (capture.overflow) return;
    capture.length += text.length;
    if (capture.length > this.captureChars) {
      capture.overflow = true;
      capture.parts = [];
    } else capture.parts.push(text);
  }

  private stop(): void {
    this.done = true;
    this.tokenizer?.stop();
  }

  valueStart(index: number): void {
    if (this.depth !== 0) return;
    const start: ChildStart = { index: this.index, key: this.memberKey, byte: this.position.at(index) };
    this.current = start;
    switch (this.visitor.child(start)) {
      case "capture":
        this.capture = { from: index, parts: [], length: 0, overflow: false };
        break;
      case "skip":
        this.skipTo = this.visitor.skipTo!(start);
        this.index++;
        this.memberKey = undefined;
        this.tokenizer?.stop();
        break;
      case "stop":
        this.stop();
        break;
      case "pass":
        break;
    }
  }

  valueEnd(index: number): void {
    if (this.depth !== 0) return;
    const capture = this.capture;
    if (capture) {
      this.append(this.chunk.slice(capture.from, index));
      this.capture = null;
      if (!this.visitor.captured!(this.current!, capture.overflow ? undefined : capture.parts.join(""))) this.stop();
    }
    this.index++;
    this.memberKey = undefined;
  }

  private open(): void {
    this.depth++;
  }
  private close(): void {
    if (this.depth === 0)
      this.stop(); // the walked container ends
    else this.depth--;
  }
  startObject(): void {
    this.open();
  }
  startArray(): void {
    this.open();
  }
  endObject(): void {
    this.close();
  }
  endArray(): void {
    this.close();
  }
  key(name: string): void {
    if (this.depth === 0) this.memberKey = name;
  }
}

/** Where a walk starts: a byte offset, and the container it is inside (none: a top-level value starts there). */
export type WalkStart = {
  readonly byte: number;
  readonly inside?: ResumePoint;
  readonly index?: number;
  readonly key?: string;
};

/** Walks the children of a container from `start`, as `visitor` directs, capturing at most `captureChars` characters of a child. */
export async function walkChildren(
  source: ScanSource,
  start: WalkStart,
  visitor: ChildVisitor,
  captureChars: number,
): Promise<void> {
  const walker = new ChildWalker(visitor, captureChars, start.index ?? 0, start.key);
  let from = start.byte;
  let inside = start.inside;
  for (;;) {
    const tokenizer = new JsonStreamTokenizer(walker, inside);
    walker.tokenizer = tokenizer;
    walker.skipTo = undefined;
    const ended = await scanText(source, from, (text, byteOffset) => {
      walker.setChunk(text, byteOffset);
      tokenizer.write(text);
      walker.endChunk();
      return !walker.done && walker.skipTo === undefined;
    });
    if (walker.skipTo !== undefined && !walker.done) {
      from = walker.skipTo;
      inside = { container: (inside?.container ?? "array") as Container, at: "after-value" };
      continue;
    }
    if (ended && !walker.done) tokenizer.end(); // a top-level number or literal ends with the text
    return;
  }
}

/** Decodes the string value starting at byte `from`: its characters `[offset, offset + count)` and its length. */
export async function readString(
  source: ScanSource,
  from: number,
  offset: number,
  count: number,
): Promise<{ total: number; value: string }> {
  let total = 0;
  let value = "";
  let done = false;
  const tokenizer = new JsonStreamTokenizer({
    wantString: () => true,
    stringChunk: (piece) => {
      const end = total + piece.length;
      if (end > offset && total < offset + count)
        value += piece.slice(Math.max(0, offset - total), Math.min(piece.length, offset + count - total));
      total = end;
    },
    valueEnd: () => {
      done = true;
      tokenizer.stop();
    },
  });
  await scanText(source, from, (text) => {
    tokenizer.write(text);
    return !done;
  });
  return { total, value };
}
