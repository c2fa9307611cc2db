/**
 * The Cron Trigger's re-check of pins: lists every pinned upstream's tools and prompts
 * (through the relay, as a stateless client of the gateway's own) and tells its pins, so
 * a rug pull is seen even when no client lists. Each run is bounded: at most
 * `SWEEP_MAX_UPSTREAMS` upstreams (the next run starts where this one stopped: a cursor in KV,
 * `pins-sweep/cursor`), at most
 * `SWEEP_MAX_PAGES` pages per list, one deadline for the run; what it checked and the
 * upstreams it could not reach are logged and kept in KV (`pins-sweep/last`, shown by
 * GET /admin/pins).
 */
import { fail, GatewayError, ok } from "../../core/errors";
import { INTERNAL_ERROR, isObject, METHOD_NOT_FOUND } from "../../core/jsonrpc";
import { servicesFor } from "../../shell/services";
import type { CallContext } from "../../context/call-context";
import { newCallRecord } from "../../context/call-record";
import { INTERNAL_PRINCIPALS, internalCaller, internalContext } from "../../context/internal-caller";
import type { UpstreamConfig } from "../../config/upstreams";
import { describeInternalFailure } from "../../upstream/internal-failure";
import { followPages, listRequest, type PageSource } from "../../upstream/list-pages";
import { listedEntries } from "../../pipeline/list-items";
import { grantOnce } from "../personas/persona-grant";
import { listedPinName, observeList, pinningOf, type ListedDefinition } from "./pin-observation";
import { createRelay } from "../../relay/index";
import { relayTasks } from "../tasks/tasks";
import { askToSignIn } from "../upstream-sign-in/sign-in-required";
import { readSweepCursor, readSweepReport, writeSweepCursor, writeSweepReport } from "./pin-store";
import { redactSecrets } from "../../config/secrets";
import type { PinKind } from "./pin-definition";
import { scanContext } from "./pin-findings";
import { STATELESS_REVISION } from "../../core/revisions";

/** Upstreams one run lists (each costs a handshake when its session is not kept, and a request per page). */
export const SWEEP_MAX_UPSTREAMS = 8;
/** Pages read per list; a longer list is observed without removals (it was not seen whole). */
export const SWEEP_MAX_PAGES = 4;
/** The whole run's deadline. */
export const SWEEP_DEADLINE_MS = 25_000;
/**
 * How long an unchanged report stands before a run writes it again (its `at` then says the
 * sweep still runs): a run whose report says what the stored one says writes nothing, so a
 * steady gateway spends 24 KV writes a day on it, not one a run (288 at every 5 minutes).
 */
export const SWEEP_REPORT_REFRESH_MS = 60 * 60 * 1000;
/** Who the sweep's requests are from, in logs and audit events. */
export const SWEEP_PRINCIPAL = INTERNAL_PRINCIPALS.pinSweep;
const SWEEP_REVISION = STATELESS_REVISION;
/** The relay the sweep lists through: as the pipeline's, with the sign-in prompt around its upstream work. */
const relay = createRelay(askToSignIn, relayTasks);

/** What one run did. */
export type SweepReport = {
  readonly at: string;
  readonly checked: { upstream: string; tools: number; prompts: number; changes: number }[];
  readonly unreachable: { upstream: string; error: string }[];
  /** Pinned upstreams left for the next run (more than one run lists). */
  readonly deferred: string[];
};

type ListOutcome =
  | { ok: true; listed: ListedDefinition[]; complete: boolean }
  | { ok: false; error: string; absent?: boolean };

/** One page of `method` through the relay, under the sweep's context; a refusal the relay throws becomes a typed failure. */
function relayPages(ctx: CallContext, upstream: string, method: string): PageSource {
  return async (cursor, page) => {
    try {
      const wire = listRequest(method, `pin-sweep-${page}`, cursor);
      return ok((await relay({ ...ctx, record: newCallRecord() }, { kind: "request", wire }))!.text);
    } catch (error) {
      const code = error instanceof GatewayError ? error.code : INTERNAL_ERROR;
      const detail = error instanceof Error ? error.message : String(error);
      return fail({ reason: "rpc-error", upstream, method, code, message: detail });
    }
  };
}

async function listAll(ctx: CallContext, upstream: string, kind: PinKind): Promise<ListOutcome> {
  const method = kind === "tool" ? "tools/list" : "prompts/list";
  const listed: ListedDefinition[] = [];
  const walk = await followPages(
    upstream,
    method,
    relayPages(ctx, upstream, method),
    (text) => {
      for (const entry of listedEntries(ctx.route, method, text)) {
        if (entry.key !== undefined && entry.upstream !== undefined)
          listed.push({ name: listedPinName(entry), raw: text.slice(entry.span.start, entry.span.end) });
      }
      return undefined;
    },
    { maxPages: SWEEP_MAX_PAGES },
  );
  if (walk.ok) return { ok: true, listed, complete: walk.value.complete };
  if (walk.reason !== "rpc-error") return { ok: false, error: describeInternalFailure(walk) };
  return { ok: false, error: `${method}: ${walk.message}`, absent: walk.code === METHOD_NOT_FOUND };
}

/**
 * One run of the Cron Trigger.
 *
 * @example
 * export default { scheduled: (controller, env, ctx) => ctx.waitUntil(sweepPins(env, ctx)) };
 */
