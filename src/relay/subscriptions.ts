/**
 * `subscriptions/listen` (2026-07-28, basic/patterns/subscriptions): a long-lived request
 * whose answer is the stream of the change notifications the client opted in to, fed
 * by the route's upstreams (upstream-listen.ts, one listener per upstream era).
 *
 * The acknowledgement goes first, saying what the gateway agreed to honour; then each
 * admitted notification, stamped with the subscription id (the request's id); nothing
 * else (requests, progress, log messages, unasked notifications) reaches the listener.
 * Messages are read from an upstream only as fast as the client takes them. The listen
 * ends when the client closes its stream (every upstream stream cancelled, every
 * subscription undone), or with an error when every upstream ended its stream (the
 * client should listen again); with nothing to listen to, it closes gracefully at once.
 */
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import type { CallContext } from "../context/call-context";
import type { UpstreamConfig } from "../config/upstreams";
import { UNAVAILABLE_META_KEY } from "./merge-lists";
import {
  acknowledgement,
  admits,
  isEmptyFilter,
  readFilter,
  SUBSCRIPTION_ID_META_KEY,
  unionOf,
  withSubscriptionId,
} from "./subscription-notifications";
import { upstreamListener, type UpstreamListen } from "./upstream-listen";

/**
 * Upstream streams one listen holds open. A Worker may have 6 connections open per
 * request; one stays free for the handshakes, subscribes and unsubscribes of the listen.
 */
export const MAX_LISTEN_UPSTREAMS = 5;

/** The graceful end of a listen: the response to the `subscriptions/listen` request. */
function closure(id: JsonRpcId): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result: { _meta: { [SUBSCRIPTION_ID_META_KEY]: id } } });
}

function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}

/** Relays one upstream's admitted notifications to the listener, at its pace, until either side ends. */
async function relayUpstream(
  ctx: CallContext,
  id: JsonRpcId,
  listen: UpstreamListen,
  signal: AbortSignal,
): Promise<void> {
  try {
    for await (const item of listen.messages) {
      if (!item.ok || signal.aborted) return;
      if (admits(listen.agreed, item.value)) await ctx.emit(withSubscriptionId(item.value.text, id));
    }
  } catch {
    // The stream broke off, or the client went away while a message was in flight.
  }
}

/**
 * Serves a `subscriptions/listen` request on the route of `ctx` (already narrowed by
 * authorization to the upstreams the caller reaches).
 *
 * @example
 * case "subscriptions/listen": return subscriptionsListen(ctx, message.wire);
 */
export async function subscriptionsListen(ctx: CallContext, request: WireMessage<JsonRpcRequest>): Promise<string> {
  const { id } = request.message;
  const wanted = readFilter(request.message);
  const unavailable: { upstream: string; error: string }[] = [];
  // What each upstream could honour, from what it declared: no connection is held for one that can honour nothing.
  const candidates = isEmptyFilter(wanted)
    ? []
    : await Promise.all(
        ctx.route.upstreams.map(async (upstream) => {
          const listener = await upstreamListener(ctx, upstream);
          const honours = await listener.honours(ctx, upstream, wanted).catch(() => ({}));
          return { upstream, listener, honours };
        }),
      );
  const able = candidates.filter((candidate) => !isEmptyFilter(candidate.honours));
  for (const { upstream } of able.slice(MAX_LISTEN_UPSTREAMS)) {
    unavailable.push({
      upstream: upstream.name,
      error: `not listened to: a listen holds at most ${MAX_LISTEN_UPSTREAMS} upstream streams`,
    });
  }

  const abort = new AbortController();
  const stop = () => abort.abort();
  if (ctx.signal.aborted) stop();
  else ctx.signal.addEventListener("abort", stop, { once: true });
  const open: { upstream: UpstreamConfig; listen: UpstreamListen }[] = [];
  try {
    const opened = await Promise.all(
      able.slice(0, MAX_LISTEN_UPSTREAMS).map(async ({ upstream, listener, honours }) => ({
        upstream,
        result: await listener.open(ctx, upstream, honours, abort.signal),
      })),
    );
    for (const { upstream, result } of opened) {
      if (result.ok) open.push({ upstream, listen: result.value });
      else unavailable.push({ upstream: upstream.name, error: result.detail });
    }
    if (abort.signal.aborted) return closure(id);
    const agreed = unionOf(open.map((entry) => entry.listen.agreed));
    await ctx.emit(acknowledgement(id, agreed, unavailable.length > 0 ? { [UNAVAILABLE_META_KEY]: unavailable } : {}));
    if (open.length === 0) return closure(id);
    const ended = Promise.all(open.map(({ listen }) => relayUpstream(ctx, id, listen, abort.signal)));
    await Promise.race([ended, whenAborted(abort.signal)]);
  } finally {
    ctx.signal.removeEventListener("abort", stop);
    abort.abort();
    for (const { listen } of open) ctx.waitUntil(listen.close());
  }
  if (ctx.signal.aborted) return closure(id); // nobody reads it: the client closed the stream
  throw new GatewayError(
    200,
    INTERNAL_ERROR,
    "Every upstream ended its stream of notifications; send subscriptions/listen again",
    { upstreams: open.map((entry) => entry.upstream.name) },
    id,
  );
}
