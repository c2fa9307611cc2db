/**
 * Reading a JSON-RPC notification on its UTF-8 bytes, without decoding it, so that the
 * relay can pass one it does not change on as the upstream's bytes (upstream/reply-body.ts).
 * The bytes are checked whole: one JSON text that `JSON.parse` accepts, in well-formed
 * UTF-8, so that what is passed on is exactly what decoding, parsing and encoding again
 * would have sent. Read of it: its method, `params.level` and whether `params` has `_meta`.
 *
 * Anything this reader is not sure of is answered with `undefined` (not a plain
 * notification, an escaped or duplicate member name where the names matter, an escaped
 * method or level, a message the gateway would refuse): the caller then reads the text
 * the ordinary way, which answers it as it always has.
 */

/** What the relay needs to know of a notification it may pass on as bytes. */
export type NotificationHead = {
  readonly method: string;
  /** `params.level` when it is a string (a log message's level). */
  readonly level?: string;
  /** `params` has a `_meta` member (which may name a task: features/tasks/task-ids.ts). */
  readonly meta: boolean;
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const IN_OBJECT = 1;
const IN_ARRAY = 2;
/** The escapes JSON allows after a backslash, besides `u`: " \ / b f n r t. */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const LITERALS = ["true", "false", "null"].map((word) => Uint8Array.from(word, (c) => c.charCodeAt(0)));
const JSONRPC_VERSION = '"2.0"';

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= ZERO && byte <= NINE;
}

function isHex(byte: number | undefined): boolean {
  return byte !== undefined && (isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66));
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x80 && byte <= 0xbf;
}

/** One pass over a JSON text's bytes (also core/response-bytes.ts); every method answers the offset after what it read, or -1 for bytes it does not accept. */
export class JsonBytes {
  /** Whether the last string read had an escape. */
  escaped = false;

  constructor(readonly bytes: Uint8Array) {}

  space(at: number): number {
    const { bytes } = this;
    for (let byte = bytes[at]; byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09; byte = bytes[at]) at++;
    return at;
  }

  /** A string opening at `at`: its escapes valid, no control character, well-formed UTF-8. */
  string(at: number): number {
    const { bytes } = this;
    const length = bytes.length;
    if (bytes[at] !== QUOTE) return -1;
    this.escaped = false;
    let i = at + 1;
    for (;;) {
      // Most of a long string is a run of plain ASCII.
      let byte = -1;
      // biome-ignore lint/suspicious/noAssignInExpressions: the byte loop of every string scan reads each byte once.
      while (i < length && (byte = bytes[i]!) >= 0x20 && byte < 0x80 && byte !== QUOTE && byte !== BACKSLASH) i++;
      if (i >= length || byte < 0x20) return -1;
      if (byte === QUOTE) return i + 1;
      if (byte === BACKSLASH) {
        this.escaped = true;
        const escaped = bytes[i + 1]!;
        if (SIMPLE_ESCAPES.has(escaped)) i += 2;
        else if (
          escaped === 0x75 &&
          isHex(bytes[i + 2]) &&
          isHex(bytes[i + 3]) &&
          isHex(bytes[i + 4]) &&
          isHex(bytes[i + 5])
        )
          i += 6;
        else return -1;
        continue;
      }
      i = this.character(i);
      if (i < 0) return -1;
    }
  }

  /** A character of 2 to 4 bytes (Unicode's well-formed UTF-8: no overlong form, no surrogate, nothing past U+10FFFF). */
  private character(at: number): number {
    const { bytes } = this;
    const lead = bytes[at]!;
    const second = bytes[at + 1];
    if (lead >= 0xc2 && lead <= 0xdf) return isContinuation(second) ? at + 2 : -1;
    if (lead >= 0xe0 && lead <= 0xef) {
      const low = lead === 0xe0 ? 0xa0 : 0x80;
      const high = lead === 0xed ? 0x9f : 0xbf;
      return second !== undefined && second >= low && second <= high && isContinuation(bytes[at + 2]) ? at + 3 : -1;
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
      const low = lead === 0xf0 ? 0x90 : 0x80;
      const high = lead === 0xf4 ? 0x8f : 0xbf;
      return second !== undefined &&
        second >= low &&
        second <= high &&
        isContinuation(bytes[at + 2]) &&
        isContinuation(bytes[at + 3])
        ? at + 4
        : -1;
    }
    return -1;
  }

  private number(at: number): number {
    const { bytes } = this;
    let i = at;
    if (bytes[i] === MINUS) i++;
    if (bytes[i] === ZERO) i++;
    else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
    else return -1;
    if (bytes[i] === DOT) {
      if (!isDigit(bytes[++i])) return -1;
      while (isDigit(bytes[i])) i++;
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      i++;
      if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
      if (!isDigit(bytes[i])) return -1;
      while (isDigit(bytes[i])) i++;
    }
    return i;
  }

  private literal(at: number): number {
    for (const word of LITERALS) {
      if (word.every((byte, i) => this.bytes[at + i] === byte)) return at + word.length;
    }
    return -1;
  }

  /** A member name and its colon, from `at` (after any space): the offset of the value's start. */
  private name(at: number): number {
    const end = this.string(this.space(at));
    if (end < 0) return -1;
    const colon = this.space(end);
    return this.bytes[colon] === COLON ? this.space(colon + 1) : -1;
  }

