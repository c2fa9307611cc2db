/**
 * Who the gateway is when it calls upstreams for itself, in one place: the pin sweep of the
 * Cron Trigger, the console's lists, the admin probes. Each is a named principal of its
 * own (INTERNAL_PRINCIPALS: logs and audit events say which part of the gateway asked),
 * with an identity and an upstream client made here, never hand-built by the caller:
 * `internalPool` is what the pool needs to send for it (upstream/internal-client.ts),
 * `internalContext` the call context under which it goes through the relay as a client's
 * request would. Internal work acts for no user: it carries no roles and no user's
 * credential (an upstream each user signs in to answers it "sign in required").
 */
import { canonicalDigest } from "../core/canonical-json";
import { GATEWAY_INFO } from "../core/gateway-info";
import { LATEST_SESSION_REVISION, STATELESS_REVISION } from "../core/revisions";
import type { UpstreamConfig } from "../config/upstreams";
import type { PoolRequest, UpstreamClient } from "../upstream/upstream-session";
import type { CallContext, ClientEra, Identity, Services } from "./call-context";
import type { Grant } from "./grant";
import { newCallRecord } from "./call-record";
import { routeFor } from "./route";

/** The gateway's own callers. */
export const INTERNAL_PRINCIPALS = {
  /** The Cron Trigger's re-check of pinned definitions (features/pins/pin-sweep.ts). */
  pinSweep: "mcp-edge-gateway/pin-sweep",
  /** The console's Tools, Personas and Servers pages (features/catalog/console-catalog.ts). */
  console: "mcp-edge-gateway/console",
  /** `POST /admin/upstreams/<name>/probe` and the probe of a live upstream being saved. */
  probe: "mcp-edge-gateway/probe",
} as const;

export type InternalPrincipal = (typeof INTERNAL_PRINCIPALS)[keyof typeof INTERNAL_PRINCIPALS];

/** How long upstream sessions opened for an internal caller are kept (by the pool, in KV). */
export const INTERNAL_SESSION_TTL_S = 24 * 60 * 60;
/** Keys of internal callers' upstream sessions start with this: never a client's session id or a modern client's key. */
const KEY_PREFIX = "i1.";
/** The origin an internal call's route names (no HTTP request carries it). */
const INTERNAL_ORIGIN = "https://gateway.internal";

/** An internal caller: who it is toward the pipeline, and on whose behalf upstream sessions are kept. */
export type InternalCaller = { readonly identity: Identity; readonly upstreamClient: UpstreamClient };

/**
 * The caller `principal`, speaking `era` (a modern caller is served by an upstream's
 * 2026-07-28 side where it has one). Its upstream sessions are kept under a key derived
 * from the principal, the era and the day, so each run or page of the same day (on any
 * isolate) continues in the sessions the first one opened.
 *
 * @example
 * const sweep = await internalCaller(INTERNAL_PRINCIPALS.pinSweep, "modern");
 */
export async function internalCaller(
  principal: InternalPrincipal,
  era: ClientEra,
  nowS = Math.floor(Date.now() / 1000),
): Promise<InternalCaller> {
  const clientInfo = { name: GATEWAY_INFO.name, version: GATEWAY_INFO.version };
  const identity: Identity = {
    principal,
    roles: [],
    authMethod: "none",
    protocolVersion: era === "modern" ? STATELESS_REVISION : LATEST_SESSION_REVISION,
    era,
    clientCapabilities: {},
    clientInfo,
  };
  const period = Math.floor(nowS / INTERNAL_SESSION_TTL_S);
  const upstreamClient: UpstreamClient = {
    sid: KEY_PREFIX + (await canonicalDigest([principal, era, period])),
    protocolVersion: LATEST_SESSION_REVISION,
    clientCapabilities: {},
    clientInfo,
    upstreams: {},
    exp: (period + 2) * INTERNAL_SESSION_TTL_S,
  };
  return { identity, upstreamClient };
}

/**
 * What the pool needs to send for `caller`: the Worker's bindings, its upstream client and
 * its era, and no user's credentials.
 *
 * @example
 * const listed = await listUpstream(internalPool(caller, env, env.GATEWAY_KV), upstream, "tools/list", "tools");
 */
export function internalPool(
  caller: InternalCaller,
  env: Readonly<Record<string, unknown>>,
  kv: KVNamespace | undefined,
  signal?: AbortSignal,
): PoolRequest {
  return {
    env,
    kv,
    session: caller.upstreamClient,
    clientVersion: caller.identity.protocolVersion,
    ...(signal ? { signal } : {}),
  };
}

/**
 * The call context under which `caller`'s request to `upstream` goes through the relay or
 * the pipeline, on the route `/mcp/<upstream>`, with each message its own call record.
 *
 * @example
 * const ctx = internalContext(caller, servicesFor(env), { upstream, grant, signal, waitUntil });
 */
export function internalContext(
  caller: InternalCaller,
  services: Services,
  options: {
    upstream: UpstreamConfig;
    /** The internal caller's persona grant (it has no roles): the personas feature's lookup, from the caller. */
    grant: () => Promise<Grant | undefined>;
    signal: AbortSignal;
    waitUntil: (promise: Promise<unknown>) => void;
  },
): CallContext {
  const { identity, upstreamClient } = caller;
  return {
    identity,
    grant: options.grant,
    route: routeFor(options.upstream.name, [options.upstream], INTERNAL_ORIGIN),
    services,
    upstreamClient,
    record: newCallRecord(),
    signal: options.signal,
    emit: () => {},
    waitUntil: options.waitUntil,
  };
}
