/**
 * One upstream's side of a `subscriptions/listen`: what it can honour of the listener's
 * filter, and its notification stream. This is the seam between the listen (relay/
 * subscriptions.ts, protocol-neutral) and each upstream's era:
 *
 * - a **2025 upstream** (this file): a session of the listen's own (so concurrent listens
 *   of one principal never share a GET stream or each other's subscriptions), its GET
 *   stream, and `resources/subscribe` for the URIs asked for; on close the stream is
 *   cancelled, each URI unsubscribed and the session DELETEd.
 * - a **2026-07-28 upstream** (`modernUpstreamListener`): its own `subscriptions/listen`
 *   with the agreed filter, and what that stream carries (the listen re-stamps the
 *   subscription id, so the upstream's own id never reaches the client).
 */
import { fail, ok, type Result } from "../core/errors";
import { isObject, type WireMessage } from "../core/jsonrpc";
import { poolRequest, type CallContext } from "../context/call-context";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange, type UpstreamFailure } from "../upstream/client";
import type { UpstreamSide } from "../upstream/era-choice";
import { legacyTransport } from "../upstream/legacy-transport";
import { modernTransport } from "../upstream/modern-transport";
import { modernSession } from "../upstream/modern-send";
import { transportFor } from "../upstream/select-transport";
import { describeFailure } from "../upstream/failures";
import { handshake, upstreamHandshake, upstreamMessages, type PoolRequest } from "../upstream/pool";
import type { UpstreamSession } from "../upstream/upstream-session";
import { knownUriOwner } from "./relay";
import { isEmptyFilter, type SubscriptionFilter } from "./subscription-notifications";
import { upstreamEra } from "../upstream/era";

/** An upstream being listened to. */
export type UpstreamListen = {
  /** What it agreed to send (the listen delivers nothing else from it). */
  readonly agreed: SubscriptionFilter;
  /** Everything it sends, read only as fast as the listener takes what it admits; ends with its stream. */
  readonly messages: AsyncIterable<Result<WireMessage, UpstreamFailure>>;
  /** Ends the listen at the upstream (stream cancelled, subscriptions undone). Never rejects. */
  readonly close: () => Promise<void>;
};

/** Why an upstream is not listened to (reported in the acknowledgement's gateway `_meta`). */
export type ListenRefusal = { readonly reason: "no-stream" | "failed"; readonly detail: string };

/** How the listen reaches one era of upstream. */
export type UpstreamListener = {
  /** What the upstream can honour of `wanted`, from what it declared; holds no connection. */
  readonly honours: (
    ctx: CallContext,
    upstream: UpstreamConfig,
    wanted: SubscriptionFilter,
  ) => Promise<SubscriptionFilter>;
  /** Opens the upstream's notification stream for (at most) `agreed`; `signal` ends it. */
  readonly open: (
    ctx: CallContext,
    upstream: UpstreamConfig,
    agreed: SubscriptionFilter,
    signal: AbortSignal,
  ) => Promise<Result<UpstreamListen, ListenRefusal>>;
};

/** What a declared capability set lets a 2025 upstream honour of `wanted`. */
function honouredBy(capabilities: unknown, wanted: SubscriptionFilter): SubscriptionFilter {
  const declared = (key: string, flag: string) => {
    const capability = isObject(capabilities) ? capabilities[key] : undefined;
    return isObject(capability) && capability[flag] === true;
  };
  const uris = declared("resources", "subscribe") ? (wanted.resourceSubscriptions ?? []) : [];
  return {
    ...(wanted.toolsListChanged && declared("tools", "listChanged") ? { toolsListChanged: true } : {}),
    ...(wanted.promptsListChanged && declared("prompts", "listChanged") ? { promptsListChanged: true } : {}),
    ...(wanted.resourcesListChanged && declared("resources", "listChanged") ? { resourcesListChanged: true } : {}),
    ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}),
  };
}

