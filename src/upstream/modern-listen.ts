/**
 * A 2026-07-28 upstream's own stream of change notifications: `subscriptions/listen`
 * (basic/patterns/subscriptions), a POST whose SSE answer stays open. It stands where a
 * 2025 upstream's GET stream stood: the gateway opens it for a 2025 client's GET stream,
 * and it is the seam where a 2026-07-28 client's own `subscriptions/listen` can be fed
 * from a 2026-07-28 upstream. The upstream's acknowledgement is awaited (within the
 * upstream's `timeoutMs`) before the stream is handed over, so nothing published after it
 * opens is missed; after it the stream may be quiet for as long as nothing changes (no idle deadline).
 */
import type { CallerCredentials } from "./upstream-session";
import { fail, ok, type Result } from "../core/errors";
import { GATEWAY_INFO } from "../core/gateway-info";
import { isObject, type JsonObject, type WireMessage } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange, type UpstreamReply } from "./client";
import type { UpstreamFailure } from "./failures";
import { mirroredHeaders, withEnvelope } from "./modern-wire";
import type { UpstreamClient } from "./upstream-session";

/** The acknowledgement a listen stream begins with. */
export const LISTEN_ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

/** Which notifications a listen stream asks for (basic/patterns/subscriptions, "Notification Filter"). */
export type ListenFilter = {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
};

/** An open listen stream: what the upstream agreed to send, and the notifications after the acknowledgement. */
export type ListenStream = { readonly acknowledged: JsonObject; readonly reply: UpstreamReply };

/**
 * Opens `subscriptions/listen` at `upstream` on behalf of `client`, and waits for its
 * acknowledgement. `messages` of the reply then holds only what follows it.
 *
 * @example
 * const stream = await listenModern(upstream, { env, session: client }, { toolsListChanged: true });
 * if (stream.ok) for await (const wire of stream.value.reply.messages) console.log(wire.text);
 */
export async function listenModern(
  upstream: UpstreamConfig,
  request: {
    readonly env: Readonly<Record<string, unknown>>;
    readonly session: UpstreamClient;
    readonly signal?: AbortSignal;
    readonly identity?: CallerCredentials;
  },
  filter: ListenFilter,
): Promise<Result<ListenStream, UpstreamFailure>> {
  const info = request.session.clientInfo;
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id: "gw-listen",
    method: "subscriptions/listen",
    params: { notifications: filter },
  });
  const body = withEnvelope(text, {
    clientCapabilities: request.session.clientCapabilities,
    clientInfo: isObject(info) && typeof info["name"] === "string" ? info : GATEWAY_INFO,
  });
  // Until the acknowledgement, the upstream's timeoutMs bounds the wait.
  const unacknowledged = new AbortController();
  const timer = setTimeout(() => unacknowledged.abort(), upstream.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, unacknowledged.signal]) : unacknowledged.signal;
  let first: IteratorResult<WireMessage>;
  let reply: Result<UpstreamReply, UpstreamFailure>;
  let iterator: AsyncIterator<WireMessage>;
  try {
    reply = await exchange({
      upstream,
      env: request.env,
      ...(request.identity ? { identity: request.identity } : {}),
      method: "POST",
      body,
      extraHeaders: mirroredHeaders("subscriptions/listen", undefined),
      rpcErrorsInBody: true,
      quiet: true,
      signal,
    });
    if (!reply.ok) return reply;
    iterator = reply.value.messages[Symbol.asyncIterator]();
    first = await iterator.next();
  } catch (error) {
    const why = unacknowledged.signal.aborted
      ? `no acknowledgement within ${upstream.timeoutMs} ms`
      : error instanceof Error
        ? error.message
        : String(error);
    return fail({ reason: "bad-response", upstream: upstream.name, detail: `its listen stream broke off: ${why}` });
  } finally {
    clearTimeout(timer);
  }
  const message = first.done ? undefined : first.value.message;
  if (!message || !("method" in message) || message.method !== LISTEN_ACKNOWLEDGED) {
    await iterator.return?.();
    const why = message && "error" in message ? message.error.message : "it did not begin with an acknowledgement";
    return fail({ reason: "bad-response", upstream: upstream.name, detail: `subscriptions/listen refused: ${why}` });
  }
  const rest = (async function* () {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  })();
  return ok({ acknowledged: message.params ?? {}, reply: { ...reply.value, messages: rest } });
}
