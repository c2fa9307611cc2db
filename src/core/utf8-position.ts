/**
 * Byte offsets of positions in text that arrives as JavaScript strings: the tokenizer
 * reports where values start as indexes into the current chunk (UTF-16 units), R2
 * ranges are in UTF-8 bytes. Positions are asked for in increasing order within a
 * chunk, so each character is measured once.
 */

/** The first character that is not ASCII, searched by the regular expression engine (native code). */
const NOT_ASCII = /[\u0080-\uffff]/g;

/**
 * The UTF-8 length of `text[from, to)`; a surrogate pair counts 4, a lone half 3 (as TextEncoder writes U+FFFD).
 * The ASCII run up to the first other character counts one byte a character without a loop
 * in JavaScript: the byte count of a 10 MiB answer (pipeline/record-calls.ts) took about 6%
 * of the gateway's JavaScript relaying it, character by character (docs/benchmarks.md).
 */
export function utf8Length(text: string, from = 0, to = text.length): number {
  // Searched in the range only (a slice shares the text's memory): positions asked in a chunk stay linear.
  NOT_ASCII.lastIndex = 0;
  const found = NOT_ASCII.exec(from === 0 && to === text.length ? text : text.slice(from, to));
  if (!found) return Math.max(0, to - from);
  const other = from + found.index;
  let bytes = other - from;
  for (let i = other; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Maps indexes of the current chunk to byte offsets of the whole text. */
export class Utf8Position {
  private chunk = "";
  private base = 0;
  private char = 0;
  private byte = 0;

  /** Starts the next chunk; `byteOffset` is where it starts (by default, where the last one ended). */
  next(chunk: string, byteOffset?: number): void {
    const end = this.base + this.byte + utf8Length(this.chunk, this.char);
    this.chunk = chunk;
    this.base = byteOffset ?? end;
    this.char = 0;
    this.byte = 0;
  }

  /** The byte offset of index `i` of the current chunk (not less than the last one asked). */
  at(i: number): number {
    // A surrogate pair is never split by the indexes asked (they are structural characters).
    if (i <= this.char) return this.base + this.byte;
    this.byte += utf8Length(this.chunk, this.char, i);
    this.char = i;
    return this.base + this.byte;
  }
}
