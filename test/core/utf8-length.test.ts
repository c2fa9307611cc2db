/**
 * The UTF-8 length of text (core/utf8-position.ts), which counts the bytes a call sent to
 * its client (pipeline/record-calls.ts) and places R2 ranges of offloaded payloads: it
 * skips the ASCII run before the first other character without a loop, and must still
 * count what TextEncoder writes, over the whole text and over any range of it.
 */
import { describe, expect, it } from "vitest";
import { utf8Length, Utf8Position } from "../../src/core/utf8-position";

const encoder = new TextEncoder();

/** What TextEncoder writes for `text[from, to)` (a lone surrogate half as U+FFFD, 3 bytes). */
function encodedLength(text: string, from = 0, to = text.length): number {
  return encoder.encode(text.slice(Math.min(from, to), to)).length;
}

const TEXTS = [
  "",
  "plain ascii",
  "é at the start",
  "ends with é",
  "a € in the middle",
  "an emoji 😀 pair",
  "a lone high half \ud83d here",
  "a lone low half \ude00 here",
  "high half at the end \ud83d",
  `${"x".repeat(100_000)}ü${"y".repeat(100_000)}`,
];

describe("utf8Length", () => {
  it.each(TEXTS.map((text) => [JSON.stringify(text.slice(0, 30)), text]))(
    "counts what TextEncoder writes: %s",
    (_, text) => {
      expect(utf8Length(text)).toBe(encodedLength(text));
    },
  );

  it.each(TEXTS.filter((t) => t.length > 0).map((text) => [JSON.stringify(text.slice(0, 30)), text]))(
    "counts every range of the text alike: %s",
    (_, text) => {
      const cuts = [0, 1, 2, Math.floor(text.length / 2), text.length - 1, text.length];
      for (const from of cuts)
        for (const to of cuts) {
          // A range that ends inside a pair counts its high half alone (3 bytes), as a chunk boundary there would.
          const expected = from >= to ? 0 : encodedLength(text, from, to);
          expect(utf8Length(text, from, to), `[${from}, ${to})`).toBe(expected);
        }
    },
  );

  it("maps positions of chunks to byte offsets of the whole text", () => {
    const chunks = ["ab€", "😀c", "dé"];
    const position = new Utf8Position();
    const offsets: number[] = [];
    for (const chunk of chunks) {
      position.next(chunk);
      offsets.push(position.at(chunk.length - 1));
    }
    expect(offsets).toEqual([2, 9, 11]);
  });
});
