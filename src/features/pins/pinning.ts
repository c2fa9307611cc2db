/**
 * Tool pinning on the request path: every tools/list and prompts/list answer is told to
 * its upstreams' pins (pin-observation.ts); under `enforce` the list shows the approved
 * definition of a changed tool (its stored bytes, so schemas stay the upstream's) and
 * leaves out one never approved, and a call of a changed tool goes through only while
 * its arguments fit both versions. A name an `enforce` upstream lists twice is shown
 * once, as its approved bytes. `warn` serves what the upstream serves and reports.
 * A client that asked for log messages is told which definitions are not approved.
 *
 * Two middleware (pipeline/index.ts): `pinnedLists` sits inside output filters, text
 * overrides and icons, so it fingerprints the upstream's own definitions, never a list the
 * gateway shaped; `pinning` checks calls where it always has. The gateway's own `sys___`
 * tools are never pinned.
 */
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import type { UpstreamConfig } from "../../config/upstreams";
import { isObject, resultText, type JsonObject, type JsonRpcRequest } from "../../core/jsonrpc";
import { pathSpan, parseSpan, rootSpan, splice, type Splice } from "../../core/raw-json";
import { keepListed } from "../../core/raw-json-lists";
import { onRequests, poolRequest, type CallContext, type Middleware } from "../../context/call-context";
import { Answer } from "../../context/answer";
import { argumentsMisfit } from "./pin-arguments";
import { scanContext } from "./pin-findings";
import { definitionObject, type PinKind } from "./pin-definition";
import { approvedVersion, pinId, pinStatus } from "./pins";
import { loadPins } from "./pin-store";
import { UNAVAILABLE_META_KEY } from "../../relay/merge-lists";
import { levelFor } from "../shaping/client-logging";
import { listedEntries, setMemberSplice, type ListedEntry } from "../../pipeline/list-items";
import { listedPinName, observeList, pinningOf, type ListedDefinition, type Observation } from "./pin-observation";
import { duplicateMemberFinding } from "./pin-duplicates";
import { unsettledMessage, type ReportedChange, type Unsettled } from "./pin-reports";
import { atLeast } from "../../storage/client-log-levels";
import { namedAt } from "../../context/call-target";
import { transportFor } from "../../upstream/select-transport";

export type PinningOptions = {
  /** How long an isolate trusts its copy of an upstream's pins. */
  readonly cacheTtlMs?: number;
  /** Whether pin changes go to the audit Queue (AUDIT enabled). */
  readonly audit?: boolean;
};

const LISTS: ReadonlyMap<string, PinKind> = new Map([
  ["tools/list", "tool"],
  ["prompts/list", "prompt"],
]);

function unavailableOf(text: string): Set<string> {
  const meta = pathSpan(text, ["result", "_meta", UNAVAILABLE_META_KEY]);
  const value = meta ? parseSpan(text, meta) : undefined;
  return new Set(Array.isArray(value) ? value.filter(isObject).map((item) => String(item["upstream"])) : []);
}

/** True when this client's list of `upstream` went through the 2026-to-2025 downgrade. */
async function downgradedFor(ctx: CallContext, upstream: UpstreamConfig): Promise<boolean> {
  if (ctx.identity.era === "modern") return false;
  // Answered from the cache the relay just filled: the side that served this client's list.
  const transport = await transportFor(upstream, poolRequest(ctx));
  return transport.ok && transport.value.side === "modern";
}

