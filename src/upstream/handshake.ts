/**
 * The handshake with one upstream on a client's behalf, in the upstream's own era: the
 * 2025 `initialize` (the client's capabilities and info passed on, since real servers
 * register tools by them), or for a 2026-07-28 upstream, which has none, what its
 * `server/discover` declared (era.ts). An upstream remembered as 2025 that now refuses
 * `initialize` as a modern-only server does is probed again, once.
 */
import { fail, ok, type Result } from "../core/errors";
import { GATEWAY_INFO } from "../core/gateway-info";
import { isObject, type JsonObject } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange, type UpstreamFailure } from "./client";
import { UpstreamBreak } from "./deadlines";
import { forgetEra, noteSessions, upstreamEra } from "./era";
import { clientNeeds, sideFor } from "./era-choice";
import { initializeResultOf, modernSession } from "./modern-send";
import type { PoolRequest, UpstreamSession } from "./upstream-session";

export type { PoolRequest };

/** A 2026-07-28 server's answer to a version it does not speak (initialize, from a modern-only upstream). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** What a handshake learns; the `initialize` result is kept whole for transparent mode. */
export type Handshake = { readonly session: UpstreamSession; readonly initializeResult: JsonObject };

/** The sealed capability key of an upstream that supports `tasks/list`. */
export const TASKS_LIST_CAPABILITY = "tasks.list";

/**
 * The capability keys sealed into the session; `tasks.list` is added when the upstream
 * answers `tasks/list`, so a merged task list on /mcp asks only those upstreams.
 */
function capabilityKeys(capabilities: unknown): { keys: string[]; subscribe: boolean } {
  if (!isObject(capabilities)) return { keys: [], subscribe: false };
  const resources = capabilities["resources"];
  const tasks = capabilities["tasks"];
  const keys = Object.keys(capabilities);
  if (isObject(tasks) && isObject(tasks["list"])) keys.push(TASKS_LIST_CAPABILITY);
  return { keys, subscribe: isObject(resources) && resources["subscribe"] === true };
}

/**
 * Initializes a session with `upstream` on behalf of the client: the client's own
 * capabilities and info are passed on, since real servers register tools by them.
 */
export async function handshake(
  upstream: UpstreamConfig,
  request: PoolRequest,
): Promise<Result<Handshake, UpstreamFailure>> {
  for (let attempt = 0; ; attempt++) {
    const era = await upstreamEra(upstream, request);
    if (!era.ok) return era;
    // The 2026-07-28 side has no handshake: what it declared at discovery stands in for one.
    // Which side serves this client is the rule's (era-choice.ts): a dual-era upstream's
    // sessionful 2025 side serves a 2025 client natively.
    if (era.value.era === "modern" && sideFor(clientNeeds(request), era.value) === "modern")
      return ok({
        session: modernSession(era.value.discover),
        initializeResult: initializeResultOf(upstream.name, era.value.discover),
      });
    const result = await initializeUpstream(upstream, request);
    // What a 2025-only upstream's first session shows is kept with its era: whether it keeps sessions.
    if (result.ok && era.value.era === "legacy") noteSessions(upstream, result.value.session.sessionId !== null);
    // Remembered as 2025, but it now refuses initialize as a modern-only server does: probe again, once.
    if (result.ok || result.reason !== "http-status" || result.modernOnly !== true || attempt > 0) return result;
    await forgetEra(upstream, request.kv);
  }
}

async function initializeUpstream(
  upstream: UpstreamConfig,
  request: PoolRequest,
): Promise<Result<Handshake, UpstreamFailure>> {
  const { session } = request;
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: session.protocolVersion,
      capabilities: session.clientCapabilities,
      clientInfo:
        isObject(session.clientInfo) && typeof session.clientInfo["name"] === "string"
          ? session.clientInfo
          : GATEWAY_INFO,
    },
  });
  // Initialize is never long in coming: the whole answer, however framed, within timeoutMs.
  const reply = await exchange({
    upstream,
    env: request.env,
    ...(request.identity ? { identity: request.identity } : {}),
    method: "POST",
    body,
    signal: request.signal,
    answerWithinTimeout: true,
    rpcErrorsInBody: true,
  });
  if (!reply.ok) return reply;
  let result: JsonObject | undefined;
  try {
    for await (const wire of reply.value.messages) {
      const message = wire.message;
      if ("id" in message && !("method" in message)) {
        if ("error" in message) {
          const modernOnly = message.error.code === UNSUPPORTED_PROTOCOL_VERSION;
          return fail({
            reason: "http-status",
            upstream: upstream.name,
            status: reply.value.status,
            detail: `initialize failed: ${message.error.message}`,
            ...(modernOnly ? { modernOnly: true as const } : {}),
          });
        }
        result = message.result;
        break;
      }
    }
  } catch (error) {
    return fail(breakFailure(error, upstream.name));
  }
  if (!result || typeof result["protocolVersion"] !== "string") {
    return fail({
      reason: "bad-response",
      upstream: upstream.name,
      detail: "initialize answered without a protocolVersion",
    });
  }
  const sessionId = reply.value.sessionId;
  const protocolVersion = result["protocolVersion"];
  const initialized = await exchange({
    upstream,
    env: request.env,
    ...(request.identity ? { identity: request.identity } : {}),
    method: "POST",
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    sessionId,
    protocolVersion,
    signal: request.signal,
    answerWithinTimeout: true,
  });
  if (!initialized.ok) return initialized;
  try {
    for await (const _ of initialized.value.messages) {
      // Drain: a notification has no answer, but the body must be consumed.
    }
  } catch (error) {
    return fail(breakFailure(error, upstream.name));
  }
  const { keys, subscribe } = capabilityKeys(result["capabilities"]);
  return ok({
    session: { sessionId, protocolVersion, capabilities: keys, ...(subscribe ? { subscribe } : {}) },
    initializeResult: result,
  });
}

/** The failure behind an error thrown while an upstream's answer was read. */
export function breakFailure(error: unknown, upstream: string): UpstreamFailure {
  if (error instanceof UpstreamBreak) return error.failure;
  return {
    reason: "bad-response",
    upstream,
    detail: `its answer broke off: ${error instanceof Error ? error.message : String(error)}`,
  };
}
