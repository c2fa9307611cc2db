/**
 * A name an upstream lists more than once. The pins keep one version per name, so a list
 * that names a definition twice must not let the later entry hide the earlier one: each
 * entry is judged, the version recorded is the first that is not the approved one (what
 * an operator has to review), and the duplicate is itself a finding. What clients are
 * served for such a name is decided in features/pins/pinning.ts (under `enforce`: the
 * approved bytes, once).
 */
import type { Finding } from "./pin-store";
import type { SeenDefinition } from "./pins";

/** The rule of a duplicate name (not a text rule of pin-findings.ts: it is about the list, not one definition). */
export const DUPLICATE_NAME_RULE = "duplicate-name";

/** The duplicate rule as an operator reads it beside the text rules (GET /admin/pins `rules`). */
export const DUPLICATE_NAME_RULE_ROW = {
  rule: DUPLICATE_NAME_RULE,
  severity: "high",
  why:
    "the upstream lists two or more different definitions under one name: a client may read any of them, so " +
    "enforce serves the approved one once (the same definition listed twice is a medium finding)",
} as const;

/** The rule of a list entry that names one of its members twice (relay/ambiguous-entries.ts: it is not served). */
export const DUPLICATE_MEMBER_RULE = "duplicate-member";

export const DUPLICATE_MEMBER_RULE_ROW = {
  rule: DUPLICATE_MEMBER_RULE,
  severity: "high",
  why:
    'a listed definition names one of its members twice (two "name"s, two "description"s): the gateway and ' +
    "clients would read different definitions, so it is not served to anyone",
} as const;

/** The finding of an entry that names `key` twice. */
export function duplicateMemberFinding(key: string): Finding {
  const token = key.replace(/~/g, "~0").replace(/\//g, "~1");
  return { rule: DUPLICATE_MEMBER_RULE, severity: "high", at: `/${token}`, match: `${JSON.stringify(key)} twice` };
}

/** The findings of a version without a duplicate finding an earlier list recorded for it. */
export function withoutDuplicateFinding(findings: readonly Finding[]): readonly Finding[] {
  const stale = findings.some((f) => f.rule === DUPLICATE_NAME_RULE);
  return stale ? findings.filter((f) => f.rule !== DUPLICATE_NAME_RULE) : findings;
}

function duplicateFinding(entries: readonly SeenDefinition[]): Finding {
  const distinct = new Set(entries.map((entry) => entry.digest)).size;
  const what = distinct === 1 ? "the same definition" : `${distinct} different definitions`;
  return {
    rule: DUPLICATE_NAME_RULE,
    severity: distinct > 1 ? "high" : "medium",
    at: "/name",
    match: `listed ${entries.length} times, ${what}`,
  };
}

/**
 * One version per name, in the order the names were first listed: a name listed once as
 * it was; a name listed more than once as its first entry whose digest is not
 * `approvedDigest(name)` (the first entry when every one is approved), with a
 * `duplicate-name` finding. Linear in the list.
 *
 * @example
 * oneVersionPerName([changedEcho, approvedEcho], () => approvedEcho.digest); // [changedEcho + duplicate-name finding]
 */
export function oneVersionPerName(
  seen: readonly SeenDefinition[],
  approvedDigest: (name: string) => string | undefined,
): SeenDefinition[] {
  const byName = new Map<string, SeenDefinition[]>();
  for (const item of seen) {
    const entries = byName.get(item.name);
    if (entries) entries.push(item);
    else byName.set(item.name, [item]);
  }
  const out: SeenDefinition[] = [];
  for (const [name, entries] of byName) {
    if (entries.length === 1) {
      out.push(entries[0]!);
      continue;
    }
    const approved = approvedDigest(name);
    const recorded = entries.find((entry) => entry.digest !== approved) ?? entries[0]!;
    out.push({ ...recorded, findings: [...recorded.findings, duplicateFinding(entries)] });
  }
  return out;
}