export async function sweepPins(
  env: Readonly<Record<string, unknown>>,
  execution: Pick<ExecutionContext, "waitUntil">,
  nowMs = Date.now(),
): Promise<SweepReport | undefined> {
  const services = servicesFor(env);
  const kv = services.kv;
  const configured = services.config.upstreams;
  if (!kv || !configured.ok) {
    console.error(`mcp-edge-gateway: pin sweep skipped: ${!kv ? "no GATEWAY_KV binding" : "UPSTREAMS is invalid"}`);
    return undefined;
  }
  const pinned = configured.value.filter((upstream) => pinningOf(upstream) !== "off");
  if (pinned.length === 0) return undefined; // nothing to re-check: no subrequest, no write
  const rotating = pinned.length > SWEEP_MAX_UPSTREAMS;
  const offset = rotating ? (await storedCursor(kv)) % pinned.length : 0;
  const order = [...pinned.slice(offset), ...pinned.slice(0, offset)];
  const chosen = order.slice(0, SWEEP_MAX_UPSTREAMS);
  const signal = AbortSignal.timeout(SWEEP_DEADLINE_MS);
  const waitUntil = (promise: Promise<unknown>) => execution.waitUntil(promise);
  const report: SweepReport = {
    at: new Date(nowMs).toISOString(),
    checked: [],
    unreachable: [],
    deferred: order.slice(SWEEP_MAX_UPSTREAMS).map((u) => u.name),
  };
  const names = configured.value.map((u) => u.name);
  for (const upstream of chosen) {
    if (signal.aborted) {
      report.deferred.push(upstream.name);
      continue;
    }
    try {
      const counts = await sweepOne(env, kv, upstream, signal, waitUntil, names, report);
      if (counts) report.checked.push(counts);
    } catch (error) {
      // One upstream whose lists cannot be observed is reported; the run goes on with the next.
      report.unreachable.push({
        upstream: upstream.name,
        error: redactSecrets(
          `its definitions could not be observed: ${error instanceof Error ? error.message : String(error)}`,
          env,
        ),
      });
    }
  }
  for (const { upstream, error } of report.unreachable)
    console.warn(`mcp-edge-gateway: pin sweep could not list "${upstream}": ${error}`);
  // The cursor moves on by what this run took, every run (the report may not be written).
  if (rotating) await writeSweepCursor(kv, (offset + chosen.length) % pinned.length);
  await storeReport(kv, report, nowMs);
  return report;
}

/** Where this run starts (0 when no cursor is stored or it is unreadable). */
async function storedCursor(kv: KVNamespace): Promise<number> {
  const stored = await readSweepCursor(kv);
  const next = isObject(stored) ? stored["next"] : undefined;
  return typeof next === "number" && Number.isSafeInteger(next) && next >= 0 ? next : 0;
}

/** Lists and observes one upstream's tools and prompts; its counts when it was reached (failures to list go to `report.unreachable`). */
async function sweepOne(
  env: Readonly<Record<string, unknown>>,
  kv: KVNamespace,
  upstream: UpstreamConfig,
  signal: AbortSignal,
  waitUntil: (p: Promise<unknown>) => void,
  names: readonly string[],
  report: SweepReport,
) {
  const services = servicesFor(env);
  const caller = await internalCaller(SWEEP_PRINCIPAL, "modern");
  const ctx = internalContext(caller, services, {
    upstream,
    grant: grantOnce(services.kv, caller.identity.roles, services.config.documentCacheTtlMs),
    signal,
    waitUntil,
  });
  const counts = { upstream: upstream.name, tools: 0, prompts: 0, changes: 0 };
  let reached = false;
  for (const kind of ["tool", "prompt"] as const) {
    const outcome = await listAll(ctx, upstream.name, kind);
    if (!outcome.ok) {
      if (outcome.absent) continue; // an upstream without prompts has nothing to pin
      report.unreachable.push({ upstream: upstream.name, error: redactSecrets(outcome.error, env) });
      break;
    }
    reached = true;
    const observation = await observeList({
      kv,
      upstream,
      kind,
      listed: outcome.listed,
      complete: outcome.complete,
      scan: scanContext(
        names.filter((name) => name !== upstream.name),
        [],
      ),
      cacheTtlMs: 0,
      observer: { principal: SWEEP_PRINCIPAL, route: `/mcp/${upstream.name}`, protocolVersion: SWEEP_REVISION },
      auditQueue: services.auditQueue,
      audit: services.config.audit.enabled,
      waitUntil,
    });
    counts[kind === "tool" ? "tools" : "prompts"] = outcome.listed.length;
    counts.changes += observation.changes.length;
  }
  return reached ? counts : undefined;
}

/** Writes the run's report unless the stored one says the same and is younger than SWEEP_REPORT_REFRESH_MS. */
async function storeReport(kv: KVNamespace, report: SweepReport, nowMs: number): Promise<void> {
  const previous = await readSweepReport<SweepReport>(kv);
  const outcome = (r: SweepReport) => JSON.stringify({ ...r, at: "" });
  if (previous && outcome(previous) === outcome(report) && nowMs - Date.parse(previous.at) < SWEEP_REPORT_REFRESH_MS)
    return;
  await writeSweepReport(kv, report);
}
