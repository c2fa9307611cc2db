/**
 * Applies guardrail rules to a JSON value inside a message's text, without re-serialising
 * it: every string value (text content, structured content, resource text, at any depth)
 * is decoded and read by the rules' detectors; a member whose name is a secret's (the
 * audit trail's names) is a finding of the `secrets` detector whatever its value. What a
 * `redact` rule found is replaced in place by a marker naming the kinds found
 * (`[redacted: email]`), the string re-encoded and spliced back: the JSON stays valid and
 * every other byte of the message is the upstream's (or the client's). Base64 data of
 * images, audio and blobs is not read. A rule's webhook or model check (outside-checks.ts)
 * reads the same strings, in the same order, before this runs; its verdict comes in as an
 * `OutsideVerdict`.
 */
import { eachElement, eachMember, RawJsonError, skipValue, splice, type Span, type Splice } from "../../core/raw-json";
import { secretKeyMatcher } from "../audit/secret-keys";
import { detect, type DetectorContext, type Finding } from "./detectors";
import type { GuardrailHit } from "../../context/call-record";
import type { GuardAction, GuardRule, GuardSide } from "./document";

/** Values nested deeper than this are not read: the value counts as unchecked. */
export const MAX_SCAN_DEPTH = 128;

/** One rule's detector finding something, counted (the audit event's entry; never the matched text). */
export type GuardHit = { -readonly [K in keyof GuardrailHit]: GuardrailHit[K] };

/** What the rules made of one value. */
export type GuardVerdict = {
  readonly hits: GuardHit[];
  /** The first `block` rule that found something. */
  readonly blockedBy?: GuardRule;
  /** The message text with `redact` rules' findings replaced (the same text when none). */
  readonly text: string;
  /** The value with every finding replaced, whatever the action (what audit may record of arguments). */
  readonly markedValue: string;
};

/** What a rule's webhook or model said of one side: what it does, and where (per string, in reading order). */
export type OutsideVerdict = {
  readonly detector: "webhook" | "model";
  readonly action: GuardAction;
  /** The kind recorded (and named in a block's error) when the verdict has no spans. */
  readonly kind: string;
  /** Findings per string (its index in `readStrings` order); absent: the verdict is about the whole value. */
  readonly spans?: ReadonlyMap<number, readonly Finding[]>;
};

export class TooDeepError extends Error {
  override readonly name = "TooDeepError";
}

type Marked = { start: number; end: number; kinds: Set<string>; replacement?: string | undefined };

/** A webhook's own replacement for its span, kept when no other finding overlaps it. */
function replacementOf(finding: Finding): { replacement?: string } {
  return finding.replacement !== undefined ? { replacement: finding.replacement } : {};
}

