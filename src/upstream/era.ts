/**
 * Which protocol eras an upstream speaks, found once and remembered: `server/discover`
 * first (a 2026-07-28 request), falling back to the 2025 `initialize` as the revision's
 * backward-compatibility section says (basic/transports/streamable-http, "Backward
 * Compatibility"): a result, or a recognized modern error naming a version the gateway
 * speaks, means it has a 2026-07-28 side; anything else (a 2025 server's 400 without a
 * modern error, 404, 405, -32601) means 2025 only; an answer cut short is no verdict.
 *
 * An upstream with a 2026-07-28 side may serve 2025 clients on the same URL too (SDK v2's
 * `createMcpHandler` does by default, statelessly; others keep a sessionful 2025 endpoint
 * beside it): it is also sent an `initialize`, and what that learns is kept beside what
 * `server/discover` declared (`legacy`: whether it answered with an `Mcp-Session-Id`, and
 * its capabilities; the probe's session is ended at once). Which side serves a call is
 * decided from both by era-choice.ts. A configured `protocol` pins one side: 2025-11-25
 * skips the probes; an upstream configured as 2026-07-28 must answer `server/discover` as
 * one and is never sent the `initialize` probe.
 *
 * The verdict is a property of the upstream, so it is kept per isolate and in KV
 * (storage/upstream-eras.ts, UPSTREAM_ERA_TTL_S; concurrent lookups in one isolate share
 * one probe and one write) and forgotten when
 * the upstream refuses the era it was remembered by (`forgetEra`), so the next use probes again.
 */
import type { CallerCredentials, PoolRequest } from "./upstream-session";
import { fail, ok, type Result } from "../core/errors";
import { GATEWAY_INFO } from "../core/gateway-info";
import { isObject, type JsonObject } from "../core/jsonrpc";
import { deleteEraRecord, readEraRecord, writeEraRecord } from "../storage/upstream-eras";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange } from "./client";
import { UpstreamBreak } from "./deadlines";
import type { UpstreamFailure } from "./failures";
import { mirroredHeaders, MODERN_UPSTREAM_VERSION, withEnvelope } from "./modern-wire";
import { LATEST_SESSION_REVISION } from "../core/revisions";

/** How long a discovered era is trusted before the upstream is probed again. */
export const UPSTREAM_ERA_TTL_S = 60 * 60;
const ERA_CACHE_ENTRIES = 1_000;
/** The error codes only a 2026-07-28 server answers with (basic/index, "Error Codes"). */
const MODERN_ERROR_CODES: ReadonlySet<number> = new Set([-32020, -32021, -32022]);
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
/** Statuses about the request's standing, not the server's era. */
const NOT_A_VERDICT: ReadonlySet<number> = new Set([401, 403, 408, 429]);

/** What an `initialize` learned of the 2025 side of an upstream that also speaks 2026-07-28. */
export type LegacySide = {
  /** It answered with an `Mcp-Session-Id`: it can send a 2025 client requests (sampling, elicitation, roots) and stream notifications. */
  readonly sessionful: boolean;
  /** The capabilities its `initialize` declared. */
  readonly capabilities: JsonObject;
};

/**
 * What the gateway knows of an upstream's eras: 2025 only, or a 2026-07-28 side (what its
 * `server/discover` declared) and, when it serves 2025 clients too, its 2025 side.
 */
export type UpstreamEra =
  /** `sessionful`: what its first `initialize` showed (an `Mcp-Session-Id` or none); absent until one was made. */
  | { readonly era: "legacy"; readonly sessionful?: boolean }
  | { readonly era: "modern"; readonly discover: JsonObject; readonly legacy?: LegacySide };

/** What a lookup needs: how to reach the upstream (`env` for what configuration names, the caller's credentials) and where verdicts are kept. */
export type EraLookup = Pick<PoolRequest, "env" | "kv" | "signal" | "identity">;

type Remembered = { readonly verdict: UpstreamEra; readonly until: number };
const remembered = new Map<string, Remembered>();

