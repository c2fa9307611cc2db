/**
 * Findings in text: what a text an agent reads says that an operator should look at first.
 * Tool poisoning hides orders for the model (invisible characters, tags the model treats
 * as system text, "do not tell the user", key files to read); shadowing gives orders about
 * another server's tools. Plain functions over strings, so any text can be scanned: tool
 * and prompt definitions (features/pins/pin-findings.ts), and results alike.
 *
 * A text is scanned as a list of fields read together (a definition's title, description,
 * parameters' descriptions, …: an instruction split across two of them is found). Each
 * rule runs once over the fields joined by a line feed; a rule that reads words runs once
 * more over their skeletons (features/pins/text-skeleton.ts) when the text as written did not
 * match, which finds `＜ＩＭＰＯＲＴＡＮＴ＞` and "ignоre" (Cyrillic o). Every expression is
 * linear (no nested quantifiers, no unbounded alternatives of unbounded length).
 */
import { codePointLabels, invisibleRunOf } from "../../core/invisible-characters";
import type { FindingSeverity } from "./pin-store";
import { mentionOfOthers, NO_SCAN_CONTEXT, scanContext, type ScanContext } from "./shadowing";
import { skeleton } from "./text-skeleton";
import { strayVariationSelectors } from "./variation-selectors";

export { NO_SCAN_CONTEXT, scanContext, type ScanContext };

/** What fields are joined by: ends a word, a URL and a line, and is white space between the parts of a path. */
const FIELD_SEPARATOR = "\n";
/** Code points of an invisible run named in a finding; the rest are counted. */
const MAX_CODE_POINTS_SHOWN = 8;

/** Where a rule matched: the index in the text it was given, and what to show an operator. */
export type TextMatch = { readonly index: number; readonly match: string };

export type TextRule = {
  readonly rule: string;
  readonly severity: FindingSeverity;
  /** The threat, as an operator reads it in GET /admin/pins. */
  readonly why: string;
  /** `words`: matched on the text, then on its skeleton; `characters`: on the text as written only. */
  readonly reads: "words" | "characters";
  /** The first match in `text`, if any. */
  readonly find: (text: string, scan: ScanContext) => TextMatch | undefined;
};

function first(pattern: RegExp): Finder {
  return (text) => {
    const found = pattern.exec(text);
    return found ? { index: found.index, match: found[0] } : undefined;
  };
}

type Finder = (text: string) => TextMatch | undefined;

/** The first run of invisible characters of `kind`, shown as code points (`whole`: the run, else its first). */
function invisible(kind: "tag" | "bidi" | "zero-width" | "other", whole: boolean): Finder {
  const run = invisibleRunOf(kind);
  return (text) => {
    const found = run.exec(text);
    if (!found) return undefined;
    const shown = whole ? found[0] : String.fromCodePoint(found[0].codePointAt(0)!);
    return { index: found.index, match: codePointLabels(shown, MAX_CODE_POINTS_SHOWN) };
  };
}

