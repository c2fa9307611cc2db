/**
 * The detectors a guardrail rule names, over one string: `secrets` and `personal`
 * (token-detectors.ts), `instructions` (the pin findings' rules, features/pins/text-rules.ts, as
 * they apply to a result: orders hidden in invisible characters or instruction tags,
 * "ignore previous instructions", "do not tell the user"), and `pattern:<name>`, an
 * operator's pattern (safe-pattern.ts). Every detector is linear in the string.
 */
import { invisibleRuns } from "../../core/invisible-characters";
import { NO_SCAN_CONTEXT, TEXT_RULES } from "../pins/text-rules";
import { skeleton } from "../pins/text-skeleton";
import { coveredSpans, type SafePattern, type StepMeter } from "./safe-pattern";
import { findPersonalData, findSecrets, type Finding } from "./token-detectors";

export type { Finding };

/** The built-in detectors, by the name a rule gives them. */
export const BUILT_IN_DETECTORS = ["secrets", "personal", "instructions"] as const;
export const PATTERN_PREFIX = "pattern:";

/**
 * The pin rules that read a result's words for orders to the model (the others judge
 * definitions: shadowing, URLs, file names).
 */
const INSTRUCTION_RULES = TEXT_RULES.filter((rule) =>
  ["instruction-tag", "conceal-from-user", "override-instructions"].includes(rule.rule),
);

/** What detectors need besides the string: the secret field names and the operator's compiled patterns. */
export type DetectorContext = {
  readonly secretKeys: readonly string[];
  readonly patterns: ReadonlyMap<string, SafePattern>;
  /** Steps of the operator's patterns, counted when given (tests). */
  readonly meter?: StepMeter;
};

/** Shared: searches are synchronous and each starts at 0. */
const INVISIBLE_RUNS = invisibleRuns();

/** Every run of invisible characters (tags, bidi controls, zero-width, variation selectors, the rest). */
function findInvisible(text: string, out: Finding[]): void {
  const runs = INVISIBLE_RUNS;
  runs.lastIndex = 0;
  for (let match = runs.exec(text); match !== null; match = runs.exec(text)) {
    out.push({ start: match.index, end: match.index + match[0].length, kind: "invisible-characters" });
  }
}

/** Characters other than printable ASCII, tab and line ends: what a skeleton may change besides case. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: tab and line ends are the plain characters a skeleton keeps
const NOT_PLAIN_ASCII = /[^\x09\x0a\x0d\x20-\x7e]+/g;

/** Short runs whose skeleton this isolate remembers (results repeat a few: "é", "—"); all forgotten when full. */
const MAX_REMEMBERED_RUNS = 4_096;
/** Runs longer than this (characters) are not remembered. */
const MAX_REMEMBERED_RUN_CHARS = 32;
const runSkeletons = new Map<string, string>();

function skeletonOfRun(run: string): string {
  if (run.length > MAX_REMEMBERED_RUN_CHARS) return skeleton(run);
  let known = runSkeletons.get(run);
  if (known === undefined) {
    if (runSkeletons.size >= MAX_REMEMBERED_RUNS) runSkeletons.clear();
    known = skeleton(run);
    runSkeletons.set(run, known);
  }
  return known;
}

/**
 * The text's skeleton (features/pins/text-skeleton.ts), or undefined when it is the text in lower
 * case (the rules ignore case, so reading it again finds nothing new). Each step of a
 * skeleton maps a character on its own (decomposition, marks and invisible characters
 * dropped, look-alikes, case), so only the runs of other characters are passed through it:
 * a 6 MB result with an accented word per line costs a fraction of normalising it whole.
 */
function skeletonOfOthers(text: string): string | undefined {
  let changed = false;
  const replaced = text.replace(NOT_PLAIN_ASCII, (run) => {
    changed = true;
    return skeletonOfRun(run);
  });
  return changed ? replaced.toLowerCase() : undefined;
}

/**
 * Orders aimed at the model: each instruction rule's matches in the text as written (each
 * search goes on after the last match); a match found only in the text's skeleton (look-alike
 * letters, full-width forms) covers the whole string, which has no span to point at.
 */
function findInstructions(text: string, out: Finding[]): void {
  findInvisible(text, out);
  let disguised: string | undefined;
  for (const rule of INSTRUCTION_RULES) {
    let from = 0;
    let found = 0;
    // Each search starts where the last match ended (a slice shares the text's characters): the text is read once.
    for (;;) {
      const match = rule.find(from === 0 ? text : text.slice(from), NO_SCAN_CONTEXT);
      if (!match) break;
      const start = from + match.index;
      out.push({ start, end: start + match.match.length, kind: rule.rule });
      from = start + Math.max(match.match.length, 1);
      found++;
    }
    if (found > 0) continue;
    disguised ??= skeletonOfOthers(text);
    if (disguised !== undefined && rule.find(disguised, NO_SCAN_CONTEXT))
      out.push({ start: 0, end: text.length, kind: rule.rule });
  }
}

/**
 * What `detector` finds in `text`.
 *
 * @example
 * detect("personal", "write to ada@example.com", context) // [{ start: 9, end: 24, kind: "email" }]
 */
export function detect(detector: string, text: string, context: DetectorContext): Finding[] {
  if (detector === "secrets") return findSecrets(text, context.secretKeys);
  if (detector === "personal") return findPersonalData(text);
  if (detector === "instructions") {
    const out: Finding[] = [];
    findInstructions(text, out);
    return out;
  }
  const name = detector.slice(PATTERN_PREFIX.length);
  const pattern = context.patterns.get(name);
  if (!pattern) return [];
  return coveredSpans(pattern, text, context.meter).map((span) => ({ ...span, kind: `pattern:${name}` }));
}
