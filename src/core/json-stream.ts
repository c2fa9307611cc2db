/**
 * A push tokenizer for JSON that never holds more than the current chunk: for results
 * far larger than an isolate's memory, read as they arrive.
 *
 * Text is fed in chunks of any size (split anywhere, even inside a string or an escape).
 * The handler hears structure (start/end of objects and arrays, keys, scalar types) and
 * where each value starts and ends in the current chunk, so a caller can copy a value's
 * raw text out chunk by chunk. String contents are only collected when the handler asks
 * for them (`wantString`), so a 300 MB string costs nothing to skip.
 */
import type { ScalarType } from "./schema-inference";

export type JsonStreamHandler = {
  /** A value starts at `index` of the current chunk (before its first character). */
  valueStart?(index: number): void;
  /** A value ended just before `index` of the current chunk. */
  valueEnd?(index: number): void;
  startObject?(): void;
  endObject?(): void;
  startArray?(): void;
  endArray?(): void;
  key?(name: string): void;
  scalar?(type: ScalarType): void;
  /** Whether to collect the contents of the string value about to be read (keys are always collected). */
  wantString?(): boolean;
  /** Decoded pieces of a string value being collected. */
  stringChunk?(text: string): void;
  /** The end of a collected string value, with its whole text when shorter than `MAX_COLLECTED_STRING`. */
  stringEnd?(value: string | undefined): void;
};

export class JsonStreamError extends Error {
  override readonly name = "JsonStreamError";
}

const MAX_COLLECTED_STRING = 1024 * 1024;
const MAX_DEPTH = 10_000;

export type Container = "object" | "array";

/**
 * Where a tokenizer starts when it resumes inside a container (a payload read from a
 * byte offset): just after its opening bracket, at the start of an element or member
 * value, or just after one. Once
 * that container closes the text counts as ended.
 */
export type ResumePoint = { readonly container: Container; readonly at: "start" | "value" | "after-value" };
/** What the tokenizer expects next. */
type Expect = "value" | "value-or-end" | "key-or-end" | "key" | "colon" | "comma-or-end" | "done";

/** Characters are compared as UTF-16 codes: no one-character strings, no set lookups per character. */
function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** Where a number or literal (true, false, null) may start: t, f, n, "-", a digit. */
function isLiteralStart(code: number): boolean {
  return code === 0x74 || code === 0x66 || code === 0x6e || code === 0x2d || (code >= 0x30 && code <= 0x39);
}

/** What ends a number or literal: ",", "}", "]" or whitespace. */
function endsLiteral(code: number): boolean {
  return code === 0x2c || code === 0x7d || code === 0x5d || isWhitespace(code);
}

export class JsonStreamTokenizer {
  private readonly stack: Container[] = [];
  private expect: Expect = "value";
  /** Inside a string: is it a key, is it collected, what was collected, a pending escape. */
  /** `pending`: a high surrogate that ended the last piece, held so that a pair is never split between two pieces. */
  private inString: {
    key: boolean;
    collect: boolean;
    text: string;
    escape: string | null;
    total: number;
    pending: string;
  } | null = null;
  /** Inside a number or literal: its text so far. */
  private literal: string | null = null;
  private stopped = false;
  /** Where the next backslash of the current chunk is (see backslashAfter); -1 before it is searched. */
  private backslash = -1;

  constructor(
    private readonly handler: JsonStreamHandler,
    resume?: ResumePoint,
  ) {
    if (resume) {
      this.stack.push(resume.container);
      const start = resume.container === "object" ? "key-or-end" : "value-or-end";
      this.expect = resume.at === "start" ? start : resume.at === "value" ? "value" : "comma-or-end";
    }
  }

  /** Stops reading: the rest of the current chunk (and any later one) is ignored. A handler may call it. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * The next backslash at or after `from` in `chunk` (its length when there is none).
   * Asked with increasing `from` within a chunk, so each character is searched once.
   */
  private backslashAfter(chunk: string, from: number): number {
    if (this.backslash < from) {
      const found = chunk.indexOf("\\", from);
      this.backslash = found < 0 ? chunk.length : found;
    }
    return this.backslash;
  }

  /** Feeds the next piece of text. */
  write(chunk: string): void {
    const h = this.handler;
    this.backslash = -1;
    let i = 0;
    const n = chunk.length;
    while (i < n && !this.stopped) {
      if (this.inString) {
        i = this.readString(chunk, i);
        continue;
      }
      if (this.literal !== null) {
        const start = i;
        while (i < n && !endsLiteral(chunk.charCodeAt(i))) i++;
        this.literal += chunk.slice(start, i);
        if (i < n) this.endLiteral(i);
        continue;
      }
      const code = chunk.charCodeAt(i);
      if (isWhitespace(code)) {
        i++;
        continue;
      }
      const c = chunk[i]!;
      switch (this.expect) {
        // biome-ignore lint/suspicious/noFallthroughSwitchClause: an array's first element is read as any value.
        case "value-or-end":
          if (c === "]") {
            this.closeContainer("array", i);
            i++;
            break;
          }
        // falls through: the first element of an array
        case "value":
          h.valueStart?.(i);
          if (c === "{") {
            this.push("object");
            h.startObject?.();
            this.expect = "key-or-end";
          } else if (c === "[") {
            this.push("array");
            h.startArray?.();
            this.expect = "value-or-end";
          } else if (c === '"') {
            const collect = h.wantString?.() ?? false;
            this.inString = { key: false, collect, text: "", escape: null, total: 0, pending: "" };
          } else if (isLiteralStart(code)) {
            this.literal = c;
          } else throw new JsonStreamError(`unexpected "${c}" where a value should start`);
          i++;
          break;
        case "key-or-end":
        case "key":
          if (c === "}" && this.expect === "key-or-end") {
            this.closeContainer("object", i);
          } else if (c === '"') {
            this.inString = { key: true, collect: true, text: "", escape: null, total: 0, pending: "" };
          } else throw new JsonStreamError(`unexpected "${c}" where a key should start`);
          i++;
          break;
        case "colon":
          if (c !== ":") throw new JsonStreamError(`expected ":" after a key, got "${c}"`);
          this.expect = "value";
          i++;
          break;
        case "comma-or-end": {
          const top = this.stack[this.stack.length - 1];
          if (c === "," && top) this.expect = top === "object" ? "key" : "value";
          else if ((c === "}" && top === "object") || (c === "]" && top === "array")) this.closeContainer(top, i);
          else throw new JsonStreamError(`unexpected "${c}" after a value`);
          i++;
          break;
        }
        case "done":
          throw new JsonStreamError(`unexpected "${c}" after the end of the JSON text`);
      }
    }
  }