async function observeAnswer(
  ctx: CallContext,
  request: JsonRpcRequest,
  text: string,
  kind: PinKind,
  pinned: readonly UpstreamConfig[],
  options: Required<PinningOptions>,
) {
  const entries = listedEntries(ctx.route, request.method, text);
  const unavailable = unavailableOf(text);
  const paged = request.params?.["cursor"] !== undefined || pathSpan(text, ["result", "nextCursor"]) !== undefined;
  const observations = new Map<string, Observation>();
  const failed = new Set<string>();
  const configured = ctx.services.config.upstreams.ok ? ctx.services.config.upstreams.value.map((u) => u.name) : [];
  await Promise.all(
    pinned
      .filter((upstream) => !unavailable.has(upstream.name))
      .map((upstream) =>
        observeOne(upstream).catch((error: unknown) => {
          // One upstream's definitions that cannot be observed leave the others' lists whole.
          failed.add(upstream.name);
          console.error(
            `mcp-edge-gateway: pinning could not observe the ${kind}s of "${upstream.name}": ${error instanceof Error ? error.message : String(error)}`,
          );
        }),
      ),
  );
  return { entries, observations, failed };

  async function observeOne(upstream: UpstreamConfig): Promise<void> {
    if (await downgradedFor(ctx, upstream)) {
      // A 2025 client's list of a 2026-07-28 upstream may lack what that client cannot read (upstream/downgrade.ts):
      // it is shaped by the pins, never recorded into them (they would flip between the two eras' lists).
      observations.set(upstream.name, {
        state: await loadPins(ctx.services.kv!, upstream.name, options.cacheTtlMs),
        changes: [],
      });
      return;
    }
    const own = entries.filter((entry) => entry.upstream === upstream.name);
    const others = entries.filter((entry) => entry.upstream !== upstream.name);
    const observation = await observeList({
      kv: ctx.services.kv!,
      upstream,
      kind,
      listed: [
        ...own.map((entry) => ({ name: listedPinName(entry), raw: text.slice(entry.span.start, entry.span.end) })),
        ...ambiguousOf(ctx, upstream.name, request.method),
      ],
      complete: !paged,
      scan: scanContext(
        configured.filter((name) => name !== upstream.name),
        others.map(listedPinName),
      ),
      cacheTtlMs: options.cacheTtlMs,
      observer: {
        principal: ctx.identity.principal,
        route: ctx.route.kind === "aggregated" ? "/mcp" : `/mcp/${ctx.route.name}`,
        protocolVersion: ctx.identity.protocolVersion,
      },
      auditQueue: ctx.services.auditQueue,
      audit: options.audit,
      waitUntil: ctx.waitUntil,
    });
    observations.set(upstream.name, observation);
  }
}

/**
 * The entries of `upstream` the relay left out of this list for naming a member twice, as
 * definitions for its pins (under the name JSON.parse reads, the one a client would have
 * seen), each with a `duplicate-member` finding: nothing is served, the operator is told.
 */
function ambiguousOf(ctx: CallContext, upstream: string, method: string): ListedDefinition[] {
  const out: ListedDefinition[] = [];
  for (const entry of ctx.record.ambiguousEntries ?? []) {
    if (entry.upstream !== upstream || entry.method !== method) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(entry.raw);
    } catch {
      continue; // not JSON: no name a client could call
    }
    const name = isObject(parsed) ? parsed["name"] : undefined;
    if (typeof name === "string") out.push({ name, raw: entry.raw, findings: [duplicateMemberFinding(entry.key)] });
  }
  return out;
}

function twiceKey(upstream: string, pinName: string): string {
  return `${upstream}\n${pinName}`;
}