/** `text` with each stretch replaced by a marker naming what was found there (overlapping stretches merged). */
export function markFindings(text: string, findings: readonly Finding[]): string {
  const sorted = [...findings].sort((a, b) => a.start - b.start);
  const merged: Marked[] = [];
  for (const finding of sorted) {
    const last = merged[merged.length - 1];
    if (last && finding.start < last.end) {
      last.end = Math.max(last.end, finding.end);
      last.kinds.add(finding.kind);
      last.replacement = undefined;
    } else
      merged.push({
        start: finding.start,
        end: finding.end,
        kinds: new Set([finding.kind]),
        ...replacementOf(finding),
      });
  }
  const parts: string[] = [];
  let at = 0;
  for (const mark of merged) {
    parts.push(text.slice(at, mark.start), mark.replacement ?? `[redacted: ${[...mark.kinds].join(", ")}]`);
    at = mark.end;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

/**
 * Runs `rules` over the value at `span` of `text` (one side of a call).
 *
 * @example
 * const verdict = guardValue(text, argumentsSpan, rules, "arguments", context);
 * if (verdict.blockedBy) return toolError(id, `blocked by ${verdict.blockedBy.name}`);
 */
export function guardValue(
  text: string,
  span: Span,
  rules: readonly GuardRule[],
  where: GuardSide,
  context: DetectorContext,
  outside: ReadonlyMap<GuardRule, OutsideVerdict> = new Map(),
): GuardVerdict {
  const hits = new Map<string, GuardHit>();
  let blockedBy: GuardRule | undefined;
  const clientEdits: Splice[] = [];
  const auditEdits: Splice[] = [];
  const isSecretKey = secretKeyMatcher(context.secretKeys);
  const secretRules = rules.filter((rule) => rule.detectors.includes("secrets"));

  const hit = (rule: GuardRule, detector: string, kind: string, action: GuardAction) => {
    const key = `${rule.name}\n${detector}\n${kind}`;
    const known = hits.get(key);
    if (known) known.count++;
    else hits.set(key, { rule: rule.name, action, detector, kind, where, count: 1 });
    if (action === "block") blockedBy ??= rule;
  };

  for (const [rule, verdict] of outside) {
    if (!verdict.spans) hit(rule, verdict.detector, verdict.kind, verdict.action);
  }

  let index = 0;
  const readString = (start: number, end: number) => {
    const value = decodeString(text, start, end);
    const redacted: Finding[] = [];
    const all: Finding[] = [];
    const seen = new Map<string, Finding[]>();
    for (const rule of rules) {
      for (const detector of rule.detectors) {
        let found = seen.get(detector);
        if (!found) {
          found = detect(detector, value, context);
          seen.set(detector, found);
        }
        if (found.length === 0) continue;
        for (const finding of found) hit(rule, detector, finding.kind, rule.action);
        if (rule.action === "redact") redacted.push(...found);
        all.push(...found);
      }
      const verdict = outside.get(rule);
      const found = verdict?.spans?.get(index);
      if (!verdict || !found) continue;
      for (const finding of found) hit(rule, verdict.detector, finding.kind, verdict.action);
      if (verdict.action === "redact") redacted.push(...found);
      all.push(...found);
    }
    index++;
    if (redacted.length > 0)
      clientEdits.push({ span: { start, end }, raw: JSON.stringify(markFindings(value, redacted)) });
    if (all.length > 0) auditEdits.push({ span: { start, end }, raw: JSON.stringify(markFindings(value, all)) });
  };

  walkStrings(text, span, {
    isSkippedKey: (key) => secretRules.length > 0 && isSecretKey(key),
    onString: readString,
    onSkippedKey: (start, end) => {
      const marker = { span: { start, end }, raw: JSON.stringify("[redacted: secret-field]") };
      for (const rule of secretRules) hit(rule, "secrets", "secret-field", rule.action);
      if (secretRules.some((rule) => rule.action === "redact")) clientEdits.push(marker);
      auditEdits.push(marker);
    },
  });
  const edited = clientEdits.length > 0 ? splice(text, clientEdits) : text;
  const markedValue =
    auditEdits.length > 0
      ? splice(text, auditEdits).slice(span.start, span.end + lengthChange(auditEdits))
      : text.slice(span.start, span.end);
  return { hits: [...hits.values()], ...(blockedBy ? { blockedBy } : {}), text: edited, markedValue };
}

/** How the walk treats members whose name is a secret's, and what it calls for each string read. */
type StringWalk = {
  readonly isSkippedKey: (key: string) => boolean;
  readonly onString: (start: number, end: number) => void;
  readonly onSkippedKey: (start: number, end: number) => void;
};

/**
 * Calls `walk.onString` for every string of the value at `span` the rules read, in order (one
 * pass: each member and element is read where it starts, never skipped over first).
 */
function walkStrings(text: string, span: Span, walk: StringWalk): void {
  const visit = (at: number, depth: number): number => {
    if (depth > MAX_SCAN_DEPTH) throw new TooDeepError(`nested deeper than ${MAX_SCAN_DEPTH}`);
    const c = text.charCodeAt(at);
    if (c === 0x22) {
      const end = stringEnd(text, at);
      walk.onString(at, end);
      return end;
    }
    if (c === 0x5b) return eachElement(text, at, (_index, start) => visit(start, depth + 1));
    if (c !== 0x7b) return skipValue(text, at);
    // Content items name their type before their data (as the SDKs write them): base64 of images and audio is not read.
    let binary = false;
    return eachMember(text, at, (key, start) => {
      if (key === "type") binary = /^"(?:image|audio)"/.test(text.slice(start, start + 8));
      if (key === "blob" || (binary && key === "data")) return skipValue(text, start);
      if (!walk.isSkippedKey(key)) return visit(start, depth + 1);
      const end = skipValue(text, start);
      walk.onSkippedKey(start, end);
      return end;
    });
  };
  try {
    visit(span.start, 0);
  } catch (error) {
    if (error instanceof RawJsonError) throw new TooDeepError(`not JSON: ${error.message}`);
    throw error;
  }
}

function decodeString(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes("\\") ? (JSON.parse(text.slice(start, end)) as string) : raw;
}

/**
 * The strings of the value at `span` that `rules` read, decoded, in the order guardValue
 * numbers them (what a webhook or model is sent). Members whose name is a secret's are not
 * among them when a rule reads secrets: their values never leave for a check.
 */
export function readStrings(text: string, span: Span, rules: readonly GuardRule[], secretKeys: readonly string[]) {
  const isSecretKey = secretKeyMatcher(secretKeys);
  const skipSecrets = rules.some((rule) => rule.detectors.includes("secrets"));
  const out: string[] = [];
  walkStrings(text, span, {
    isSkippedKey: (key) => skipSecrets && isSecretKey(key),
    onString: (start, end) => out.push(decodeString(text, start, end)),
    onSkippedKey: () => {},
  });
  return out;
}

/**
 * The end of the string whose opening quote is at `at`, one character at a time: a text
 * content of megabytes of escaped JSON is one loop, with no expression's backtracking
 * stack growing with its escapes.
 */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  throw new RawJsonError(`unterminated string at offset ${at}`);
}

/** How much longer the edits make the text. */
function lengthChange(edits: readonly Splice[]): number {
  return edits.reduce((sum, edit) => sum + edit.raw.length - (edit.span.end - edit.span.start), 0);
}