/** Names an upstream in this isolate's memory: its name and where it is reached, as its KV record is named. */
function eraKey(upstream: UpstreamConfig): string {
  return `${upstream.name}\u0000${upstream.service ?? ""} ${upstream.url}`;
}

function isLegacySide(value: unknown): value is LegacySide {
  return isObject(value) && typeof value["sessionful"] === "boolean" && isObject(value["capabilities"]);
}

function isEra(value: unknown): value is UpstreamEra {
  return (
    isObject(value) &&
    ((value["era"] === "legacy" && (value["sessionful"] === undefined || typeof value["sessionful"] === "boolean")) ||
      (value["era"] === "modern" &&
        isObject(value["discover"]) &&
        (value["legacy"] === undefined || isLegacySide(value["legacy"]))))
  );
}

/**
 * Reads the answer to a `server/discover` probe: modern when it lists the revision the
 * gateway speaks (or, answered with an unsupported-version error, offers it).
 */
function verdictOf(message: JsonObject): UpstreamEra {
  const result = message["result"];
  if (isObject(result)) {
    const versions = result["supportedVersions"];
    return Array.isArray(versions) && versions.includes(MODERN_UPSTREAM_VERSION)
      ? { era: "modern", discover: result }
      : { era: "legacy" };
  }
  const error = message["error"];
  if (isObject(error) && typeof error["code"] === "number" && MODERN_ERROR_CODES.has(error["code"])) {
    // A modern server that does not speak our modern revision: it is not one we can use
    // the modern way, and it will refuse initialize too; legacy lets its error surface.
    const data = error["data"];
    const supported = isObject(data) ? data["supported"] : undefined;
    if (
      error["code"] === UNSUPPORTED_PROTOCOL_VERSION &&
      Array.isArray(supported) &&
      supported.includes(MODERN_UPSTREAM_VERSION)
    )
      return { era: "modern", discover: {} };
  }
  return { era: "legacy" };
}

/**
 * A failed `server/discover` as the call's failure, never a verdict: it names the upstream
 * (as every failure does), says the gateway could not learn its protocol, and what to check.
 */
function undiscovered(failure: UpstreamFailure): UpstreamFailure {
  const why =
    'its server/discover failed, so the gateway cannot tell which protocol it speaks (check its URL and that it is up, or set its "protocol" in UPSTREAMS)';
  switch (failure.reason) {
    case "unreachable":
    case "http-status":
    case "bad-response":
      return { ...failure, detail: `${why}: ${failure.detail}` };
    default:
      return failure;
  }
}

/**
 * Probes `upstream` with `server/discover`. Failures to reach it are failures, not verdicts.
 *
 * @example
 * const verdict = await discoverEra(upstream, env); // ok({ era: "legacy" }) for a 2025 server
 */
export async function discoverEra(
  upstream: UpstreamConfig,
  env: Readonly<Record<string, unknown>>,
  signal?: AbortSignal,
  identity?: CallerCredentials,
): Promise<Result<UpstreamEra, UpstreamFailure>> {
  const body = withEnvelope('{"jsonrpc":"2.0","id":"gw-discover","method":"server/discover"}', {
    clientCapabilities: {},
    clientInfo: GATEWAY_INFO,
  });
  const reply = await exchange({
    upstream,
    env,
    method: "POST",
    body,
    extraHeaders: mirroredHeaders("server/discover", undefined),
    rpcErrorsInBody: true,
    answerWithinTimeout: true,
    ...(signal ? { signal } : {}),
    ...(identity ? { identity } : {}),
  });
  if (!reply.ok) {
    // A 2025 server refuses the stranger request in its own way: that is its answer. A
    // refused credential or a rate limit says nothing about the era.
    if (reply.reason === "http-status" && reply.status >= 400 && reply.status < 500 && !NOT_A_VERDICT.has(reply.status))
      return ok({ era: "legacy" });
    if (reply.reason === "session-expired" || reply.reason === "bad-response") return ok({ era: "legacy" });
    return fail(undiscovered(reply));
  }
  try {
    for await (const wire of reply.value.messages) {
      if ("id" in wire.message && !("method" in wire.message))
        return ok(verdictOf(wire.message as unknown as JsonObject));
    }
  } catch (error) {
    // An answer that is not MCP is a 2025 server's own; one cut short (a deadline, the caller gone) says nothing.
    if (error instanceof UpstreamBreak && error.failure.reason === "bad-response") return ok({ era: "legacy" });
    return fail(
      error instanceof UpstreamBreak
        ? undiscovered(error.failure)
        : {
            reason: "unreachable",
            upstream: upstream.name,
            detail: `its server/discover answer broke off: ${error instanceof Error ? error.message : String(error)}`,
          },
    );
  }
  // A 202, or a stream that ended without an answer: not a modern server.
  return ok({ era: "legacy" });
}