/** The list as clients may see it, and what in it is not approved. */
function shapeList(
  text: string,
  key: string,
  kind: PinKind,
  entries: readonly ListedEntry[],
  pinned: readonly UpstreamConfig[],
  observations: ReadonlyMap<string, Observation>,
  failed: ReadonlySet<string>,
  listedTwice: ReadonlySet<string>,
) {
  const edits: Splice[] = [];
  const hidden = new Set<string>();
  const unsettled: Unsettled[] = [];
  for (const entry of entries) {
    const upstream = pinned.find((u) => u.name === entry.upstream);
    if (upstream && failed.has(upstream.name) && pinningOf(upstream) === "enforce") {
      hidden.add(entry.name!); // not observed, so not known approved: enforce shows none of it
      continue;
    }
    const observation = upstream && observations.get(upstream.name);
    const id = pinId(kind, listedPinName(entry));
    const pin = observation?.state.pins.entries[id];
    if (!upstream || !pin) continue;
    const mode = pinningOf(upstream);
    const decision = observation.state.decisions.entries[id];
    const status = pinStatus(pin, decision, mode, upstream.approveNew === true);
    // A name listed twice is shown as its approved bytes even when pinned: the entry kept may not be the approved one.
    const twice = listedTwice.has(twiceKey(upstream.name, listedPinName(entry)));
    if (status === "pinned" && !twice) continue;
    if (status !== "pinned") {
      const digest = pin.latest.digest;
      unsettled.push({ upstream: upstream.name, kind, listedName: entry.name!, status, digest, mode });
    }
    if (mode !== "enforce") continue;
    const approved = approvedVersion(pin, decision, mode, upstream.approveNew === true);
    if (!approved) hidden.add(entry.name!);
    else
      edits.push({
        span: entry.span,
        raw: splice(approved.definition, [
          setMemberSplice(approved.definition, rootSpan(approved.definition), "name", JSON.stringify(entry.name)),
        ]),
      });
  }
  const shown = edits.length > 0 ? splice(text, edits) : text;
  return {
    text: hidden.size > 0 ? keepListed(shown, key, (name) => name === undefined || !hidden.has(name)) : shown,
    unsettled,
  };
}

/**
 * The list without the later entries of a name an `enforce` upstream listed more than once: its
 * pins keep one version per name (features/pins/pin-duplicates.ts), so its first entry is judged and
 * shown as that name's approved bytes, and the others are not served at all.
 */
function onceEachUnderEnforce(
  ctx: CallContext,
  method: string,
  text: string,
  key: string,
  entries: readonly ListedEntry[],
  pinned: readonly UpstreamConfig[],
) {
  const enforced = new Set(pinned.filter((upstream) => pinningOf(upstream) === "enforce").map((u) => u.name));
  const seen = new Set<string>();
  const listedTwice = new Set<string>();
  const later = new Set<number>();
  for (const entry of entries) {
    if (!enforced.has(entry.upstream!)) continue;
    const id = twiceKey(entry.upstream!, listedPinName(entry));
    if (!seen.has(id)) {
      seen.add(id);
      continue;
    }
    later.add(entry.span.start);
    listedTwice.add(id);
  }
  if (later.size === 0) return { text, entries, listedTwice };
  const shown = keepListed(text, key, (_name, item) => !later.has(item.start));
  return { text: shown, entries: listedEntries(ctx.route, method, shown), listedTwice };
}

async function pinList(
  ctx: CallContext,
  request: JsonRpcRequest,
  text: string,
  kind: PinKind,
  pinned: readonly UpstreamConfig[],
  options: Required<PinningOptions>,
): Promise<string> {
  const key = kind === "tool" ? "tools" : "prompts";
  const list = pathSpan(text, ["result", key]);
  if (!list || text.charCodeAt(list.start) !== 0x5b) return text; // an error, or no list: nothing to tell the pins
  const observed = await observeAnswer(ctx, request, text, kind, pinned, options);
  const { observations, failed } = observed;
  const once = onceEachUnderEnforce(ctx, request.method, text, key, observed.entries, pinned);
  const shaped = shapeList(once.text, key, kind, once.entries, pinned, observations, failed, once.listedTwice);
  const removed: ReportedChange[] = [...observations.values()].flatMap((o) =>
    o.changes.filter((change) => change.change === "removed"),
  );
  if (shaped.unsettled.length > 0 || removed.length > 0) {
    const threshold = await levelFor(ctx, request);
    if (threshold !== null && atLeast("warning", threshold))
      await ctx.emit(unsettledMessage(shaped.unsettled, removed));
  }
  return shaped.text;
}

function heldCall(request: JsonRpcRequest, kind: PinKind, message: string): string {
  if (kind === "tool") return resultText(request.id, { content: [{ type: "text", text: message }], isError: true });
  return JSON.stringify({ jsonrpc: "2.0", id: request.id, error: { code: -32602, message } });
}