  /** Any JSON value starting at `at` (space before it skipped); nested values with a stack, not recursion. */
  value(at: number): number {
    const { bytes } = this;
    const open: number[] = [];
    let i = this.space(at);
    for (;;) {
      const byte = bytes[i];
      if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        const first = this.space(i + 1);
        if (bytes[first] === (byte === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) i = first + 1;
        else {
          open.push(byte === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY);
          i = byte === OPEN_OBJECT ? this.name(first) : first;
          if (i < 0) return -1;
          continue;
        }
      } else if (byte === QUOTE) i = this.string(i);
      else if (byte === MINUS || isDigit(byte)) i = this.number(i);
      else i = this.literal(i);
      // After a value: close what it ends, or go on to the next member or element.
      for (;;) {
        if (i < 0) return -1;
        const inside = open.at(-1);
        if (inside === undefined) return i;
        i = this.space(i);
        if (bytes[i] === (inside === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          open.pop();
          i++;
          continue;
        }
        if (bytes[i] !== COMMA) return -1;
        i = inside === IN_OBJECT ? this.name(i + 1) : this.space(i + 1);
        break;
      }
      if (i < 0) return -1;
    }
  }

  /**
   * The members of the object opening at `at`: `member` is called with each name's offsets
   * (quotes excluded; undefined when the name has an escape) and the value's start, and
   * answers the value's end. Returns the offset after the object.
   */
  members(at: number, member: (nameStart: number, nameEnd: number, valueStart: number) => number): number {
    const { bytes } = this;
    if (bytes[at] !== OPEN_OBJECT) return -1;
    let i = this.space(at + 1);
    if (bytes[i] === CLOSE_OBJECT) return i + 1;
    for (;;) {
      const nameEnd = this.string(i);
      if (nameEnd < 0 || this.escaped) return -1;
      const colon = this.space(nameEnd);
      if (bytes[colon] !== COLON) return -1;
      i = member(i + 1, nameEnd - 1, this.space(colon + 1));
      if (i < 0) return -1;
      i = this.space(i);
      if (bytes[i] === CLOSE_OBJECT) return i + 1;
      if (bytes[i] !== COMMA) return -1;
      i = this.space(i + 1);
    }
  }

  is(start: number, end: number, text: string): boolean {
    if (end - start !== text.length) return false;
    for (let i = 0; i < text.length; i++) if (this.bytes[start + i] !== text.charCodeAt(i)) return false;
    return true;
  }
}

/**
 * The head of a notification given as its JSON text's UTF-8 bytes, when the bytes are
 * exactly one plain JSON-RPC notification the gateway accepts; undefined otherwise (a
 * request or response, invalid JSON or UTF-8, an escaped member name at the top or in
 * `params`, a duplicate `jsonrpc`, `method`, `params` or `level`).
 *
 * @example
 * notificationHead(new TextEncoder().encode('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"…"}}'));
 * // { method: "notifications/message", level: "info", meta: false }
 */
export function notificationHead(bytes: Uint8Array): NotificationHead | undefined {
  const json = new JsonBytes(bytes);
  let version = false;
  let method: string | undefined;
  let params = false;
  let level: string | undefined;
  let levelSeen = false;
  let meta = false;
  const inParams = (nameStart: number, nameEnd: number, valueStart: number): number => {
    const end = json.value(valueStart);
    if (end < 0) return -1;
    if (json.is(nameStart, nameEnd, "level")) {
      if (levelSeen) return -1;
      levelSeen = true;
      if (bytes[valueStart] === QUOTE) {
        // A string value: `escaped` is still about it. An escaped level is read the ordinary way.
        if (json.escaped) return -1;
        level = decoder.decode(bytes.subarray(valueStart + 1, end - 1));
      }
    } else if (json.is(nameStart, nameEnd, "_meta")) meta = true;
    return end;
  };
  const atTop = (nameStart: number, nameEnd: number, valueStart: number): number => {
    if (
      json.is(nameStart, nameEnd, "id") ||
      json.is(nameStart, nameEnd, "result") ||
      json.is(nameStart, nameEnd, "error")
    )
      return -1;
    if (json.is(nameStart, nameEnd, "jsonrpc")) {
      if (version) return -1;
      const end = json.value(valueStart);
      version = json.is(valueStart, end, JSONRPC_VERSION);
      return version ? end : -1;
    }
    if (json.is(nameStart, nameEnd, "method")) {
      const end = method === undefined && bytes[valueStart] === QUOTE ? json.string(valueStart) : -1;
      if (end < 0 || json.escaped || end - valueStart === 2) return -1;
      method = decoder.decode(bytes.subarray(valueStart + 1, end - 1));
      return end;
    }
    if (json.is(nameStart, nameEnd, "params")) {
      if (params) return -1;
      params = true;
      return json.members(valueStart, inParams);
    }
    return json.value(valueStart);
  };
  const start = json.space(0);
  const end = json.members(start, atTop);
  if (end < 0 || json.space(end) !== bytes.length || !version || method === undefined) return undefined;
  return { method, ...(level !== undefined ? { level } : {}), meta };
}
