/**
 * The session lifecycle: initialize (negotiate, initialize each upstream with the
 * client's capabilities, seal), find the session of a later request, end it on DELETE.
 *
 * Ended sessions are recorded in KV (and in this isolate at once), so a DELETE on one
 * isolate ends the session on every other within KV's propagation delay (plus up to
 * ENDED_CHECK_CACHE_MS, for which an isolate trusts its last look).
 */
import type { UpstreamConfig } from "../../config/upstreams";
import { failureError } from "../../upstream/failures";
import { UNAVAILABLE_META_KEY } from "../../relay/merge-lists";
import { handshake, laterSessions, type Handshake } from "../../upstream/pool";
import { exchange } from "../../upstream/client";
import { fail, GatewayError, ok, type Result } from "../../core/errors";
import { sessionSecret } from "../../config/secrets";
import { INVALID_PARAMS, isObject, type JsonObject, type JsonRpcRequest } from "../../core/jsonrpc";
import { negotiateVersion } from "./protocol";
import { member, rootSpan, splice } from "../../core/raw-json";
import { checkClientState, MAX_CLIENT_STATE_BYTES, newSessionId, openSession, sealSession, SESSION_TTL_S, type SessionState } from "./session-token";
import { heldSession, type UpstreamSession } from "../../upstream/upstream-session";

const ENDED_KEY_PREFIX = "session-ended/";
/** KV's minimum expiration TTL. */
const MIN_KV_TTL_S = 60;
const ENDED_LOCAL_ENTRIES = 10_000;
export const GATEWAY_INFO = { name: "mcp-edge-gateway", version: "0.1.0" } as const;

export type SessionEnv = {
  readonly env: Readonly<Record<string, unknown>>;
  readonly kv: KVNamespace | undefined;
  readonly route: string;
  readonly principal: string;
  readonly upstreams: readonly UpstreamConfig[];
  readonly signal?: AbortSignal;
};

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
 * The `tasks` capability on /mcp: task-augmented tool calls, `tasks/list` and
 * `tasks/cancel` where any upstream offers them (each task is served by its own
 * upstream; the merged list asks only those that list). Absent when no upstream has tasks.
 */
function mergedTasks(handshakes: readonly Handshake[]): JsonObject | undefined {
  const tasks = handshakes.map((h) => (isObject(h.initializeResult["capabilities"]) ? h.initializeResult["capabilities"]["tasks"] : undefined)).filter(isObject);
  if (tasks.length === 0) return undefined;
  const offered = (has: (t: JsonObject) => unknown) => tasks.some((t) => isObject(has(t)));
  const toolCalls = offered((t) => {
    const requests = t["requests"];
    const tools = isObject(requests) ? requests["tools"] : undefined;
    return isObject(tools) ? tools["call"] : undefined;
  });
  return {
    ...(offered((t) => t["list"]) ? { list: {} } : {}),
    ...(offered((t) => t["cancel"]) ? { cancel: {} } : {}),
    ...(toolCalls ? { requests: { tools: { call: {} } } } : {}),
  };
}

function mergedCapabilities(handshakes: readonly Handshake[]): JsonObject {
  const subscribe = handshakes.some((h) => h.session.subscribe === true);
  const tasks = mergedTasks(handshakes);
  return {
    logging: {},
    completions: {},
    prompts: { listChanged: true },
    resources: { subscribe, listChanged: true },
    tools: { listChanged: true },
    ...(tasks ? { tasks } : {}),
  };
}