/** A call of a definition under `enforce`: undefined when it may go to the upstream, else the answer that refuses it. */
async function checkCall(ctx: CallContext, request: JsonRpcRequest, cacheTtlMs: number): Promise<string | undefined> {
  const name = request.params?.["name"];
  // The classifier's target says what is called (a tool or a prompt); without one there is nothing pinned to check.
  const kind = ctx.target?.kind;
  const key = namedAt(ctx.target);
  if (kind === undefined || kind === "resource") return undefined;
  const upstream = key && ctx.route.upstreams.find((u) => u.name === key.upstream);
  if (!key || !upstream || pinningOf(upstream) !== "enforce") return undefined;
  const own = listedPinName(key);
  const state = await loadPins(ctx.services.kv!, upstream.name, cacheTtlMs);
  const id = pinId(kind, own);
  const pin = state.pins.entries[id];
  const label = `${kind} ${JSON.stringify(name)}`;
  if (!pin) {
    if (upstream.approveNew !== true) return undefined;
    return heldCall(
      request,
      kind,
      `${label} has not been listed and approved yet (pinning: enforce, approveNew); list it, then ask an operator to approve it`,
    );
  }
  const decision = state.decisions.entries[id];
  const status = pinStatus(pin, decision, "enforce", upstream.approveNew === true);
  if (status === "pinned") return undefined;
  ctx.record.pinHeld = pin.latest.digest;
  const approved = approvedVersion(pin, decision, "enforce", upstream.approveNew === true);
  if (!approved)
    return heldCall(
      request,
      kind,
      `${label} is held for an operator's approval (digest ${pin.latest.digest}); the call was not sent`,
    );
  const before = definitionObject(approved.definition);
  const after = definitionObject(pin.latest.definition);
  const args = request.params?.["arguments"];
  const given: JsonObject = isObject(args) ? args : {};
  const misfit =
    before && after ? await argumentsMisfit(kind, before, after, given) : "a stored definition could not be read";
  if (misfit === undefined) {
    delete ctx.record.pinHeld;
    return undefined;
  }
  const change =
    status === "rejected" ? "a change an operator rejected" : "a pending change an operator has not approved";
  return heldCall(
    request,
    kind,
    `${label} has ${change} (approved ${approved.digest}, upstream now serves ${pin.latest.digest}); the arguments do not fit ${misfit}; the call was not sent`,
  );
}

/**
 * The pinning middleware for calls: under `enforce`, a call of a definition with a change
 * not approved goes through only while its arguments fit both versions.
 *
 * @example
 * composeMiddleware([pinning({ cacheTtlMs: 30_000 }), pinnedLists({ cacheTtlMs: 30_000, audit: true })], relay);
 */
export function pinning({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: PinningOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function pinning(ctx, request) {
        const pinned = ctx.route.upstreams.some((upstream) => pinningOf(upstream) !== "off");
        if (!ctx.services.kv || !pinned) return next(ctx, request);
        const refused = await checkCall(ctx, request.message, cacheTtlMs);
        return refused !== undefined ? Answer.ofText(refused) : next(ctx, request);
      },
  );
}

/**
 * The pinning middleware for lists: tools/list and prompts/list answers are told to the
 * pins and, under `enforce`, shaped by them. It sits inside every layer that shapes a list
 * (output filters, text overrides, icons), so it judges what the upstream said.
 */
export function pinnedLists(options: PinningOptions = {}): Middleware {
  const { cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS, audit = true } = options;
  const settled = { cacheTtlMs, audit };
  return onRequests(
    (next) =>
      async function pinnedLists(ctx, request) {
        const listKind = LISTS.get(request.message.method);
        const pinned = ctx.route.upstreams.filter((upstream) => pinningOf(upstream) !== "off");
        if (!listKind || !ctx.services.kv || pinned.length === 0) return next(ctx, request);
        const answer = await next(ctx, request);
        return answer.withText(await pinList(ctx, request.message, answer.text, listKind, pinned, settled));
      },
  );
}
