/**
 * The gateway's own client of its upstreams: "send this request to this upstream as this
 * caller and give me the result or a typed failure". The console's lists and the admin
 * probes use it instead of writing JSON-RPC text and reading the answer's messages each
 * on their own. A request goes through the pool (the caller's upstream session, era and
 * transport, as the relay's would: `callUpstream`, `listUpstream`) or, for a probe that
 * opens its own session by a handshake, within that session, closed again
 * (`probeInOwnSession`). Only the answer to the request is read, within MAX_ANSWER_BYTES; a
 * list's pages are followed by list-pages.ts within its bounds.
 */
import { fail, ok, type Result } from "../core/errors";
import { isObject, type JsonObject, type WireMessage } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange, type UpstreamReply } from "./client";
import type { InternalCallFailure } from "./internal-failure";
import { type ListBounds, followPages, rpcError } from "./list-pages";
import { type Handshake, handshake, sendToUpstream, upstreamMessages } from "./pool";
import type { UpstreamFailure } from "./failures";
import type { PoolRequest, UpstreamSession } from "./upstream-session";

export type { InternalCallFailure };

/** Bytes of an upstream's reply (notifications before the answer included) an internal request reads at most. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** The id of every internal request: one request is in flight per exchange, so one id tells its answer. */
const INTERNAL_ID = "gw-internal";

/** A request the gateway makes for itself. */
export type InternalRequest = { readonly method: string; readonly params?: JsonObject };

/** A probe's own session with an upstream (opened by `handshake`, not kept by the pool). */
type SessionLeg = {
  readonly upstream: UpstreamConfig;
  readonly env: Readonly<Record<string, unknown>>;
  readonly session: UpstreamSession;
};

function requestText(request: InternalRequest): string {
  const params = request.params ? { params: request.params } : {};
  return JSON.stringify({ jsonrpc: "2.0", id: INTERNAL_ID, method: request.method, ...params });
}

/** The response to the internal request in `reply`, read within MAX_ANSWER_BYTES; other messages are skipped. */
async function answerIn(
  reply: UpstreamReply,
  upstream: string,
  method: string,
): Promise<Result<WireMessage, InternalCallFailure>> {
  for await (const item of upstreamMessages(reply, upstream)) {
    if (!item.ok) return item;
    if (reply.received.bytes > MAX_ANSWER_BYTES || item.value.text.length > MAX_ANSWER_BYTES)
      return fail({ reason: "too-large", upstream, method, limitBytes: MAX_ANSWER_BYTES });
    const { message } = item.value;
    if ("id" in message && !("method" in message) && message.id === INTERNAL_ID) return ok(item.value);
  }
  return fail({ reason: "no-answer", upstream, method, detail: "got no answer" });
}

/** The result of an answer, or its error as a typed failure. */
function resultOf(wire: WireMessage, upstream: string, method: string): Result<JsonObject, InternalCallFailure> {
  const { message } = wire;
  if ("error" in message) return fail(rpcError(upstream, method, message.error));
  if ("result" in message && isObject(message.result)) return ok(message.result);
  return fail({ reason: "no-answer", upstream, method, detail: "answered without a result" });
}

/** The answer to `request` sent through the pool as `caller`. */
async function answerTo(
  caller: PoolRequest,
  upstream: UpstreamConfig,
  request: InternalRequest,
): Promise<Result<WireMessage, InternalCallFailure>> {
  const reply = await sendToUpstream(upstream, requestText(request), caller, { answerWithinTimeout: true });
  return reply.ok ? answerIn(reply.value, upstream.name, request.method) : reply;
}

/**
 * Sends `request` to `upstream` in `caller`'s upstream session (the pool's: made by a
 * handshake when there is none) and returns its result.
 *
 * @example
 * const pinged = await callUpstream(caller, upstream, { method: "ping" });
 * if (!pinged.ok) console.log(describeInternalFailure(pinged));
 */
export async function callUpstream(
  caller: PoolRequest,
  upstream: UpstreamConfig,
  request: InternalRequest,
): Promise<Result<JsonObject, InternalCallFailure>> {
  const answer = await answerTo(caller, upstream, request);
  return answer.ok ? resultOf(answer.value, upstream.name, request.method) : answer;
}

