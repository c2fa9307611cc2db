/**
 * Tool pinning, as values: what the gateway has seen of an upstream's tools and prompts
 * (the pins document, written by whoever lists them: a client's list or the Cron
 * Trigger), what operators decided (the decisions document, written only by the admin
 * API, so an isolate that observes with a stale copy can never undo an approval), and
 * from the two, each definition's status and what a client is shown.
 *
 * Trust on first use: the first version seen is the approved one, unless the upstream
 * has `approveNew` or, in `enforce`, the version has a high-severity finding. A later
 * version is a pending change until an operator approves or rejects it by digest.
 */
import { hasHighFinding } from "./pin-findings";
import type {
  DecisionsDocument,
  Finding,
  ObservedPin,
  PinDecision,
  PinKind,
  PinsDocument,
  PinVersion,
} from "./pin-store";

export type { DecisionsDocument, ObservedPin, PinDecision, PinsDocument, PinVersion };
export { EMPTY_DECISIONS, EMPTY_PINS } from "./pin-store";

/** How an upstream's tool and prompt definitions are pinned (docs/pinning.md). */
export const PINNING_MODES = ["off", "warn", "enforce"] as const;
export type PinningMode = (typeof PINNING_MODES)[number];
export const DEFAULT_PINNING_MODE: PinningMode = "warn";

/** Rejected digests remembered per definition. */
const MAX_REJECTED = 8;

/**
 * Where a definition stands:
 * - `pinned`: the upstream serves the approved version;
 * - `pending`: it serves another version no one has decided on;
 * - `rejected`: it serves a version an operator rejected;
 * - `held`: no version was ever approved (approveNew, or a high finding in enforce).
 */
export type PinStatus = "pinned" | "pending" | "rejected" | "held";

/** The id of a definition within its upstream's documents. */
export function pinId(kind: PinKind, name: string): string {
  return `${kind}:${name}`;
}

/** The version clients may be shown: the operator's approval, else the first-seen one unless it is held. */
export function approvedVersion(
  pin: ObservedPin,
  decision: PinDecision | undefined,
  mode: PinningMode,
  approveNew: boolean,
): PinVersion | undefined {
  if (decision?.approved) return decision.approved;
  if (approveNew) return undefined;
  if (mode === "enforce" && hasHighFinding(pin.first.findings)) return undefined;
  return pin.first;
}

/** The status of a definition under an upstream's settings. */
export function pinStatus(
  pin: ObservedPin,
  decision: PinDecision | undefined,
  mode: PinningMode,
  approveNew: boolean,
): PinStatus {
  const approved = approvedVersion(pin, decision, mode, approveNew);
  if (!approved) return "held";
  if (approved.digest === pin.latest.digest) return "pinned";
  return decision?.rejected?.includes(pin.latest.digest) ? "rejected" : "pending";
}

/** A definition as one list showed it. */
export type SeenDefinition = {
  readonly kind: PinKind;
  readonly name: string;
  readonly digest: string;
  readonly definition: string;
  readonly findings: readonly Finding[];
};

/** What a list told the gateway that it did not know: each is reported once (audit, client log). */
export type PinChange = {
  readonly change: "new" | "changed" | "removed" | "returned";
  readonly kind: PinKind;
  readonly name: string;
  /** The digest before (changed, removed, returned). */
  readonly oldDigest?: string;
  /** The digest now (new, changed, returned). */
  readonly newDigest?: string;
  readonly findings?: readonly Finding[];
};

function sameFindings(a: readonly Finding[], b: readonly Finding[]): boolean {
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The pins document after a list of `kind`: new definitions recorded, changed ones given their new
 * latest version, and, when the list was complete, those it no longer had marked removed.
 * The same document comes back (the same object) when nothing changed, so a caller
 * writes only on change.
 *
 * @example
 * const { document, changes } = observePins(stored, seen, { kind: "tool", complete: true, now: new Date().toISOString() });
 * if (document !== stored) await savePins(kv, "alpha", document);
 */
export function observePins(
  stored: PinsDocument,
  seen: readonly SeenDefinition[],
  { kind, complete, now }: { kind: PinKind; complete: boolean; now: string },
): { document: PinsDocument; changes: PinChange[] } {
  const entries: Record<string, ObservedPin> = { ...stored.entries };
  const changes: PinChange[] = [];
  const listed = new Set<string>();
  for (const item of seen) {
    const id = pinId(item.kind, item.name);
    listed.add(id);
    const pin = Object.hasOwn(entries, id) ? entries[id] : undefined;
    const version = (): PinVersion => ({
      digest: item.digest,
      definition: item.definition,
      findings: item.findings,
      seenAt: now,
    });
    if (!pin) {
      const first = version();
      entries[id] = { kind: item.kind, name: item.name, first, latest: first };
      changes.push({
        change: "new",
        kind: item.kind,
        name: item.name,
        newDigest: item.digest,
        findings: item.findings,
      });
    } else if (pin.latest.digest !== item.digest) {
      // Back to the first version: the same definition, with the findings of this sight (a duplicate name, or none).
      const same = sameFindings(pin.first.findings, item.findings);
      const first = same ? pin.first : { ...pin.first, findings: item.findings };
      const latest = pin.first.digest !== item.digest ? version() : first;
      entries[id] = { kind: pin.kind, name: pin.name, first: pin.first, latest };
      changes.push({
        change: "changed",
        kind: item.kind,
        name: item.name,
        oldDigest: pin.latest.digest,
        newDigest: item.digest,
        findings: latest.findings,
      });
    } else if (pin.removedAt !== undefined) {
      entries[id] = { kind: pin.kind, name: pin.name, first: pin.first, latest: pin.latest };
      changes.push({
        change: "returned",
        kind: item.kind,
        name: item.name,
        oldDigest: pin.latest.digest,
        newDigest: item.digest,
      });
    }
  }
  if (complete) {
    for (const [id, pin] of Object.entries(entries)) {
      if (listed.has(id) || pin.removedAt !== undefined || pin.kind !== kind) continue;
      entries[id] = { ...pin, removedAt: now };
      changes.push({ change: "removed", kind: pin.kind, name: pin.name, oldDigest: pin.latest.digest });
    }
  }
  return changes.length === 0 ? { document: stored, changes } : { document: { v: 1, entries }, changes };
}

/** The decisions after an approval of `version` (any rejection of it is forgotten). */
export function approve(decisions: DecisionsDocument, id: string, version: PinVersion): DecisionsDocument {
  const previous = decisions.entries[id];
  const rejected = (previous?.rejected ?? []).filter((digest) => digest !== version.digest);
  return {
    v: 1,
    entries: { ...decisions.entries, [id]: { approved: version, ...(rejected.length > 0 ? { rejected } : {}) } },
  };
}

/** The decisions after a rejection of `digest`. */
export function reject(decisions: DecisionsDocument, id: string, digest: string): DecisionsDocument {
  const previous = decisions.entries[id];
  const rejected = [...(previous?.rejected ?? []).filter((d) => d !== digest), digest].slice(-MAX_REJECTED);
  return { v: 1, entries: { ...decisions.entries, [id]: { ...previous, rejected } } };
}

/** A document without the entries whose ids `drop` says. */
export function withoutEntries<D extends PinsDocument | DecisionsDocument>(
  document: D,
  drop: (id: string) => boolean,
): D {
  return { ...document, entries: Object.fromEntries(Object.entries(document.entries).filter(([id]) => !drop(id))) };
}
