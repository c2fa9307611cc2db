/**
 * Checking a JSON-RPC success response on its UTF-8 bytes as they arrive, piece by piece,
 * without decoding them or joining the pieces (issue 38): the relay can then hand a large
 * answer no policy changes to the client as the upstream's own pieces. One pass over each
 * byte, resumable at any byte: a piece may end inside a string, an escape, a character, a
 * number or a literal. The bytes must be one JSON text `JSON.parse` accepts, in
 * well-formed UTF-8, so that what is passed on is exactly what decoding and encoding again
 * would have sent; and exactly `{"jsonrpc":"2.0","id":…,"result":{…}}` in any order and
 * spacing, the result's `resultType`, if any, `"complete"` (core/response-bytes.ts says why). Anything else ends the check as "not plain",
 * and the caller reads the text the ordinary way.
 */
import type { Span } from "./raw-json";

/** Where a plain response's id and result are, in bytes from its start, and what its result says at its top. */
export type ResponseLayout = {
  readonly id: Span;
  /** The id's JSON text (a number, or a string without escapes, quotes included). */
  readonly idRaw: string;
  readonly result: Span;
  /** The result has `"isError":true` (a tool error). */
  readonly toolError: boolean;
  /** The result has a `structuredContent` member whose (last) value is not an object. */
  readonly structuredNotObject: boolean;
  /** The result is `{}` (spaces aside). */
  readonly resultEmpty: boolean;
  /** The result says `"resultType":"complete"` (a 2026-07-28 upstream's result; any other resultType is not plain). */
  readonly complete: boolean;
  /** The text has a line break (CR or LF) somewhere, always between tokens: a string holds none raw. */
  readonly lineBreaks: boolean;
};

/** The longest id (its JSON text, in bytes) a response may have to be passed on as bytes. */
export const MAX_PLAIN_ID_BYTES = 1024;
/**
 * The deepest a plain response nests: what the checker keeps per level is bounded by it (an
 * answer passed on as it flows is never held whole, so its nesting is the only thing it could
 * make the checker hold more of). A deeper one is read as text, within what is held whole.
 */
export const MAX_PLAIN_DEPTH = 10_000;
/** Member names compared at the top and in the result are this short; a longer one is "other". */
const MAX_NAME_BYTES = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

// What the next byte may be.
const VALUE = 0; // a value
const FIRST_MEMBER = 1; // a name or `}`, after `{`
const NAME = 2; // a name, after `,`
const COLON_NEXT = 3; // the colon after a name
const FIRST_ELEMENT = 4; // a value or `]`, after `[`
const AFTER = 5; // `,` or the container's close, after a value
const END = 6; // nothing but space: the text is complete
const STRING = 7;
const ESCAPE = 8;
const HEX = 9;
const UTF8 = 10;
const INT_START = 11; // after `-`: a digit
const INT = 12; // digits (not after a leading zero)
const FRACTION_START = 13; // after `.`: a digit
const FRACTION = 14;
const EXPONENT_SIGN = 15; // after `e`: a sign or a digit
const EXPONENT_START = 16; // after the sign: a digit
const EXPONENT = 17;
const LEADING_ZERO = 18; // after a leading `0`: `.`, `e` or the end
const LITERAL = 19;
const NOT_PLAIN = 20;

// Which member of the top (or of the result) a value belongs to.
const OTHER = 0;
const VERSION = 1;
const ID = 2;
const RESULT = 3;
const IS_ERROR = 4;
const STRUCTURED = 5;
const RESULT_TYPE = 6;

const IN_OBJECT = 1;
const IN_ARRAY = 2;

const decoder = new TextDecoder();
const TOP_NAMES = new Map([
  ["jsonrpc", VERSION],
  ["id", ID],
  ["result", RESULT],
]);
const RESULT_NAMES = new Map([
  ["isError", IS_ERROR],
  ["structuredContent", STRUCTURED],
  ["resultType", RESULT_TYPE],
]);
const LITERALS = ["true", "false", "null"].map((word) => Uint8Array.from(word, (c) => c.charCodeAt(0)));

