/**
 * Where pins live: per upstream, two KV documents (features/pins/pins.ts says why two) read at
 * most once per TTL per isolate, so a list costs no KV read while the copy is fresh and
 * two per upstream when it is not. The pins document is written only when a list showed
 * something new (never on an unchanged list), one write at a time per upstream in an
 * isolate; isolates that see the same change write the same document, so a race costs
 * a second identical write, never a lost decision (decisions have their own key, written
 * only by the admin API).
 */
import { isObject } from "../../core/jsonrpc";
import { IsolateCopies } from "../../storage/isolate-copies";

/** What a pin is of. */
export type PinKind = "tool" | "prompt";

/** How much a finding matters: "high" holds a definition in enforce mode (features/pins/pin-findings.ts). */
export type FindingSeverity = "high" | "medium" | "low";

/** One finding: the rule, its severity, where (a JSON Pointer into the definition) and what matched. */
export type Finding = {
  readonly rule: string;
  readonly severity: FindingSeverity;
  readonly at: string;
  readonly match: string;
};

/** One version of a definition: its fingerprint, its bytes as the upstream listed them, its findings, when first seen. */
export type PinVersion = {
  readonly digest: string;
  readonly definition: string;
  readonly findings: readonly Finding[];
  readonly seenAt: string;
};

/** What the gateway has seen of one definition. */
export type ObservedPin = {
  readonly kind: PinKind;
  readonly name: string;
  /** The version seen first (trusted on first use unless held). */
  readonly first: PinVersion;
  /** The version the upstream serves now (the same as `first` until it changes). */
  readonly latest: PinVersion;
  /** Set when a complete list no longer had it. */
  readonly removedAt?: string;
};

/** The pins document of one upstream (KV `pins/<upstream>`): written by lists and the Cron Trigger. */
export type PinsDocument = { readonly v: 1; readonly entries: Readonly<Record<string, ObservedPin>> };

/** An operator's decisions about one definition. */
export type PinDecision = {
  /** The version approved through the admin API (replaces the first-seen one). */
  readonly approved?: PinVersion;
  /** Digests rejected: the upstream may serve them, clients never see them. */
  readonly rejected?: readonly string[];
};

/** The decisions document of one upstream (KV `pin-decisions/<upstream>`): written by the admin API only. */
export type DecisionsDocument = { readonly v: 1; readonly entries: Readonly<Record<string, PinDecision>> };

export const EMPTY_PINS: PinsDocument = { v: 1, entries: {} };
export const EMPTY_DECISIONS: DecisionsDocument = { v: 1, entries: {} };

export const PINS_KEY_PREFIX = "pins/";
export const DECISIONS_KEY_PREFIX = "pin-decisions/";
/** The Cron Trigger's last run: what it checked, what it could not reach. */
export const SWEEP_REPORT_KEY = "pins-sweep/last";
/** Where the Cron Trigger's next run starts (`{ "next": <index> }`), when it cannot take every pinned upstream in one run. */
const SWEEP_CURSOR_KEY = "pins-sweep/cursor";
/** A pins document larger than this is not written (an upstream listing that much is logged instead). */
export const MAX_PINS_DOCUMENT_BYTES = 8 * 1024 * 1024;

/**
 * Both documents of one upstream. `invalid` names the KV keys whose stored text is not a
 * document of theirs (each read as empty): an admin write of one entry must not replace them.
 */
export type UpstreamPins = {
  readonly pins: PinsDocument;
  readonly decisions: DecisionsDocument;
  readonly invalid?: readonly string[];
};

const copies = new IsolateCopies<UpstreamPins>();
const locks = new Map<string, Promise<unknown>>();

function asDocument<D extends PinsDocument | DecisionsDocument>(
  key: string,
  text: string | null,
  empty: D,
): D | undefined {
  if (text === null) return empty;
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value) && value["v"] === 1 && isObject(value["entries"])) return value as D;
  } catch {
    // reported below
  }
  console.error(`mcp-edge-gateway: KV "${key}" is not a pins document; it is read as empty`);
  return undefined;
}

