/**
 * Which variation selectors hide something. A variation selector picks a glyph of the
 * character before it; 256 of them, all invisible, are a byte each, and text can be
 * smuggled as a run of them after any character ("😀" followed by one selector per
 * byte) or one after each letter. Legitimate use is one selector after a character that
 * takes it: U+FE0E/U+FE0F (text or emoji presentation) after an emoji-capable character
 * ("❤️", "1️⃣"), U+FE00–U+FE0D after a CJK ideograph, a math symbol, a digit or a letter
 * of the scripts with standardized variants, U+E0100–U+E01EF (ideographic variation
 * sequences) after a CJK ideograph. Anything else is a finding: a run of two or more,
 * one at the start of a text, one after a character that takes none ("a\uFE01").
 * Legitimate selectors can carry text too, one after each ideograph or digit (14 or 240
 * values each), so past MAX_GLYPH_SELECTORS of those in one text it is a finding as well.
 * Presentation selectors (U+FE0E/U+FE0F) are not counted: two values after visible emoji.
 */
import { codePointLabels, invisibleClass } from "../../core/invisible-characters";

/** Where the selectors start and the text that shows them (text-rules.ts reads it as a TextMatch). */
type SelectorMatch = { readonly index: number; readonly match: string };

/** Selectors named in a finding; the rest are counted. */
const MAX_SELECTORS_SHOWN = 4;
/** Characters of the text the selectors spell (one byte each, read as UTF-8), shown in a finding. */
const MAX_SPELLED_CHARS = 80;

/**
 * Selectors that pick a glyph (U+FE00–U+FE0D, U+E0100–U+E01EF after a base that takes
 * them) one text may hold before it is a finding: a name or two in variant ideographs, a
 * few math variants pass; "read ~/.ssh/id_rsa" hidden one byte per ideograph is 18.
 */
export const MAX_GLYPH_SELECTORS = 8;

const SELECTOR = invisibleClass("variation-selector");
/** A run of selectors with the character before it, if any (one code point of lookahead: linear). */
const RUN = new RegExp(`((?:(?!${SELECTOR})[^])?)(${SELECTOR}+)`, "gu");
const PRESENTATION_BASE = /^\p{Emoji}$/u;
const STANDARDIZED_BASE = new RegExp(
  String.raw`^[\p{Ideographic}\p{Sm}0-9\p{Script=Myanmar}\p{Script=Phags_Pa}` +
    String.raw`\p{Script=Manichaean}\p{Script=Egyptian_Hieroglyphs}]$`,
  "u",
);
const IDEOGRAPHIC_BASE = /^\p{Ideographic}$/u;

const FIRST_SUPPLEMENT = 0xe0100;
const FIRST_BASIC = 0xfe00;
const PRESENTATION_FIRST = 0xfe0e;
/** Selectors in the basic block (VS1–VS16); the supplement (VS17–VS256) follows them as byte values. */
const BASIC_COUNT = 16;

function takes(base: string, selector: number): boolean {
  if (selector >= FIRST_SUPPLEMENT) return IDEOGRAPHIC_BASE.test(base);
  if (selector >= PRESENTATION_FIRST) return PRESENTATION_BASE.test(base);
  return STANDARDIZED_BASE.test(base);
}

/** What a run spells, read as one byte per selector (the usual smuggling code), when that is printable text. */
function spelled(run: string): string {
  const bytes: number[] = [];
  for (const char of run) {
    const code = char.codePointAt(0)!;
    bytes.push(code >= FIRST_SUPPLEMENT ? code - FIRST_SUPPLEMENT + BASIC_COUNT : code - FIRST_BASIC);
    if (bytes.length >= 4 * MAX_SPELLED_CHARS) break;
  }
  const text = new TextDecoder().decode(new Uint8Array(bytes));
  return /^[^\p{C}\uFFFD]+$/u.test(text) ? `spelling "${[...text].slice(0, MAX_SPELLED_CHARS).join("")}": ` : "";
}

/**
 * The first variation selectors of `text` that do not select a glyph (see the header), or
 * undefined. Linear in the text.
 *
 * @example
 * strayVariationSelectors("I ❤️ it"); // undefined
 * strayVariationSelectors("ok\u{E0158}\u{E0155}"); // { index: 2, match: "spelling \"he\": U+E0158 U+E0155" }
 */
export function strayVariationSelectors(text: string): SelectorMatch | undefined {
  let glyphSelectors = 0;
  let firstGlyphSelector = -1;
  let carried = "";
  for (const found of text.matchAll(RUN)) {
    const [, base = "", run = ""] = found;
    const single = run.length <= 2 && [...run].length === 1;
    const selector = run.codePointAt(0)!;
    if (!(single && base !== "" && takes(base, selector))) {
      return { index: found.index + base.length, match: `${spelled(run)}${codePointLabels(run, MAX_SELECTORS_SHOWN)}` };
    }
    if (selector >= PRESENTATION_FIRST && selector < FIRST_SUPPLEMENT) continue;
    if (glyphSelectors++ === 0) firstGlyphSelector = found.index + base.length;
    if (carried.length < 8 * MAX_SPELLED_CHARS) carried += run;
  }
  if (glyphSelectors <= MAX_GLYPH_SELECTORS) return undefined;
  const labels = codePointLabels(carried, MAX_SELECTORS_SHOWN);
  return { index: firstGlyphSelector, match: `${glyphSelectors} glyph selectors, ${spelled(carried)}${labels}` };
}