function isDigit(byte: number): boolean {
  return byte >= ZERO && byte <= NINE;
}

function isHex(byte: number): boolean {
  return isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

/** The escapes JSON allows after a backslash, besides `u`: " \ / b f n r t. */
function isSimpleEscape(byte: number): boolean {
  return (
    byte === 0x22 ||
    byte === 0x5c ||
    byte === 0x2f ||
    byte === 0x62 ||
    byte === 0x66 ||
    byte === 0x6e ||
    byte === 0x72 ||
    byte === 0x74
  );
}

/**
 * A response's bytes, checked as they come: `push` each piece, then `end`.
 *
 * @example
 * const check = new ResponseCheck();
 * for (const piece of pieces) check.push(piece);
 * check.end(); // the layout, or undefined for anything but a plain success response
 */
export class ResponseCheck {
  #mode = VALUE;
  /** The containers open around what is read, innermost last (IN_OBJECT or IN_ARRAY). */
  #open: number[] = [];
  /** Bytes pushed so far: where the next piece starts in the text. */
  #offset = 0;
  #stringIsName = false;
  #escapedString = false;
  #hexLeft = 0;
  #utf8Left = 0;
  #utf8Low = 0x80;
  #utf8High = 0xbf;
  #literal: Uint8Array = LITERALS[0]!;
  #literalAt = 0;
  /** The bytes of a name at the top or in the result, or of the top's `jsonrpc` or `id` value, while read. */
  #captured: number[] | undefined;
  #capturedLong = false;
  /** The member of the top whose value is being read, and of the result's top. */
  #topMember = OTHER;
  #resultMember = OTHER;
  #valueStart = 0;
  #seen = 0;
  #id: Span | undefined;
  #idRaw = "";
  #result: Span | undefined;
  #resultStart = 0;
  #toolError = false;
  #structuredNotObject = false;
  #resultEmpty = true;
  #complete = false;
  /** The mode where `#deep` stopped. */
  #deepMode = VALUE;
  /** A line break was read between tokens (the only place a checked text may have one). */
  #lineBreaks = false;

  /** True once the bytes read cannot be a plain success response, whatever follows (`end` will say undefined). */
  get failed(): boolean {
    return this.#mode === NOT_PLAIN;
  }

  /** The id's JSON text once its value was read (a number, or a string without escapes); undefined before. */
  get idRaw(): string | undefined {
    return this.#id ? this.#idRaw : undefined;
  }

  /** True once a line break was read (between tokens, the only place a checked text has one). */
  get lineBreaks(): boolean {
    return this.#lineBreaks;
  }

  /** Reads `piece`, the next bytes of the text. */
  push(piece: Uint8Array): void {
    let mode = this.#mode;
    if (mode === NOT_PLAIN) return;
    const base = this.#offset;
    this.#offset += piece.byteLength;
    const length = piece.byteLength;
    let i = 0;
    /** Where the bytes being captured start in this piece. */
    let capture = this.#captured ? 0 : -1;
    while (i < length) {
      const byte = piece[i]!;
      switch (mode) {
        case STRING: {
          let b = byte;
          // Most of a string is a run of plain ASCII.
          while (b >= 0x20 && b < 0x80 && b !== QUOTE && b !== BACKSLASH && ++i < length) b = piece[i]!;
          if (i >= length) continue;
          if (b === QUOTE) {
            i++;
            if (this.#open.length > 2) {
              // Deep inside the result: nothing to note of a string.
              mode = this.#stringIsName ? COLON_NEXT : AFTER;
              this.#stringIsName = false;
              continue;
            }
            // A name is kept without its quotes, a value with them.
            if (capture >= 0) this.#keep(piece, capture, this.#stringIsName ? i - 1 : i);
            capture = -1;
            mode = this.#stringEnd(base + i);
          } else if (b === BACKSLASH) {
            this.#escapedString = true;
            i++;
            mode = ESCAPE;
          } else if (b < 0x20) mode = NOT_PLAIN;
          else {
            mode = this.#utf8Lead(b);
            i++;
          }
          continue;
        }
        case ESCAPE:
          if (isSimpleEscape(byte)) mode = STRING;
          else if (byte === 0x75) {
            mode = HEX;
            this.#hexLeft = 4;
          } else mode = NOT_PLAIN;
          i++;
          continue;
        case HEX:
          if (!isHex(byte)) mode = NOT_PLAIN;
          else if (--this.#hexLeft === 0) mode = STRING;
          i++;
          continue;
        case UTF8:
          if (byte < this.#utf8Low || byte > this.#utf8High) mode = NOT_PLAIN;
          else if (--this.#utf8Left === 0) mode = STRING;
          this.#utf8Low = 0x80;
          this.#utf8High = 0xbf;
          i++;
          continue;
        case LITERAL:
          if (byte !== this.#literal[this.#literalAt]) mode = NOT_PLAIN;
          else if (++this.#literalAt === this.#literal.length) mode = this.#valueEnd(base + i + 1);
          i++;
          continue;
        case INT_START:
          if (byte === ZERO) mode = LEADING_ZERO;
          else if (isDigit(byte)) mode = INT;
          else mode = NOT_PLAIN;
          i++;
          continue;
        case INT:
        case FRACTION:
        case EXPONENT:
          if (isDigit(byte)) {
            i++;
            continue;
          }
          if (mode === INT && (byte === 0x2e || byte === 0x65 || byte === 0x45)) {
            mode = byte === 0x2e ? FRACTION_START : EXPONENT_SIGN;
            i++;
            continue;
          }
          if (mode === FRACTION && (byte === 0x65 || byte === 0x45)) {
            mode = EXPONENT_SIGN;
            i++;
            continue;
          }
          if (capture >= 0) this.#keep(piece, capture, i);
          capture = -1;
          mode = this.#open.length > 2 ? AFTER : this.#valueEnd(base + i); // the byte after the number is read again
          continue;
        case LEADING_ZERO:
          if (byte === 0x2e || byte === 0x65 || byte === 0x45) {
            mode = byte === 0x2e ? FRACTION_START : EXPONENT_SIGN;
            i++;
            continue;
          }
          if (capture >= 0) this.#keep(piece, capture, i);
          capture = -1;
          mode = this.#open.length > 2 ? AFTER : this.#valueEnd(base + i);
          continue;
        case FRACTION_START:
          mode = isDigit(byte) ? FRACTION : NOT_PLAIN;
          i++;
          continue;
        case EXPONENT_SIGN:
          mode = byte === 0x2b || byte === MINUS ? EXPONENT_START : isDigit(byte) ? EXPONENT : NOT_PLAIN;
          i++;
          continue;
        case EXPONENT_START:
          mode = isDigit(byte) ? EXPONENT : NOT_PLAIN;
          i++;
          continue;
        case NOT_PLAIN:
          i = length; // nothing more to read
          continue;
        default:
          break;
      }
      // Between tokens.
      if (byte === 0x20 || byte === 0x09) {
        i++;
        continue;
      }
      if (byte === 0x0a || byte === 0x0d) {
        this.#lineBreaks = true;
        i++;
        continue;
      }
      const open = this.#open;
      if (open.length > 2) {
        // Deep inside the result nothing is noted: runs of the common tokens are read by `#deep`, the rest here.
        const next = this.#deep(piece, i, mode);
        if (next !== i) {
          i = next;
          mode = this.#deepMode;
          continue;
        }
        if (mode === AFTER && byte === COMMA) {
          mode = open[open.length - 1] === IN_OBJECT ? NAME : VALUE;
          i++;
          continue;
        }
        if (mode === COLON_NEXT) {
          mode = byte === COLON ? VALUE : NOT_PLAIN;
          i++;
          continue;
        }
        if (byte === QUOTE && mode !== AFTER) {
          this.#stringIsName = mode === NAME || mode === FIRST_MEMBER;
          this.#escapedString = false;
          mode = STRING;
          i++;
          continue;
        }
        if (mode === VALUE || mode === FIRST_ELEMENT) {
          if (byte >= 0x31 && byte <= NINE) mode = INT;
          else if (byte === ZERO) mode = LEADING_ZERO;
          else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
            if (open.length >= MAX_PLAIN_DEPTH) mode = NOT_PLAIN;
            else {
              open.push(byte === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY);
              mode = byte === OPEN_OBJECT ? FIRST_MEMBER : FIRST_ELEMENT;
            }
          } else {
            mode = this.#token(byte, mode, base + i);
          }
          i++;
          continue;
        }
        if (open.length > 3 && byte === (open[open.length - 1] === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          if (mode === AFTER || mode === (byte === CLOSE_OBJECT ? FIRST_MEMBER : FIRST_ELEMENT)) {
            open.pop();
            mode = AFTER;
            i++;
            continue;
          }
        }
      }
      mode = this.#token(byte, mode, base + i);
      if (mode === STRING || mode === INT || mode === INT_START || mode === LEADING_ZERO) {
        this.#escapedString = false;
        if (this.#captured) capture = mode === STRING && this.#stringIsName ? i + 1 : i;
      }
      i++;
    }
    if (capture >= 0 && mode !== NOT_PLAIN) this.#keep(piece, capture, length);
    this.#mode = mode;
  }

  /** The layout of a plain success response, once every piece is pushed; undefined for anything else. */
  end(): ResponseLayout | undefined {
    let mode = this.#mode;
    // A number ends with the text (only at the top, which is never a number here).
    if (mode !== END || this.#seen !== 0b111 || !this.#id || !this.#result) return undefined;
    mode = NOT_PLAIN;
    this.#mode = mode;
    return {
      id: this.#id,
      idRaw: this.#idRaw,
      result: this.#result,
      toolError: this.#toolError,
      structuredNotObject: this.#structuredNotObject,
      resultEmpty: this.#resultEmpty,
      complete: this.#complete,
      lineBreaks: this.#lineBreaks,
    };
  }

  /**
   * Reads `piece` from `i`, between tokens in `mode` deep in the result (more than two
   * containers open), for as long as it holds only the common tokens: spaces, `,` `:`,
   * strings of plain ASCII, numbers without an exponent, and containers opened and closed
   * deeper than the result's members. Returns where it stopped (`i` when it read nothing),
   * with the mode there in `#deepMode`: at the piece's end (inside a string or a number,
   * or between tokens), or before anything else, which the general loop reads.
   */
  #deep(piece: Uint8Array, i: number, mode: number): number {
    const open = this.#open;
    const length = piece.length;
    let depth = open.length;
    let inside = open[depth - 1]!;
    while (i < length) {
      let b = piece[i]!;
      if (b === 0x20 || b === 0x09) {
        i++;
        continue;
      }
      if (mode === AFTER) {
        if (b === COMMA) mode = inside === IN_OBJECT ? NAME : VALUE;
        else if (depth > 3 && b === (inside === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          open.pop();
          inside = open[--depth - 1]!;
        } else break;
        i++;
        continue;
      }
      if (mode === COLON_NEXT) {
        if (b !== COLON) break;
        mode = VALUE;
        i++;
        continue;
      }
      if (b === QUOTE) {
        // A name, or a string value: plain ASCII to its closing quote, else the general loop reads on inside it.
        const name = mode === NAME || mode === FIRST_MEMBER;
        let j = i + 1;
        b = j < length ? piece[j]! : 0;
        while (b >= 0x20 && b < 0x80 && b !== QUOTE && b !== BACKSLASH && ++j < length) b = piece[j]!;
        if (j < length && b === QUOTE) {
          mode = name ? COLON_NEXT : AFTER;
          i = j + 1;
          continue;
        }
        this.#stringIsName = name;
        this.#escapedString = false;
        this.#deepMode = STRING;
        return j;
      }
      if (mode === NAME) break;
      if ((b === CLOSE_OBJECT && mode === FIRST_MEMBER) || (b === CLOSE_ARRAY && mode === FIRST_ELEMENT)) {
        if (depth <= 3) break;
        open.pop();
        inside = open[--depth - 1]!;
        mode = AFTER;
        i++;
        continue;
      }
      if (mode === FIRST_MEMBER) break;
      // A value (mode VALUE or FIRST_ELEMENT).
      if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (depth >= MAX_PLAIN_DEPTH) break;
        inside = b === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY;
        open.push(inside);
        depth++;
        mode = b === OPEN_OBJECT ? FIRST_MEMBER : FIRST_ELEMENT;
        i++;
        continue;
      }
      if (b < 0x31 || b > NINE) break;
      // A number that starts with 1-9: its digits, and a fraction's; an exponent is read by the general loop.
      let j = i + 1;
      while (j < length && isDigit(piece[j]!)) j++;
      if (j === length) {
        this.#deepMode = INT;
        return j;
      }
      if (piece[j] === 0x2e) {
        const fraction = ++j;
        while (j < length && isDigit(piece[j]!)) j++;
        if (j === length) {
          this.#deepMode = j === fraction ? FRACTION_START : FRACTION;
          return j;
        }
        if (j === fraction) {
          this.#deepMode = FRACTION_START;
          return j;
        }
        b = piece[j]!;
        if (b === 0x65 || b === 0x45) {
          this.#deepMode = FRACTION;
          return j;
        }
      } else if (piece[j] === 0x65 || piece[j] === 0x45) {
        this.#deepMode = INT;
        return j;
      }
      // The byte after the number is read again, between tokens.
      mode = AFTER;
      i = j;
    }
    this.#deepMode = mode;
    return i;
  }

  /** The mode after a token's first byte (`byte`, at `at` from the text's start), read in `mode`. */
  #token(byte: number, mode: number, at: number): number {
    if (mode === END) return NOT_PLAIN;
    if (mode === COLON_NEXT) return byte === COLON ? VALUE : NOT_PLAIN;
    if (mode === AFTER) {
      const inside = this.#open.at(-1);
      if (byte === COMMA) return inside === IN_OBJECT ? NAME : VALUE;
      if (byte !== (inside === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return NOT_PLAIN;
      return this.#close(at);
    }
    if (mode === FIRST_MEMBER && byte === CLOSE_OBJECT) return this.#close(at);
    if (mode === FIRST_ELEMENT && byte === CLOSE_ARRAY) return this.#close(at);
    if (mode === FIRST_MEMBER || mode === NAME) {
      if (byte !== QUOTE) return NOT_PLAIN;
      this.#stringIsName = true;
      const depth = this.#open.length;
      this.#startCapture(depth === 1 || (depth === 2 && this.#topMember === RESULT));
      return STRING;
    }
    // A value.
    const depth = this.#open.length;
    if (depth === 0 && byte !== OPEN_OBJECT) return NOT_PLAIN;
    this.#valueStart = at;
    if (depth === 1) {
      const member = this.#topMember;
      if (member === RESULT && byte !== OPEN_OBJECT) return NOT_PLAIN;
      if (member === VERSION && byte !== QUOTE) return NOT_PLAIN;
      if (member === ID && byte !== QUOTE && byte !== MINUS && !isDigit(byte)) return NOT_PLAIN;
      if (member === RESULT) this.#resultStart = at;
      this.#startCapture(member === VERSION || member === ID);
    } else if (depth === 2 && this.#topMember === RESULT) {
      if (this.#resultMember === IS_ERROR && byte === 0x74) this.#toolError = true;
      if (this.#resultMember === STRUCTURED) this.#structuredNotObject = byte !== OPEN_OBJECT;
      if (this.#resultMember === RESULT_TYPE) {
        if (byte !== QUOTE) return NOT_PLAIN;
        this.#startCapture(true);
      }
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (this.#open.length >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
      this.#open.push(byte === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY);
      return byte === OPEN_OBJECT ? FIRST_MEMBER : FIRST_ELEMENT;
    }
    if (byte === QUOTE) {
      this.#stringIsName = false;
      return STRING;
    }
    if (byte === MINUS) return INT_START;
    if (byte === ZERO) return LEADING_ZERO;
    if (isDigit(byte)) return INT;
    const literal = LITERALS.find((word) => word[0] === byte);
    if (!literal) return NOT_PLAIN;
    this.#literal = literal;
    this.#literalAt = 1;
    return LITERAL;
  }

  /** The mode after the close of the innermost container, at `at`. */
  #close(at: number): number {
    this.#open.pop();
    return this.#valueEnd(at + 1);
  }

  /** The mode after a value that ended at `end`: its member's part of the layout noted. */
  #valueEnd(end: number): number {
    const depth = this.#open.length;
    if (depth === 0) return END;
    if (depth === 1) {
      const member = this.#topMember;
      const captured = this.#takeCapture(MAX_PLAIN_ID_BYTES);
      if (member === VERSION && captured !== '"2.0"') return NOT_PLAIN;
      if (member === ID) {
        if (captured === undefined || this.#escapedString) return NOT_PLAIN;
        this.#id = { start: this.#valueStart, end };
        this.#idRaw = captured;
      }
      if (member === RESULT) this.#result = { start: this.#resultStart, end };
      this.#topMember = OTHER;
    } else if (depth === 2 && this.#topMember === RESULT) {
      if (this.#resultMember === RESULT_TYPE) {
        // Only a complete result is plain (an `input_required` one is read by the eras); only once.
        const captured = this.#takeCapture(MAX_NAME_BYTES);
        if (captured !== '"complete"' || this.#escapedString || this.#complete) return NOT_PLAIN;
        this.#complete = true;
      }
      this.#resultMember = OTHER;
    }
    return AFTER;
  }

  /** The mode after a string that ended before `end`: a name's member noted, or the value's end. */
  #stringEnd(end: number): number {
    if (!this.#stringIsName) return this.#valueEnd(end);
    this.#stringIsName = false;
    const depth = this.#open.length;
    if (depth === 1 || (depth === 2 && this.#topMember === RESULT)) {
      const name = this.#takeCapture(MAX_NAME_BYTES);
      // An escaped name may spell one of these: such a response is read the ordinary way.
      if (this.#escapedString) return NOT_PLAIN;
      if (depth === 1) {
        const member = name === undefined ? undefined : TOP_NAMES.get(name);
        if (member === undefined || this.#seen & (1 << (member - 1))) return NOT_PLAIN;
        this.#seen |= 1 << (member - 1);
        this.#topMember = member;
      } else {
        this.#resultMember = name === undefined ? OTHER : (RESULT_NAMES.get(name) ?? OTHER);
        this.#resultEmpty = false;
      }
    }
    return COLON_NEXT;
  }

  #startCapture(wanted: boolean): void {
    this.#captured = wanted ? [] : undefined;
    this.#capturedLong = false;
  }

  /** Keeps `piece[from..to]` of what is being captured, up to a bound. */
  #keep(piece: Uint8Array, from: number, to: number): void {
    const captured = this.#captured;
    if (!captured || this.#capturedLong) return;
    if (captured.length + (to - from) > MAX_PLAIN_ID_BYTES) {
      this.#capturedLong = true;
      return;
    }
    for (let i = from; i < to; i++) captured.push(piece[i]!);
  }

  /** What was captured as text (a name without its quotes, a value with them); undefined when longer than `max` bytes. */
  #takeCapture(max: number): string | undefined {
    const captured = this.#captured;
    this.#captured = undefined;
    if (!captured || this.#capturedLong || captured.length > max) return undefined;
    return decoder.decode(Uint8Array.from(captured));
  }

  /** The mode after a character's lead byte `lead` in a string. */
  #utf8Lead(lead: number): number {
    if (lead >= 0xc2 && lead <= 0xdf) {
      this.#utf8Left = 1;
      return UTF8;
    }
    if (lead >= 0xe0 && lead <= 0xef) {
      this.#utf8Left = 2;
      this.#utf8Low = lead === 0xe0 ? 0xa0 : 0x80;
      this.#utf8High = lead === 0xed ? 0x9f : 0xbf;
      return UTF8;
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
      this.#utf8Left = 3;
      this.#utf8Low = lead === 0xf0 ? 0x90 : 0x80;
      this.#utf8High = lead === 0xf4 ? 0x8f : 0xbf;
      return UTF8;
    }
    return NOT_PLAIN;
  }
}