function aggregatedInstructions(handshakes: readonly [string, Handshake][]): string | undefined {
  const parts = handshakes
    .filter(([, h]) => typeof h.initializeResult["instructions"] === "string" && h.initializeResult["instructions"] !== "")
    .map(([name, h]) => `## ${name} (tools and prompts named ${name}___*)\n${String(h.initializeResult["instructions"])}`);
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** The initialize answer on /mcp/<upstream>: the upstream's own result, with the version we agreed with the client. */
function transparentResult(id: JsonRpcRequest["id"], result: JsonObject, protocolVersion: string): string {
  const text = JSON.stringify({ jsonrpc: "2.0", id, result });
  const span = member(text, member(text, rootSpan(text), "result")!, "protocolVersion")!;
  return splice(text, [{ span, raw: JSON.stringify(protocolVersion) }]);
}

/**
 * Answers `initialize`: returns the response text and the new `Mcp-Session-Id`, which
 * seals `filterShapes` (what the output filters reshape now, see policy/listed-shapes.ts).
 * On /mcp an upstream that fails (down, or stalled past its deadline) is left out, named
 * in `_meta` as a merged list names it, and retried on later requests; on
 * /mcp/<upstream> its failure is the answer.
 */
export async function initializeSession(
  request: JsonRpcRequest,
  where: SessionEnv,
  filterShapes: Readonly<Record<string, string>> = {},
): Promise<{ text: string; token: string }> {
  const secret = sessionSecret(where.env);
  const params = request.params ?? {};
  if (params["capabilities"] !== undefined && !isObject(params["capabilities"])) {
    throw new GatewayError(200, INVALID_PARAMS, "Invalid params: initialize needs params.capabilities to be an object", undefined, request.id);
  }
  const skeleton: SessionState = {
    sid: newSessionId(),
    protocolVersion: negotiateVersion(params["protocolVersion"]),
    clientCapabilities: isObject(params["capabilities"]) ? params["capabilities"] : {},
    // Only what an upstream needs: icons and the like would bloat the Mcp-Session-Id header.
    clientInfo: clientIdentity(params["clientInfo"]),
    principal: where.principal,
    route: where.route,
    upstreams: {},
    exp: Math.floor(Date.now() / 1000) + SESSION_TTL_S,
  };
  const bounded = checkClientState(skeleton);
  if (!bounded.ok) {
    const message = `Invalid params: params.capabilities and params.clientInfo take ${bounded.bytes} bytes as JSON; the gateway carries at most ${MAX_CLIENT_STATE_BYTES} in the session id`;
    throw new GatewayError(400, INVALID_PARAMS, message, undefined, request.id);
  }
  const results = await Promise.all(
    where.upstreams.map(async (upstream) => [upstream, await handshake(upstream, { env: where.env, session: skeleton, signal: where.signal })] as const),
  );
  const upstreams: Record<string, UpstreamSession> = {};
  const succeeded: [string, Handshake][] = [];
  const unavailable: { upstream: string; error: string }[] = [];
  for (const [upstream, result] of results) {
    if (result.ok) {
      upstreams[upstream.name] = result.value.session;
      succeeded.push([upstream.name, result.value]);
    } else {
      if (where.route !== "") throw failureError(result, where.env).withId(request.id);
      const error = failureError(result, where.env).message;
      unavailable.push({ upstream: upstream.name, error });
      console.warn(`mcp-edge-gateway: initialize: ${error}; its tools are left out until it answers`);
    }
  }
  const state: SessionState = { ...skeleton, upstreams, ...(Object.keys(filterShapes).length > 0 ? { filterShapes } : {}) };
  const token = await sealSession(state, secret);
  if (where.route !== "") return { text: transparentResult(request.id, succeeded[0]![1].initializeResult, state.protocolVersion), token };
  const instructions = aggregatedInstructions(succeeded);
  const result: JsonObject = {
    protocolVersion: state.protocolVersion,
    capabilities: mergedCapabilities(succeeded.map(([, h]) => h)),
    serverInfo: GATEWAY_INFO,
    ...(instructions ? { instructions } : {}),
    // Named as a merged list names them: the client learns which upstreams are missing and why.
    ...(unavailable.length > 0 ? { _meta: { [UNAVAILABLE_META_KEY]: unavailable } } : {}),
  };
  return { text: JSON.stringify({ jsonrpc: "2.0", id: request.id, result }), token };
}

export type SessionLookupProblem = { reason: "missing" | "malformed" | "expired" | "ended" | "other-route" | "other-principal" };

/** Finds the session a request belongs to. */
export async function findSession(token: string | null, where: SessionEnv): Promise<Result<SessionState, SessionLookupProblem>> {
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
    if ((await where.kv.get(ENDED_KEY_PREFIX + state.sid)) !== null) return fail({ reason: "ended" });
    if (liveChecked.size >= ENDED_LOCAL_ENTRIES) liveChecked.clear();
    liveChecked.set(state.sid, Date.now());
  }
  return ok(state);
}

/** The wire error for a session that cannot be used. */
export function sessionError(problem: SessionLookupProblem): GatewayError {
  switch (problem.reason) {
    case "missing":
      return new GatewayError(400, -32000, "Bad Request: Mcp-Session-Id header is required; send initialize first to start a session");
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

/** Ends a session: recorded as ended, and each upstream's session is closed too. */
export async function endSession(state: SessionState, where: SessionEnv): Promise<void> {
  if (endedHere.size >= ENDED_LOCAL_ENTRIES) endedHere.clear();
  endedHere.add(state.sid);
  liveChecked.delete(state.sid);
  const ttl = Math.max(MIN_KV_TTL_S, state.exp - Math.floor(Date.now() / 1000));
  await Promise.all([
    where.kv?.put(ENDED_KEY_PREFIX + state.sid, "1", { expirationTtl: ttl }),
    ...where.upstreams.map(async (upstream) => {
      const sealed = heldSession(state, upstream.name);
      const later = await laterSessions(upstream, { env: where.env, session: state });
      const sessions = [...(sealed ? [sealed] : []), ...later.filter((s) => s.sessionId !== sealed?.sessionId)];
      for (const session of sessions) {
        if (session.sessionId) await exchange({ upstream, env: where.env, method: "DELETE", sessionId: session.sessionId, protocolVersion: session.protocolVersion });
      }
    }),
  ]);
}