/**
 * Every item of a list (`field` of each page's result: "tools", "prompts", "resources")
 * that `upstream` gives `caller`, its pages followed within `bounds`; `complete` is false
 * when a bound stopped the walk.
 *
 * @example
 * const tools = await listUpstream(caller, upstream, "tools/list", "tools", { maxPages: 10 });
 */
export async function listUpstream(
  caller: PoolRequest,
  upstream: UpstreamConfig,
  method: string,
  field: string,
  bounds: ListBounds = {},
): Promise<Result<{ items: JsonObject[]; complete: boolean }, InternalCallFailure>> {
  const items: JsonObject[] = [];
  const source = async (cursor: string | undefined): Promise<Result<string, InternalCallFailure>> => {
    const answer = await answerTo(caller, upstream, {
      method,
      ...(cursor !== undefined ? { params: { cursor } } : {}),
    });
    return answer.ok ? ok(answer.value.text) : answer;
  };
  const walk = await followPages(
    upstream.name,
    method,
    source,
    (text, result) => {
      const list = result.find((member) => member.key === field)?.value;
      const parsed: unknown = list ? JSON.parse(text.slice(list.start, list.end)) : [];
      if (Array.isArray(parsed)) for (const item of parsed) if (isObject(item)) items.push(item);
      return undefined;
    },
    bounds,
  );
  return walk.ok ? ok({ items, complete: walk.value.complete }) : walk;
}

/** Sends `request` within a session the caller opened itself (a probe's), not the pool's. */
async function callInSession(
  leg: SessionLeg,
  request: InternalRequest,
): Promise<Result<JsonObject, InternalCallFailure>> {
  const { upstream, env, session } = leg;
  const reply = await exchange({
    upstream,
    env,
    method: "POST",
    body: requestText(request),
    sessionId: session.sessionId,
    protocolVersion: session.protocolVersion,
    answerWithinTimeout: true,
  });
  if (!reply.ok) return reply;
  const answer = await answerIn(reply.value, upstream.name, request.method);
  return answer.ok ? resultOf(answer.value, upstream.name, request.method) : answer;
}

/** Ends a session the caller opened itself (DELETE), reading whatever the upstream answers; nothing when it has no id. */
async function closeSession(leg: SessionLeg): Promise<void> {
  const { upstream, env, session } = leg;
  if (!session.sessionId) return;
  const closed = await exchange({
    upstream,
    env,
    method: "DELETE",
    sessionId: session.sessionId,
    protocolVersion: session.protocolVersion,
    answerWithinTimeout: true,
  });
  if (closed.ok) await answerIn(closed.value, upstream.name, "DELETE");
}

/** What a probe found: its handshake, then (when that opened a session) the answer to its request, each timed. */
export type ProbeOutcome =
  | { readonly opened: Extract<Result<Handshake, UpstreamFailure>, { ok: false }>; readonly initializeMs: number }
  | {
      readonly opened: Handshake;
      readonly initializeMs: number;
      readonly answer: Result<JsonObject, InternalCallFailure>;
      readonly requestMs: number;
    };

/**
 * Opens a session of the probe's own at `upstream` by a handshake now (never one the pool
 * keeps: `caller`'s upstream client only says how to introduce itself), sends `request`
 * in it and closes it again.
 *
 * @example
 * const probed = await probeInOwnSession(pool, upstream, { method: "ping" });
 */
export async function probeInOwnSession(
  caller: PoolRequest,
  upstream: UpstreamConfig,
  request: InternalRequest,
): Promise<ProbeOutcome> {
  const started = Date.now();
  const opened = await handshake(upstream, caller);
  const initializeMs = Date.now() - started;
  if (!opened.ok) return { opened, initializeMs };
  const leg = { upstream, env: caller.env, session: opened.value.session };
  const sent = Date.now();
  const answer = await callInSession(leg, request);
  const requestMs = Date.now() - sent;
  await closeSession(leg);
  return { opened: opened.value, initializeMs, answer, requestMs };
}
