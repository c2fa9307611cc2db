/**
 * One upstream's part of a list, told to its pins: the definitions are fingerprinted,
 * new versions scanned for findings, the pins document written when something changed,
 * and each change reported once (audit). Shared by client lists (features/pins/pinning.ts)
 * and the Cron Trigger's re-checks (features/pins/pin-sweep.ts).
 */
import type { UpstreamConfig } from "../../config/upstreams";
import { DEFAULT_PINNING_MODE, type PinningMode } from "./pins";
import type { JsonObject } from "../../core/jsonrpc";
import { bytesToBase64Url } from "../../core/base64url";
import { NAME_SEPARATOR } from "../../core/names";
import type { ListedEntry } from "../../pipeline/list-items";
import { definitionObject, fingerprint, isEarlierDigestOf, type PinKind } from "./pin-definition";
import { changedMembers } from "./pin-diff";
import { scanDefinition, type ScanContext } from "./pin-findings";
import { oneVersionPerName, withoutDuplicateFinding } from "./pin-duplicates";
import { approvedVersion, observePins, pinId, pinStatus, type PinVersion, type SeenDefinition } from "./pins";
import { loadPins, savePins, serialized, type Finding, type UpstreamPins } from "./pin-store";
import { pinEvent, sendPinEvents, type Observer, type ReportedChange } from "./pin-reports";

/** The pinning mode of an upstream. */
export function pinningOf(upstream: UpstreamConfig): PinningMode {
  return upstream.pinning ?? DEFAULT_PINNING_MODE;
}

/** The upstream's own name of a listed tool or prompt (the tail of its `<upstream>___<name>` key). */
export function listedPinName(entry: Pick<ListedEntry, "key" | "upstream">): string {
  return entry.key!.slice(entry.upstream!.length + NAME_SEPARATOR.length);
}

/**
 * A listed definition: its pin name (the upstream's own), its bytes as listed, and findings
 * of the list about it (an entry not served because it names a member twice).
 */
export type ListedDefinition = { readonly name: string; readonly raw: string; readonly findings?: readonly Finding[] };

/** What a list of one upstream told its pins. */
export type Observation = { readonly state: UpstreamPins; readonly changes: readonly ReportedChange[] };

export type ObserveOptions = {
  readonly kv: KVNamespace;
  readonly upstream: UpstreamConfig;
  readonly kind: PinKind;
  readonly listed: readonly ListedDefinition[];
  /** True when the list was the upstream's whole list (no page before or after, the upstream answered). */
  readonly complete: boolean;
  readonly scan: ScanContext;
  readonly cacheTtlMs: number;
  readonly observer: Observer;
  readonly auditQueue: Queue | undefined;
  readonly audit: boolean;
  readonly waitUntil: (promise: Promise<unknown>) => void;
};

/**
 * The last list each upstream and kind showed this isolate, by digest, with the pins it
 * left: the same bytes against the same pins change nothing, so an unchanged list costs
 * one SHA-256 over its text instead of a parse and a canonical digest per definition.
 */
const lastSeen = new Map<
  string,
  { readonly digest: string; readonly complete: boolean; readonly pins: UpstreamPins["pins"] }
>();