/**
 * Sends `upstream` (found to speak 2026-07-28) a 2025 `initialize`: a result means it
 * serves 2025 clients too, sessionful when it named a session (which is ended at once: the
 * probe opens nothing a client uses). Anything else (a refusal, an error, no answer) means
 * it has no 2025 side the gateway can use.
 */
async function probeLegacySide(
  upstream: UpstreamConfig,
  env: Readonly<Record<string, unknown>>,
  signal?: AbortSignal,
  identity?: CallerCredentials,
): Promise<LegacySide | undefined> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: "gw-initialize",
    method: "initialize",
    params: { protocolVersion: LATEST_SESSION_REVISION, capabilities: {}, clientInfo: GATEWAY_INFO },
  });
  const reach = { upstream, env, ...(signal ? { signal } : {}), ...(identity ? { identity } : {}) };
  const reply = await exchange({ ...reach, method: "POST", body, rpcErrorsInBody: true, answerWithinTimeout: true });
  if (!reply.ok) return undefined;
  let result: unknown;
  try {
    for await (const wire of reply.value.messages) {
      if ("id" in wire.message && !("method" in wire.message)) {
        result = "result" in wire.message ? wire.message.result : undefined;
        break;
      }
    }
  } catch {
    return undefined;
  }
  const { sessionId } = reply.value;
  if (sessionId) {
    const ended = await exchange({ ...reach, method: "DELETE", sessionId, protocolVersion: LATEST_SESSION_REVISION });
    if (ended.ok) for await (const _ of ended.value.messages) break;
  }
  if (!isObject(result) || typeof result["protocolVersion"] !== "string") return undefined;
  return {
    sessionful: sessionId !== null && sessionId !== "",
    capabilities: isObject(result["capabilities"]) ? result["capabilities"] : {},
  };
}

/**
 * The era of `upstream`: configured, remembered (this isolate, then KV), or discovered now.
 *
 * @example
 * const era = await upstreamEra(upstream, { env, kv });
 * if (era.ok && era.value.era === "modern") console.log(era.value.discover["capabilities"]);
 */
export async function upstreamEra(
  upstream: UpstreamConfig,
  lookup: EraLookup,
): Promise<Result<UpstreamEra, UpstreamFailure>> {
  const key = eraKey(upstream);
  const local = remembered.get(key);
  if (upstream.protocol === LATEST_SESSION_REVISION)
    return ok(local?.verdict.era === "legacy" ? local.verdict : { era: "legacy" });
  if (local && local.until > Date.now()) return ok(local.verdict);
  // One lookup per upstream at a time in this isolate: a cold isolate's concurrent requests share it.
  const shared = lookups.get(key);
  if (shared) {
    const found = await shared;
    // A failure is the first caller's (its credential, its abort): this caller asks on its own.
    if (found.ok) return found;
  }
  const pending = lookUp(upstream, key, lookup);
  if (!shared) {
    lookups.set(key, pending);
    pending.finally(() => lookups.delete(key)).catch(() => {});
  }
  return pending;
}

