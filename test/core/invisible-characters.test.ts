/**
 * The one list of invisible characters (src/core/invisible-characters.ts): the findings
 * scan reports what the console shows as code points, and the console shows every
 * character the scan reports, so an operator sees on the page what the finding names.
 */
import { describe, expect, test } from "vitest";
import { visibleParts } from "../../src/admin/console/visible-text";
import { scanText } from "../../src/features/pins/text-rules";

const INVISIBLE_RULES = new Set([
  "unicode-tag-characters",
  "bidi-control",
  "zero-width",
  "variation-selectors",
  "invisible-characters",
]);
/** The ranges compared code point by code point: where every invisible character of the list lies. */
const RANGES: readonly (readonly [number, number])[] = [
  [0x0000, 0x3200],
  [0xd7b0, 0xd7ff],
  [0xe000, 0xe0ff],
  [0xf8f0, 0xffff],
  [0x1bca0, 0x1bcaf],
  [0x1d170, 0x1d17f],
  [0xe0000, 0xe01ff],
];

function shownInvisible(text: string): boolean {
  return visibleParts(text).some((part) => part.kind === "invisible");
}

function reported(text: string): boolean {
  return scanText([text]).some((finding) => INVISIBLE_RULES.has(finding.rule));
}

describe("one list of invisible characters", () => {
  const CODES = [
    "2800",
    "3164",
    "115F",
    "FFA0",
    "206A",
    "FFF9",
    "FFFB",
    "034F",
    "FE00",
    "FE0F",
    "E0100",
    "E01EF",
    "E0041",
  ];
  test.each(CODES)("U+%s between two letters: the console shows it as a code point and the scan reports it", (code) => {
    const text = `a${String.fromCodePoint(Number.parseInt(code, 16))}b`;
    expect(visibleParts(text)).toEqual([
      { kind: "text", text: "a" },
      { kind: "invisible", shown: expect.stringMatching(new RegExp(`^U\\+${code}\\b`)) },
      { kind: "text", text: "b" },
    ]);
    expect(reported(text)).toBe(true);
  });

  test("the scan reports what the console shows as code points, and nothing else (between two letters)", () => {
    const disagree: string[] = [];
    for (const [from, to] of RANGES) {
      for (let code = from; code <= to; code++) {
        if (code >= 0xd800 && code <= 0xdfff) continue; // lone surrogates are no characters
        if (code === 0x09 || code === 0x0a || code === 0x0d) continue; // white space a reader sees as such
        const text = `a${String.fromCodePoint(code)}b`;
        if (reported(text) !== shownInvisible(text)) disagree.push(code.toString(16));
      }
    }
    expect(disagree).toEqual([]);
  });

  test("an emoji's presentation selector is shown on the page, and is no finding", () => {
    expect(shownInvisible("I ❤️ it")).toBe(true);
    expect(reported("I ❤️ it")).toBe(false);
  });
});