  /** Ends the text: a pending number or literal completes; anything unfinished is an error. */
  end(): void {
    if (this.literal !== null) this.endLiteral(0);
    if (this.inString || this.stack.length > 0 || this.expect !== "done")
      throw new JsonStreamError("the JSON text ended early");
  }

  private push(kind: Container): void {
    if (this.stack.length >= MAX_DEPTH) throw new JsonStreamError(`nested deeper than ${MAX_DEPTH}`);
    this.stack.push(kind);
  }

  private closeContainer(kind: Container, index: number): void {
    this.stack.pop();
    if (kind === "object") this.handler.endObject?.();
    else this.handler.endArray?.();
    this.afterValue(index + 1);
  }

  private afterValue(index: number): void {
    this.handler.valueEnd?.(index);
    this.expect = this.stack.length === 0 ? "done" : "comma-or-end";
  }

  private endLiteral(index: number): void {
    const text = this.literal!;
    this.literal = null;
    let type: ScalarType;
    if (text === "true" || text === "false") type = "boolean";
    else if (text === "null") type = "null";
    else if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) type = "number";
    else throw new JsonStreamError(`"${text.slice(0, 20)}" is not a JSON value`);
    this.handler.scalar?.(type);
    this.afterValue(index);
  }

  /** Reads string content from `i`; returns where it stopped. */
  private readString(chunk: string, i: number): number {
    const state = this.inString!;
    let out = "";
    const n = chunk.length;
    while (i < n) {
      if (state.escape !== null) {
        state.escape += chunk[i]!;
        i++;
        const decoded = this.decodeEscape(state.escape);
        if (decoded !== undefined) {
          if (state.collect) out += decoded;
          state.escape = null;
        }
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (c === 0x5c) {
        state.escape = "";
        i++;
        continue;
      }
      if (c === 0x22) {
        this.deliver(state, out, true);
        this.inString = null;
        if (state.key) {
          this.handler.key?.(state.text);
          this.expect = "colon";
        } else {
          if (state.collect) this.handler.stringEnd?.(state.total <= MAX_COLLECTED_STRING ? state.text : undefined);
          this.handler.scalar?.("string");
          this.afterValue(i + 1);
        }
        return i + 1;
      }
      // Plain characters up to the next quote or backslash, found with indexOf, in one slice.
      const quote = chunk.indexOf('"', i + 1);
      const j = Math.min(quote < 0 ? n : quote, this.backslashAfter(chunk, i + 1));
      if (state.collect) out += chunk.slice(i, j);
      i = j;
    }
    this.deliver(state, out, false);
    return i;
  }

  /**
   * Hands a decoded piece on. A piece that ends with a high surrogate (an escaped pair
   * whose two escapes arrive in different chunks) keeps it for the next one: a consumer
   * that encodes pieces one by one would turn each half into U+FFFD.
   */
  private deliver(state: NonNullable<JsonStreamTokenizer["inString"]>, piece: string, last: boolean): void {
    if (!state.collect) return;
    let text = state.pending + piece;
    state.pending = "";
    const end = text.charCodeAt(text.length - 1);
    if (!last && end >= 0xd800 && end <= 0xdbff) {
      state.pending = text.slice(-1);
      text = text.slice(0, -1);
    }
    if (text === "") return;
    state.total += text.length;
    if (state.key && state.total > MAX_COLLECTED_STRING) throw new JsonStreamError("a key longer than 1 MiB");
    if (state.total <= MAX_COLLECTED_STRING) state.text += text;
    if (!state.key) this.handler.stringChunk?.(text);
  }

  /** The character an escape stands for, or undefined while it is incomplete. */
  private decodeEscape(sequence: string): string | undefined {
    const simple: Record<string, string> = {
      '"': '"',
      "\\": "\\",
      "/": "/",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
    };
    if (sequence.length === 1 && sequence in simple) return simple[sequence];
    if (sequence[0] !== "u") throw new JsonStreamError(`invalid escape "\\${sequence}"`);
    if (sequence.length < 5) return undefined;
    const code = sequence.slice(1, 5);
    if (!/^[0-9a-fA-F]{4}$/.test(code)) throw new JsonStreamError(`invalid escape "\\${sequence}"`);
    // Surrogate halves pass one by one; joined in a JavaScript string they form the pair.
    return String.fromCharCode(parseInt(code, 16));
  }
}