/** Lookups under way, per era key. */
const lookups = new Map<string, Promise<Result<UpstreamEra, UpstreamFailure>>>();

async function lookUp(
  upstream: UpstreamConfig,
  key: string,
  lookup: EraLookup,
): Promise<Result<UpstreamEra, UpstreamFailure>> {
  const now = Date.now();
  const { env, kv, signal, identity } = lookup;
  const stored = kv ? await readEraRecord(kv, upstream).catch(logKvFailure) : undefined;
  if (stored) {
    const verdict: unknown = JSON.parse(stored);
    if (isEra(verdict)) {
      remember(key, verdict, now);
      return ok(verdict);
    }
  }
  const found = await discoverEra(upstream, env, signal, identity);
  if (!found.ok) return found;
  // A configured modern upstream that does not answer server/discover as one cannot be used (it declared nothing): a failure, not a verdict.
  if (upstream.protocol === MODERN_UPSTREAM_VERSION && found.value.era === "legacy") {
    return fail({
      reason: "bad-response",
      upstream: upstream.name,
      detail: `configured as ${MODERN_UPSTREAM_VERSION}, but its server/discover did not answer as a ${MODERN_UPSTREAM_VERSION} server`,
    });
  }
  // A 2026-07-28 upstream may serve 2025 clients on the same URL: what its initialize says is kept beside (unless pinned to 2026-07-28).
  const legacy =
    found.value.era === "modern" && upstream.protocol === undefined
      ? await probeLegacySide(upstream, env, signal, identity)
      : undefined;
  const verdict: UpstreamEra = found.value.era === "modern" && legacy ? { ...found.value, legacy } : found.value;
  remember(key, verdict, now);
  // KV takes about one write a second per key: a refused write costs the next isolate a probe, not this request.
  if (kv) await writeEraRecord(kv, upstream, JSON.stringify(verdict), UPSTREAM_ERA_TTL_S).catch(logKvFailure);
  return ok(verdict);
}

function logKvFailure(error: unknown): undefined {
  console.warn(`mcp-edge-gateway: upstream era in KV: ${error instanceof Error ? error.message : String(error)}`);
  return undefined;
}

function remember(key: string, verdict: UpstreamEra, now: number): void {
  rememberUntil(key, verdict, now + UPSTREAM_ERA_TTL_S * 1000);
}

function rememberUntil(key: string, verdict: UpstreamEra, until: number): void {
  if (remembered.size >= ERA_CACHE_ENTRIES && !remembered.has(key)) remembered.clear();
  remembered.set(key, { verdict, until });
}

/**
 * Notes what a handshake with the 2025-only `upstream` showed: whether it keeps sessions.
 * Kept with its era in this isolate only (a KV write would be a second one within the second
 * of the era's own, past KV's pace; an isolate that does not know asks the client's session,
 * upstream-target.ts), so a call can tell a stateless 2025 side before it is sent
 * (eras/call-bridge.ts holds only sessionful ones).
 *
 * @example
 * noteSessions(upstream, made.session.sessionId !== null);
 */
export function noteSessions(upstream: UpstreamConfig, sessionful: boolean): void {
  const key = eraKey(upstream);
  const local = remembered.get(key);
  if (upstream.protocol !== LATEST_SESSION_REVISION && local?.verdict.era !== "legacy") return;
  if (local?.verdict.era === "legacy" && local.verdict.sessionful === sessionful) return;
  rememberUntil(key, { era: "legacy", sessionful }, local?.until ?? Date.now() + UPSTREAM_ERA_TTL_S * 1000);
}

/**
 * Forgets the era of `upstream` (it refused the one remembered): the next use probes again.
 *
 * @example
 * await forgetEra(upstream, kv);
 */
export async function forgetEra(upstream: UpstreamConfig, kv: KVNamespace | undefined): Promise<void> {
  if (upstream.protocol !== undefined) return;
  remembered.delete(eraKey(upstream));
  if (kv) await deleteEraRecord(kv, upstream);
}