/** Sends one request in `session` and tells whether the upstream answered it with a result. */
async function succeeded(
  upstream: UpstreamConfig,
  request: PoolRequest,
  session: UpstreamSession,
  body: string,
): Promise<boolean> {
  const reply = await exchange({
    upstream,
    env: request.env,
    ...(request.identity ? { identity: request.identity } : {}),
    method: "POST",
    body,
    sessionId: session.sessionId,
    protocolVersion: session.protocolVersion,
    ...(request.signal ? { signal: request.signal } : {}),
    answerWithinTimeout: true,
  });
  if (!reply.ok) return false;
  let answered = false;
  for await (const item of upstreamMessages(reply.value, upstream.name)) {
    if (!item.ok) return false;
    const message = item.value.message;
    if ("id" in message && !("method" in message)) answered = "result" in message;
  }
  return answered;
}

function subscribeBody(method: "resources/subscribe" | "resources/unsubscribe", uri: string, index: number): string {
  return JSON.stringify({ jsonrpc: "2.0", id: `gw-listen-${index}`, method, params: { uri } });
}

/** Unsubscribes `uris` and ends the session; failures are logged (the session's expiry at the upstream is the backstop). */
async function cleanUp(
  upstream: UpstreamConfig,
  request: PoolRequest,
  session: UpstreamSession,
  uris: readonly string[],
): Promise<void> {
  try {
    await Promise.all(
      uris.map((uri, index) =>
        succeeded(upstream, request, session, subscribeBody("resources/unsubscribe", uri, index)),
      ),
    );
  } catch (error) {
    console.warn(
      `mcp-edge-gateway: ending the listen session of "${upstream.name}": ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  await legacyTransport.close(upstream, request, session);
}

/**
 * A 2025 upstream: its own session for this listen, the GET stream, `resources/subscribe`
 * per URI (on /mcp only at the upstream known to serve it, when one is known).
 */
export const legacyUpstreamListener: UpstreamListener = {
  async honours(ctx, upstream, wanted) {
    const declared = await upstreamHandshake(upstream, poolRequest(ctx));
    return declared.ok ? honouredBy(declared.value.initializeResult["capabilities"], wanted) : {};
  },

  async open(ctx, upstream, agreed, signal) {
    const pool: PoolRequest = { ...poolRequest(ctx), signal };
    // Cleanup runs after the listener has gone (its signal aborted): without a signal, within the upstream's own deadlines.
    const { signal: _signal, ...unbound } = pool;
    const made = await handshake(upstream, pool);
    if (!made.ok) return fail({ reason: "failed", detail: describeFailure(made) });
    const session = made.value.session;
    if (!session.sessionId)
      return fail({
        reason: "no-stream",
        detail: `upstream "${upstream.name}" keeps no sessions, so it has no stream of its own messages`,
      });
    // Its own switch, so closing this upstream's listen cancels its GET whatever the listener does.
    const closer = new AbortController();
    signal.addEventListener("abort", () => closer.abort(), { once: true });
    const stream = await legacyTransport.listen(upstream, { ...pool, signal: closer.signal }, session, agreed);
    if (!stream.ok) {
      ctx.waitUntil(cleanUp(upstream, unbound, session, []));
      return fail({ reason: "no-stream", detail: describeFailure(stream) });
    }
    // Subscribed once the stream is open, so no update between the two is lost.
    const wanted = (agreed.resourceSubscriptions ?? []).filter(
      (uri) => ctx.route.kind === "upstream" || (knownUriOwner(uri) ?? upstream.name) === upstream.name,
    );
    const subscribed: string[] = [];
    await Promise.all(
      wanted.map(async (uri, index) => {
        if (await succeeded(upstream, pool, session, subscribeBody("resources/subscribe", uri, index)))
          subscribed.push(uri);
      }),
    );
    const kept: SubscriptionFilter = {
      ...(agreed.toolsListChanged ? { toolsListChanged: true } : {}),
      ...(agreed.promptsListChanged ? { promptsListChanged: true } : {}),
      ...(agreed.resourcesListChanged ? { resourcesListChanged: true } : {}),
      ...(subscribed.length > 0 ? { resourceSubscriptions: wanted.filter((uri) => subscribed.includes(uri)) } : {}),
    };
    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        closer.abort();
        await cleanUp(upstream, unbound, session, subscribed);
      })().catch(() => {});
      return closing;
    };
    if (isEmptyFilter(kept)) {
      ctx.waitUntil(close());
      return fail({ reason: "failed", detail: `upstream "${upstream.name}" refused every subscription asked of it` });
    }
    return ok({ agreed: kept, messages: upstreamMessages(stream.value.reply, upstream.name), close });
  },
};

/**
 * What an upstream's acknowledgement says it agreed to, within what it was asked: an
 * upstream that acknowledges more (other flags, other URIs) never widens the listen.
 *
 * @example
 * agreedOf({ toolsListChanged: true, promptsListChanged: true }, { toolsListChanged: true }); // { toolsListChanged: true }
 */
export function agreedOf(notifications: unknown, asked: SubscriptionFilter): SubscriptionFilter {
  if (!isObject(notifications)) return {};
  const acknowledged = new Set(
    Array.isArray(notifications["resourceSubscriptions"]) ? notifications["resourceSubscriptions"] : [],
  );
  const uris = (asked.resourceSubscriptions ?? []).filter((uri) => acknowledged.has(uri));
  const flag = (key: "toolsListChanged" | "promptsListChanged" | "resourcesListChanged") =>
    asked[key] === true && notifications[key] === true ? { [key]: true } : {};
  return {
    ...flag("toolsListChanged"),
    ...flag("promptsListChanged"),
    ...flag("resourcesListChanged"),
    ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}),
  };
}

/**
 * A 2026-07-28 upstream: its own `subscriptions/listen` (upstream/modern-listen.ts) with
 * the agreed filter; what it acknowledges is what this listen agrees to for it. Its
 * subscription id is replaced by the listener's when the listen stamps each notification.
 */
export const modernUpstreamListener: UpstreamListener = {
  async honours(ctx, upstream, wanted) {
    const era = await upstreamEra(upstream, poolRequest(ctx));
    return era.ok && era.value.era === "modern" ? honouredBy(era.value.discover["capabilities"], wanted) : {};
  },

  async open(ctx, upstream, agreed, signal) {
    const closer = new AbortController();
    signal.addEventListener("abort", () => closer.abort(), { once: true });
    const uris = (agreed.resourceSubscriptions ?? []).filter(
      (uri) => ctx.route.kind === "upstream" || (knownUriOwner(uri) ?? upstream.name) === upstream.name,
    );
    const asked: SubscriptionFilter = { ...agreed, ...(uris.length > 0 ? { resourceSubscriptions: uris } : {}) };
    if (uris.length === 0) delete (asked as { resourceSubscriptions?: unknown }).resourceSubscriptions;
    const request: PoolRequest = { ...poolRequest(ctx), signal: closer.signal };
    const stream = await modernTransport.listen(upstream, request, modernSession({}), asked);
    if (!stream.ok) return fail({ reason: "failed", detail: describeFailure(stream) });
    const kept = agreedOf(stream.value.acknowledged?.["notifications"], asked);
    const close = async () => closer.abort();
    if (isEmptyFilter(kept)) {
      closer.abort();
      return fail({
        reason: "failed",
        detail: `upstream "${upstream.name}" agreed to none of the notifications asked of it`,
      });
    }
    return ok({ agreed: kept, messages: upstreamMessages(stream.value.reply, upstream.name), close });
  },
};

/**
 * The listener for the side of `upstream` that serves this client (select-transport.ts): a
 * 2026-07-28 side's own listen, else the 2025 session, GET stream and subscriptions above.
 *
 * A 2025 client's GET stream is fed from a 2026-07-28 upstream's listen in relay/listen.ts.
 *
 * @example
 * const opened = await (await upstreamListener(ctx, upstream)).open(ctx, upstream, { toolsListChanged: true }, signal);
 */
export async function upstreamListener(ctx: CallContext, upstream: UpstreamConfig): Promise<UpstreamListener> {
  const transport = await transportFor(upstream, poolRequest(ctx));
  return transport.ok ? LISTENERS[transport.value.side] : refusingListener(describeFailure(transport));
}

/** The listener of an upstream whose era could not be learned: it honours nothing and opens nothing, saying why. */
function refusingListener(detail: string): UpstreamListener {
  return { honours: async () => ({}), open: async () => fail({ reason: "failed", detail }) };
}

/** The listener of each side of an upstream. */
const LISTENERS: Readonly<Record<UpstreamSide, UpstreamListener>> = {
  legacy: legacyUpstreamListener,
  modern: modernUpstreamListener,
};