async function listDigest(listed: readonly ListedDefinition[]): Promise<string> {
  const text = listed.map((item) => `${item.name}\n${item.raw}`).join("\n\u0000");
  return bytesToBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

function knownVersion(state: UpstreamPins, kind: PinKind, name: string, digest: string): PinVersion | undefined {
  const pin = state.pins.entries[pinId(kind, name)];
  if (!pin) return undefined;
  return pin.latest.digest === digest ? pin.latest : pin.first.digest === digest ? pin.first : undefined;
}

/** The stored version `definition` is, by the digest pins had before every member was pinned (pin-definition.ts). */
async function earlierVersion(
  state: UpstreamPins,
  kind: PinKind,
  name: string,
  definition: JsonObject,
): Promise<PinVersion | undefined> {
  const id = pinId(kind, name);
  const pin = state.pins.entries[id];
  const candidates = [pin?.latest, pin?.first, state.decisions.entries[id]?.approved];
  for (const stored of candidates) {
    if (stored && (await isEarlierDigestOf(kind, name, definition, stored))) return stored;
  }
  return undefined;
}

async function seenOf(
  state: UpstreamPins,
  upstream: UpstreamConfig,
  kind: PinKind,
  listed: readonly ListedDefinition[],
  scan: ScanContext,
): Promise<SeenDefinition[]> {
  const out: SeenDefinition[] = [];
  for (const item of listed) {
    const definition = definitionObject(item.raw);
    if (!definition) continue;
    let digest = await fingerprint(kind, item.name, definition);
    let version = knownVersion(state, kind, item.name, digest);
    if (!version) {
      version = await earlierVersion(state, kind, item.name, definition);
      if (version) digest = version.digest;
    }
    // Only a version not seen before is scanned: an unchanged list costs a digest per definition, nothing more.
    const findings = version
      ? withoutDuplicateFinding(version.findings)
      : [...scanDefinition(definition, scan), ...(item.findings ?? [])];
    out.push({ kind, name: item.name, digest, definition: item.raw, findings });
  }
  // A name listed twice is one version in the pins: the one an operator has to review (features/pins/pin-duplicates.ts).
  return oneVersionPerName(out, (name) => {
    const id = pinId(kind, name);
    const pin = state.pins.entries[id];
    const decision = state.decisions.entries[id];
    const approved = pin && approvedVersion(pin, decision, pinningOf(upstream), upstream.approveNew === true);
    return approved ? approved.digest : undefined;
  });
}

function membersOf(
  state: UpstreamPins,
  kind: PinKind,
  name: string,
  oldDigest: string | undefined,
  raw: string | undefined,
): string[] | undefined {
  const before = oldDigest && knownVersion(state, kind, name, oldDigest);
  const old: JsonObject | undefined = before ? definitionObject(before.definition) : undefined;
  const now = raw !== undefined ? definitionObject(raw) : undefined;
  return old && now ? changedMembers(kind, old, now) : undefined;
}

/**
 * Tells the pins of `upstream` what one list showed; resolves to the state to serve by
 * (written state where something changed) and the changes, reported to audit already.
 *
 * @example
 * const { state } = await observeList({ kv, upstream, kind: "tool", listed, complete: true, ... });
 */
export function observeList(options: ObserveOptions): Promise<Observation> {
  const { kv, upstream, kind } = options;
  return serialized(upstream.name, async () => {
    const state = await loadPins(kv, upstream.name, options.cacheTtlMs);
    const memoKey = `${upstream.name}\n${kind}`;
    const digest = await listDigest(options.listed);
    const last = lastSeen.get(memoKey);
    if (last && last.digest === digest && last.pins === state.pins && last.complete === options.complete)
      return { state, changes: [] };
    const seen = await seenOf(state, upstream, kind, options.listed, options.scan);
    const now = new Date().toISOString();
    const { document, changes } = observePins(state.pins, seen, { kind, complete: options.complete, now });
    lastSeen.set(memoKey, { digest, complete: options.complete, pins: document });
    if (document === state.pins) return { state, changes: [] };
    const next: UpstreamPins = { ...state, pins: document };
    // Awaited: a change is rare, and an operator reading GET /admin/pins right after must find it stored.
    await savePins(kv, upstream.name, state, document).catch((error: unknown) => {
      // KV allows one write a second per key: a refused write is tried again by the next list that sees the change.
      console.error(
        `mcp-edge-gateway: pins of "${upstream.name}" not written: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    const mode = pinningOf(upstream);
    const raws = new Map(seen.map((item) => [item.name, item.definition]));
    const reported: ReportedChange[] = changes.map((change) => {
      const pin = document.entries[pinId(change.kind, change.name)]!;
      const members =
        change.change === "changed"
          ? membersOf(state, change.kind, change.name, change.oldDigest, raws.get(change.name))
          : undefined;
      return {
        ...change,
        upstream: upstream.name,
        status: pinStatus(
          pin,
          next.decisions.entries[pinId(change.kind, change.name)],
          mode,
          upstream.approveNew === true,
        ),
        ...(members ? { members } : {}),
      };
    });
    for (const change of reported) {
      console.warn(
        `mcp-edge-gateway: pins: ${change.kind} "${change.name}" of "${upstream.name}": ${change.change} (${change.oldDigest ?? "-"} → ${change.newDigest ?? "-"}), ${change.status}`,
      );
    }
    if (options.audit && options.auditQueue) {
      // The first list of an upstream is its baseline: only what is held or has findings is worth an event there.
      const baseline = !Object.values(state.pins.entries).some((pin) => pin.kind === kind);
      const worth = reported.filter(
        (change) => !baseline || change.status !== "pinned" || (change.findings?.length ?? 0) > 0,
      );
      const events = await Promise.all(worth.map((change) => pinEvent(change, mode, options.observer, now)));
      options.waitUntil(sendPinEvents(options.auditQueue, events));
    }
    return { state: next, changes: reported };
  });
}
