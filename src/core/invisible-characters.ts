/**
 * The one list of characters a reader does not see but a model reads: what the findings
 * scan reports (features/pins/text-rules.ts) and what the console shows as code points
 * (admin/console/visible-text.tsx) come from here, so the two never disagree. Each kind
 * is a character class (regular-expression source, `u` flag); anything in the list that
 * is none of the named kinds is `other`.
 */

/** The kinds of invisible characters, each reported by a rule of its own. */
export type InvisibleKind = "tag" | "bidi" | "zero-width" | "variation-selector" | "other";

/** Unicode tag characters (U+E0000–U+E007F): spell ASCII text no font shows. */
const TAG = String.raw`\u{E0000}-\u{E007F}`;
/** Bidirectional controls: text displays in another order than it is read. */
const BIDI = String.raw`\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C`;
/** Zero-width characters, the soft hyphen and word joiners: split words, hide text between them. */
const ZERO_WIDTH = String.raw`\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u00AD`;
/** Variation selectors (VS1–16 and the supplementary VS17–256): 256 invisible values, a byte each. */
const VARIATION_SELECTOR = String.raw`\uFE00-\uFE0F\u{E0100}-\u{E01EF}`;
/**
 * The rest: C0/C1 controls other than tab, line feed and carriage return, every other
 * format character (Cf: U+206A–U+206F, U+FFF9–U+FFFB, …), private use (Co), the
 * combining grapheme joiner U+034F, the Khmer inherent vowels U+17B4–U+17B5, and the
 * blank-looking fillers (Hangul U+115F, U+1160, U+3164, U+FFA0; Braille blank U+2800).
 */
const OTHER =
  String.raw`\0-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F\p{Cf}\p{Co}` +
  String.raw`\u034F\u17B4\u17B5\u115F\u1160\u3164\uFFA0\u2800`;

const ANY = `[${TAG}${BIDI}${ZERO_WIDTH}${VARIATION_SELECTOR}${OTHER}]`;
/** One character of each kind; `other` is the rest of the list (one character of lookahead: linear). */
const CLASS_OF: Readonly<Record<InvisibleKind, string>> = {
  tag: `[${TAG}]`,
  bidi: `[${BIDI}]`,
  "zero-width": `[${ZERO_WIDTH}]`,
  "variation-selector": `[${VARIATION_SELECTOR}]`,
  other: `(?:(?![${TAG}${BIDI}${ZERO_WIDTH}${VARIATION_SELECTOR}])[${OTHER}])`,
};

/**
 * A new global regular expression matching each run of invisible characters of any kind
 * (a new one per call: a global expression carries its position between uses).
 *
 * @example
 * [..."a\u200B\uFE01b".matchAll(invisibleRuns())].map((m) => m[0]); // ["\u200B\uFE01"]
 */
export function invisibleRuns(): RegExp {
  return new RegExp(`${ANY}+`, "gu");
}

/**
 * A regular expression for one run of invisible characters of `kind` (not global:
 * `exec` finds the first).
 */
export function invisibleRunOf(kind: InvisibleKind): RegExp {
  return new RegExp(`${CLASS_OF[kind]}+`, "u");
}

/** The source of the character class of `kind`, to build other expressions with (`u` flag). */
export function invisibleClass(kind: InvisibleKind): string {
  return CLASS_OF[kind];
}

/** For `replace`, which starts a global expression from the beginning whatever its last use. */
const EVERY_RUN = invisibleRuns();

/** Every invisible character removed (to read the text as a reader sees it). Linear. */
export function withoutInvisible(text: string): string {
  return text.replace(EVERY_RUN, "");
}

/** `U+XXXX` labels of the first `max` characters of `text`, space-separated (the rest counted). */
export function codePointLabels(text: string, max = Infinity): string {
  const labels: string[] = [];
  let count = 0;
  for (const char of text) {
    if (count++ < max) labels.push(`U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`);
  }
  return `${labels.join(" ")}${count > max ? ` … (${count} characters)` : ""}`;
}