const USER = String.raw`(?:the\s+)?users?\b`;
const NOT = String.raw`(?:do\s+not|don['’]?t|never)`;
const TELL = "(?:tell|inform|mention|notify|reveal|show|alert)(?:ing)?";
/** "Do not tell the user" and its paraphrases. */
const CONCEAL = new RegExp(
  [
    String.raw`\b(?:${NOT}|without)\s+${TELL}\s+(?:this\s+to\s+)?${USER}`,
    String.raw`\bhide\s+(?:this|it)\s+from\s+${USER}`,
    String.raw`\bkeep\s+(?:this|it|that|these|them)\s+(?:a\s+)?(?:secret|hidden|private|confidential)\s+from\s+${USER}`,
    String.raw`\bkeep\s+${USER}\s+(?:in\s+the\s+dark|unaware)`,
    String.raw`\b${NOT}\s+let\s+${USER}\s+(?:know|see|notice|find\s+out)\b`,
    String.raw`\bwithout\s+${USER}(?:['’]s)?\s+(?:knowing|knowledge|noticing)\b`,
    String.raw`\b${USER}\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|notice|find\s+out|be\s+told)\b`,
  ].join("|"),
  "i",
);
const ADJECTIVE = "(?:previous|prior|above|earlier|other|system|original)";
const WHOSE = String.raw`(?:(?:the\s+)?${ADJECTIVE}\s+|your\s+(?:${ADJECTIVE}\s+)?)`;
/** "Ignore previous instructions" and its paraphrases. */
const OVERRIDE = new RegExp(
  [
    String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?${WHOSE}` +
      String.raw`(?:instructions|prompts?|rules|directions|guidelines)\b`,
    String.raw`\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+` +
      String.raw`(?:you\s+(?:were|have\s+been)\s+told|above|before\s+this)\b`,
  ].join("|"),
  "i",
);
const DOT_FILES = String.raw`(?:^|[\s/~"'\x60])\.(?:env|ssh|aws|gnupg)\b`;
const HOME_FILES = String.raw`~\s*\/\s*\.(?:ssh|aws|cursor|gnupg)\b`;
const KEY_FILES = new RegExp(
  `${HOME_FILES}|${DOT_FILES}|\\bid_(?:rsa|ed25519|ecdsa)\\b|\\/etc\\/passwd\\b|\\bmcp\\.json\\b`,
  "i",
);

/** The rules of text, in one table: each has a test in test/pins/pin-findings.test.ts. */
export const TEXT_RULES: readonly TextRule[] = [
  {
    rule: "unicode-tag-characters",
    severity: "high",
    why:
      "Unicode tag characters (U+E0000–U+E007F) are invisible to people and read as text by models: " +
      "a hidden instruction",
    reads: "characters",
    find: invisible("tag", true),
  },
  {
    rule: "bidi-control",
    severity: "high",
    why: "bidirectional controls make text display in another order than a model reads it",
    reads: "characters",
    find: invisible("bidi", false),
  },
  {
    rule: "zero-width",
    severity: "high",
    why: "zero-width characters hide text or split words so a reviewer does not see them",
    reads: "characters",
    find: invisible("zero-width", false),
  },
  {
    rule: "variation-selectors",
    severity: "high",
    why:
      "variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF) in a run or after a character that takes none: " +
      "invisible bytes, a hidden text",
    reads: "characters",
    find: strayVariationSelectors,
  },
  {
    rule: "invisible-characters",
    severity: "high",
    why:
      "characters a reader does not see (format and control characters, private use, " +
      "blank fillers such as U+3164 or U+2800): hidden text",
    reads: "characters",
    find: invisible("other", true),
  },
  {
    rule: "instruction-tag",
    severity: "high",
    why: "tags such as <IMPORTANT> or <system> are how poisoned descriptions give the model orders",
    reads: "words",
    find: first(/<\/?\s*(?:important|system|instructions?|admin|secret|hidden|context)\s*>/i),
  },
  {
    rule: "conceal-from-user",
    severity: "high",
    why:
      "a text asking the model to keep something from the user " +
      '("do not tell the user", "keep this secret from the user")',
    reads: "words",
    find: first(CONCEAL),
  },
  {
    rule: "override-instructions",
    severity: "high",
    why: "text that tries to replace the instructions the model was given",
    reads: "words",
    find: first(OVERRIDE),
  },
  {
    rule: "sensitive-files",
    severity: "high",
    why: "a text naming credentials or key files an agent could be led to read and send",
    reads: "words",
    find: first(KEY_FILES),
  },
  {
    rule: "shadowing",
    severity: "high",
    why: "a text mentioning another upstream's tools: one server giving orders about another's",
    reads: "characters",
    find: mentionOfOthers,
  },
  {
    rule: "url",
    severity: "low",
    why: "a URL in a text: where an agent may be told to send data",
    reads: "words",
    find: first(/\bhttps?:\/\/[^\s"'<>)]{1,200}/i),
  },
];

/** A rule's first match in fields read together. */
export type TextFinding = {
  readonly rule: string;
  readonly severity: FindingSeverity;
  /** Index of the field the match starts in. */
  readonly field: number;
  readonly match: string;
  /** True when only the skeleton matched: `match` is then the skeleton's text (lower case, look-alikes replaced). */
  readonly normalized: boolean;
};

/** Fields joined, with where each starts (ascending), to tell which field an index of the joined text is in. */
type Joined = { readonly text: string; readonly starts: readonly number[] };

function joined(fields: readonly string[]): Joined {
  const starts: number[] = [];
  let at = 0;
  for (const field of fields) {
    starts.push(at);
    at += field.length + FIELD_SEPARATOR.length;
  }
  return { text: fields.join(FIELD_SEPARATOR), starts };
}

function fieldAt({ starts }: Joined, index: number): number {
  let [low, high] = [0, starts.length - 1];
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= index) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * Each rule's first match in `fields`, read together (see the header), in the order of
 * TEXT_RULES. Linear in the total length of the fields.
 *
 * @example
 * scanText(["Reads ~/", ".ssh/config"]);
 * // [{ rule: "sensitive-files", severity: "high", field: 0, match: "~/\n.ssh", normalized: false }]
 * scanText(["＜ＩＭＰＯＲＴＡＮＴ＞ keep this secret from the user"]).map((f) => f.rule);
 * // ["instruction-tag", "conceal-from-user"]
 */
export function scanText(fields: readonly string[], scan: ScanContext = NO_SCAN_CONTEXT): TextFinding[] {
  const raw = joined(fields);
  let skeletons: Joined | undefined;
  const out: TextFinding[] = [];
  for (const { rule, severity, reads, find } of TEXT_RULES) {
    const found = find(raw.text, scan);
    if (found) {
      out.push({ rule, severity, field: fieldAt(raw, found.index), match: found.match, normalized: false });
      continue;
    }
    if (reads !== "words") continue;
    skeletons ??= joined(fields.map(skeleton));
    const disguised = find(skeletons.text, scan);
    if (disguised) {
      const field = fieldAt(skeletons, disguised.index);
      out.push({ rule, severity, field, match: disguised.match, normalized: true });
    }
  }
  return out;
}