/** Both documents of `upstream`, straight from KV. */
export async function readPins(kv: KVNamespace, upstream: string): Promise<UpstreamPins> {
  const [pins, decisions] = await Promise.all([
    kv.get(PINS_KEY_PREFIX + upstream),
    kv.get(DECISIONS_KEY_PREFIX + upstream),
  ]);
  const pinsKey = PINS_KEY_PREFIX + upstream;
  const decisionsKey = DECISIONS_KEY_PREFIX + upstream;
  const [pinsDocument, decisionsDocument] = [
    asDocument(pinsKey, pins, EMPTY_PINS),
    asDocument(decisionsKey, decisions, EMPTY_DECISIONS),
  ];
  const invalid = [...(pinsDocument ? [] : [pinsKey]), ...(decisionsDocument ? [] : [decisionsKey])];
  return {
    pins: pinsDocument ?? EMPTY_PINS,
    decisions: decisionsDocument ?? EMPTY_DECISIONS,
    ...(invalid.length > 0 ? { invalid } : {}),
  };
}

/**
 * Both documents of `upstream`, this isolate's copy while younger than `ttlMs`.
 *
 * @example
 * const { pins, decisions } = await loadPins(kv, "alpha", 30_000);
 */
export function loadPins(kv: KVNamespace, upstream: string, ttlMs: number): Promise<UpstreamPins> {
  return copies.load(upstream, ttlMs, () => readPins(kv, upstream));
}

/** Keeps `value` as this isolate's copy (after this isolate wrote it). */
function remember(upstream: string, value: UpstreamPins): void {
  copies.remember(upstream, value);
}

/** Drops this isolate's copy (after an admin write). */
export function forgetPins(upstream: string): void {
  copies.forget(upstream);
}

/**
 * Runs `work` after every earlier `work` of this upstream in this isolate has finished:
 * two lists that see the same change at once write it once.
 */
export function serialized<T>(upstream: string, work: () => Promise<T>): Promise<T> {
  const previous = locks.get(upstream) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  locks.set(upstream, tail);
  void tail.then(() => {
    if (locks.get(upstream) === tail) locks.delete(upstream);
  });
  return run;
}

/** Writes the pins document of `upstream` and keeps it as this isolate's copy; false when it was too large to store. */
export async function savePins(
  kv: KVNamespace,
  upstream: string,
  current: UpstreamPins,
  pins: PinsDocument,
): Promise<boolean> {
  const text = JSON.stringify(pins);
  if (text.length > MAX_PINS_DOCUMENT_BYTES) {
    console.error(
      `mcp-edge-gateway: pins of "${upstream}" take ${text.length} bytes, more than ${MAX_PINS_DOCUMENT_BYTES}; not stored`,
    );
    return false;
  }
  remember(upstream, { ...current, pins });
  await kv.put(PINS_KEY_PREFIX + upstream, text);
  return true;
}

/** Writes the decisions document of `upstream` (admin API only). */
export async function saveDecisions(kv: KVNamespace, upstream: string, decisions: DecisionsDocument): Promise<void> {
  await kv.put(DECISIONS_KEY_PREFIX + upstream, JSON.stringify(decisions));
  forgetPins(upstream);
}

/** Writes both documents of `upstream` (admin API: forgetting). */
export async function saveBoth(kv: KVNamespace, upstream: string, value: UpstreamPins): Promise<void> {
  await Promise.all([
    kv.put(PINS_KEY_PREFIX + upstream, JSON.stringify(value.pins)),
    kv.put(DECISIONS_KEY_PREFIX + upstream, JSON.stringify(value.decisions)),
  ]);
  forgetPins(upstream);
}

/** The Cron Trigger's last report as stored (JSON), null when none or unreadable. */
export async function readSweepReport<T>(kv: KVNamespace): Promise<T | null> {
  return kv.get<T>(SWEEP_REPORT_KEY, "json").catch(() => null);
}

/** Stores the Cron Trigger's report. */
export async function writeSweepReport(kv: KVNamespace, report: unknown): Promise<void> {
  await kv.put(SWEEP_REPORT_KEY, JSON.stringify(report));
}

/** The Cron Trigger's stored cursor (JSON), null when none or unreadable. */
export async function readSweepCursor(kv: KVNamespace): Promise<unknown> {
  return kv.get<unknown>(SWEEP_CURSOR_KEY, "json").catch(() => null);
}

/** Stores where the Cron Trigger's next run starts. */
export async function writeSweepCursor(kv: KVNamespace, next: number): Promise<void> {
  await kv.put(SWEEP_CURSOR_KEY, JSON.stringify({ next }));
}
