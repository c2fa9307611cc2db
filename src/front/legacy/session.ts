/**
 * The session lifecycle: begin one at initialize (negotiate, bound what it carries; the
 * relay then initializes each upstream and the front seals), find the session of a later
 * request, end it on DELETE.
 *
 * Ended sessions are recorded in KV (and in this isolate at once), so a DELETE on one
 * isolate ends the session on every other within KV's propagation delay (plus up to
 * ENDED_CHECK_CACHE_MS, for which an isolate trusts its last look).
 */
import { fail, GatewayError, ok, type Result } from "../../core/errors";
import { sessionSecret } from "../../config/secrets";
import { INVALID_PARAMS, isObject, type JsonRpcRequest } from "../../core/jsonrpc";
import { negotiateVersion } from "./protocol";
import {
  checkClientState,
  MAX_CLIENT_STATE_BYTES,
  newSessionId,
  openSession,
  SESSION_TTL_S,
  type SessionState,
} from "./session-token";
import { isEnded, markEnded } from "../../storage/ended-marks";
import type { EndpointRequest } from "../http/endpoint-request";

const ENDED_LOCAL_ENTRIES = 10_000;

/** What a session is found, begun and ended with: the route, the principal and the bindings of the request. */
export type SessionEnv = Pick<EndpointRequest, "env" | "kv" | "route" | "principal" | "upstreams" | "signal">;

function clientIdentity(info: unknown): Record<string, unknown> {
  if (!isObject(info)) return {};
  const out: Record<string, unknown> = {};
  for (const key of ["name", "version", "title"]) if (typeof info[key] === "string") out[key] = info[key];
  return out;
}

const endedHere = new Set<string>();
/**
 * Sessions this isolate found not ended in KV, and when: KV is asked again only after
 * `ENDED_CHECK_CACHE_MS`. KV itself takes up to a minute to carry a DELETE everywhere,
 * so this adds little delay and saves a KV read on nearly every request.
 */
const liveChecked = new Map<string, number>();
const ENDED_CHECK_CACHE_MS = 10_000;

/**
 * Starts a session for `initialize`: the negotiated version, the client's capabilities
 * and identity (bounded: they travel in every request's `Mcp-Session-Id`), no upstream
 * sessions yet. The relay opens those, and `sealSession` seals the result.
 */
export function beginSession(
  request: JsonRpcRequest,
  where: SessionEnv,
  filterShapes: Readonly<Record<string, string>> = {},
): SessionState {
  const params = request.params ?? {};
  if (params["capabilities"] !== undefined && !isObject(params["capabilities"])) {
    throw new GatewayError(
      200,
      INVALID_PARAMS,
      "Invalid params: initialize needs params.capabilities to be an object",
      undefined,
      request.id,
    );
  }
  const state: SessionState = {
    sid: newSessionId(),
    protocolVersion: negotiateVersion(params["protocolVersion"]),
    clientCapabilities: isObject(params["capabilities"]) ? params["capabilities"] : {},
    // Only what an upstream needs: icons and the like would bloat the Mcp-Session-Id header.
    clientInfo: clientIdentity(params["clientInfo"]),
    principal: where.principal,
    route: where.route,
    upstreams: {},
    exp: Math.floor(Date.now() / 1000) + SESSION_TTL_S,
    ...(Object.keys(filterShapes).length > 0 ? { filterShapes } : {}),
  };
  const bounded = checkClientState(state);
  if (!bounded.ok) {
    const message = `Invalid params: params.capabilities and params.clientInfo take ${bounded.bytes} bytes as JSON; the gateway carries at most ${MAX_CLIENT_STATE_BYTES} in the session id`;
    throw new GatewayError(400, INVALID_PARAMS, message, undefined, request.id);
  }
  return state;
}

export type SessionLookupProblem = {
  reason: "missing" | "malformed" | "expired" | "ended" | "other-route" | "other-principal";
};

/** Finds the session a request belongs to. */
export async function findSession(
  token: string | null,
  where: SessionEnv,
): Promise<Result<SessionState, SessionLookupProblem>> {
  if (!token) return fail({ reason: "missing" });
  const opened = await openSession(token, sessionSecret(where.env));
  if (!opened.ok) return opened;
  const state = opened.value;
  // A session is scoped to its route and principal: to anyone else it does not exist.
  if (state.route !== where.route) return fail({ reason: "other-route" });
  if (state.principal !== where.principal) return fail({ reason: "other-principal" });
  if (endedHere.has(state.sid)) return fail({ reason: "ended" });
  const checked = liveChecked.get(state.sid);
  if (where.kv && (checked === undefined || Date.now() - checked > ENDED_CHECK_CACHE_MS)) {
    if (await isEnded(where.kv, "session", state.sid)) return fail({ reason: "ended" });
    if (liveChecked.size >= ENDED_LOCAL_ENTRIES) liveChecked.clear();
    liveChecked.set(state.sid, Date.now());
  }
  return ok(state);
}

/** The wire error for a session that cannot be used. */
export function sessionError(problem: SessionLookupProblem): GatewayError {
  switch (problem.reason) {
    case "missing":
      return new GatewayError(
        400,
        -32000,
        "Bad Request: Mcp-Session-Id header is required; send initialize first to start a session",
      );
    case "malformed":
    case "other-route":
    case "other-principal":
      return new GatewayError(404, -32001, "Session not found: start a new session with initialize");
    case "expired":
      return new GatewayError(404, -32001, "Session expired: start a new session with initialize");
    case "ended":
      return new GatewayError(404, -32001, "Session ended: start a new session with initialize");
    default: {
      const never: never = problem.reason;
      return never;
    }
  }
}

/** Ends a session: recorded as ended, here at once and in KV (the relay closes the upstreams' sessions: relay/end-sessions.ts). */
export async function endSession(state: SessionState, where: SessionEnv): Promise<void> {
  if (endedHere.size >= ENDED_LOCAL_ENTRIES) endedHere.clear();
  endedHere.add(state.sid);
  liveChecked.delete(state.sid);
  if (where.kv) await markEnded(where.kv, "session", state.sid, state.exp - Math.floor(Date.now() / 1000));
}
