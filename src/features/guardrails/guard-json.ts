/**
 * Applies guardrail rules to a JSON value inside a message's text, without re-serialising
 * it: every string value (text content, structured content, resource text, at any depth)
 * is decoded and read by the rules' detectors; a member whose name is a secret's (the
 * audit trail's names) is a finding of the `secrets` detector whatever its value. What a
 * `redact` rule found is replaced in place by a marker naming the kinds found
 * (`[redacted: email]`), the string re-encoded and spliced back: the JSON stays valid and
 * every other byte of the message is the upstream's (or the client's). Base64 data of
 * images, audio and blobs is not read.
 */
import { eachElement, eachMember, RawJsonError, skipValue, splice, type Span, type Splice } from "../../core/raw-json";
import { secretKeyMatcher } from "../audit/secret-keys";
import { detect, type DetectorContext, type Finding } from "./detectors";
import type { GuardrailHit } from "../../context/call-record";
import type { GuardRule, GuardSide } from "./document";

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

export class TooDeepError extends Error {
  override readonly name = "TooDeepError";
}

type Marked = { start: number; end: number; kinds: Set<string> };

/** `text` with each stretch replaced by a marker naming what was found there (overlapping stretches merged). */
export function markFindings(text: string, findings: readonly Finding[]): string {
  const sorted = [...findings].sort((a, b) => a.start - b.start);
  const merged: Marked[] = [];
  for (const finding of sorted) {
    const last = merged[merged.length - 1];
    if (last && finding.start < last.end) {
      last.end = Math.max(last.end, finding.end);
      last.kinds.add(finding.kind);
    } else merged.push({ start: finding.start, end: finding.end, kinds: new Set([finding.kind]) });
  }
  const parts: string[] = [];
  let at = 0;
  for (const mark of merged) {
    parts.push(text.slice(at, mark.start), `[redacted: ${[...mark.kinds].join(", ")}]`);
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
): GuardVerdict {
  const hits = new Map<string, GuardHit>();
  let blockedBy: GuardRule | undefined;
  const clientEdits: Splice[] = [];
  const auditEdits: Splice[] = [];
  const isSecretKey = secretKeyMatcher(context.secretKeys);
  const secretRules = rules.filter((rule) => rule.detectors.includes("secrets"));

  const hit = (rule: GuardRule, detector: string, kind: string) => {
    const key = `${rule.name}\n${detector}\n${kind}`;
    const known = hits.get(key);
    if (known) known.count++;
    else hits.set(key, { rule: rule.name, action: rule.action, detector, kind, where, count: 1 });
    if (rule.action === "block") blockedBy ??= rule;
  };

  const readString = (start: number, end: number) => {
    const raw = text.slice(start + 1, end - 1);
    const value = raw.includes("\\") ? (JSON.parse(text.slice(start, end)) as string) : raw;
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
        for (const finding of found) hit(rule, detector, finding.kind);
        if (rule.action === "redact") redacted.push(...found);
        all.push(...found);
      }
    }
    if (redacted.length > 0)
      clientEdits.push({ span: { start, end }, raw: JSON.stringify(markFindings(value, redacted)) });
    if (all.length > 0) auditEdits.push({ span: { start, end }, raw: JSON.stringify(markFindings(value, all)) });
  };

  // One pass over the value: each member and element is read where it starts, never skipped over first.
  const visit = (at: number, depth: number): number => {
    if (depth > MAX_SCAN_DEPTH) throw new TooDeepError(`nested deeper than ${MAX_SCAN_DEPTH}`);
    const c = text.charCodeAt(at);
    if (c === 0x22) {
      const end = stringEnd(text, at);
      readString(at, end);
      return end;
    }
    if (c === 0x5b) return eachElement(text, at, (_index, start) => visit(start, depth + 1));
    if (c !== 0x7b) return skipValue(text, at);
    // Content items name their type before their data (as the SDKs write them): base64 of images and audio is not read.
    let binary = false;
    return eachMember(text, at, (key, start) => {
      if (key === "type") binary = /^"(?:image|audio)"/.test(text.slice(start, start + 8));
      if (key === "blob" || (binary && key === "data")) return skipValue(text, start);
      if (secretRules.length === 0 || !isSecretKey(key)) return visit(start, depth + 1);
      const end = skipValue(text, start);
      const marker = { span: { start, end }, raw: JSON.stringify("[redacted: secret-field]") };
      for (const rule of secretRules) hit(rule, "secrets", "secret-field");
      if (secretRules.some((rule) => rule.action === "redact")) clientEdits.push(marker);
      auditEdits.push(marker);
      return end;
    });
  };

  try {
    visit(span.start, 0);
  } catch (error) {
    if (error instanceof RawJsonError) throw new TooDeepError(`not JSON: ${error.message}`);
    throw error;
  }
  const edited = clientEdits.length > 0 ? splice(text, clientEdits) : text;
  const markedValue =
    auditEdits.length > 0
      ? splice(text, auditEdits).slice(span.start, span.end + lengthChange(auditEdits))
      : text.slice(span.start, span.end);
  return { hits: [...hits.values()], ...(blockedBy ? { blockedBy } : {}), text: edited, markedValue };
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
