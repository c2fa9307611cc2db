/**
 * The upstream pool: sends a client session's traffic to an upstream inside that
 * upstream's own session.
 *
 * The upstream's session id normally comes from the sealed gateway session. When an
 * upstream failed to initialize with the client, or has since forgotten the session
 * (HTTP 404, or 400 as some servers answer), the pool performs the handshake again and records the new session in KV
 * (storage/upstream-handshakes.ts), so every isolate continues in it (and DELETE closes it); isolate memory only caches it.
 */
import { fail, ok, type Result } from "../core/errors";
import type { WireMessage } from "../core/jsonrpc";
import { exchange, type UpstreamFailure, type UpstreamReply } from "./client";
import type { UpstreamConfig } from "../config/upstreams";
import { heldSession, type UpstreamSession } from "./upstream-session";
import { forgetEra } from "./era";
import { breakFailure, handshake, type Handshake, type PoolRequest } from "./handshake";
import { noteListChange } from "./list-cache";
import { unreadWire } from "./byte-answer";
import { streamTransportFor, transportOf } from "./select-transport";
import { readHandshakeRecord, writeHandshakeRecord } from "../storage/upstream-handshakes";
import type { ListenFilter } from "./modern-listen";
import type { OpenedStream, SendOptions } from "./transport";

export { handshake, TASKS_LIST_CAPABILITY, type Handshake, type PoolRequest } from "./handshake";

const HANDSHAKE_CACHE_ENTRIES = 1_000;
/**
 * The statuses with which a server refuses the era of a request (a 2025 server's answer
 * to a modern one); the others (401, 403, 413, 429, ...) are about this request or caller.
 */
const ERA_REFUSALS: ReadonlySet<number> = new Set([400, 404, 405]);

/** Upstream sessions established after initialize, per client session and upstream (a cache of KV). */
const handshakes = new Map<string, Promise<Result<UpstreamSession, UpstreamFailure>>>();

/** An upstream session established after initialize (by any isolate), from KV. */
async function storedSession(request: PoolRequest, upstream: UpstreamConfig): Promise<UpstreamSession | undefined> {
  const text = request.kv ? await readHandshakeRecord(request.kv, "session", request.session.sid, upstream.name) : null;
  return text ? (JSON.parse(text) as UpstreamSession) : undefined;
}

/** Keeps `session` in KV as this client session's with `upstream`, until `expiration`. */
async function storeSession(
  request: PoolRequest,
  upstream: UpstreamConfig,
  session: UpstreamSession,
  expiration: number,
): Promise<void> {
  if (request.kv)
    await writeHandshakeRecord(
      request.kv,
      "session",
      request.session.sid,
      upstream.name,
      JSON.stringify(session),
      expiration,
    );
}

/**
 * A new upstream session for this client session: made by a handshake, kept in KV so
 * other isolates use it too (and DELETE can close it), and cached here.
 */
async function establish(
  upstream: UpstreamConfig,
  request: PoolRequest,
  avoid: string | null | undefined,
): Promise<Result<UpstreamSession, UpstreamFailure>> {
  const stored = await storedSession(request, upstream);
  if (stored && (avoid === undefined || stored.sessionId !== avoid)) return ok(stored);
  const result = await handshake(upstream, request);
  if (!result.ok) return result;
  // Kept as long as the client session lives (KV wants an expiry at least 60 s ahead).
  const expiration = Math.max(request.session.exp, Math.floor(Date.now() / 1000) + 60);
  await storeSession(request, upstream, result.value.session, expiration);
  return ok(result.value.session);
}

/**
 * The upstream's session for this client session: this isolate's latest, else the one
 * sealed in the token, else one established now. `avoid` names a session the upstream
 * just refused (404): a replacement is found in KV or made.
 */
export async function upstreamSession(
  upstream: UpstreamConfig,
  request: PoolRequest,
  avoid?: string | null,
): Promise<Result<UpstreamSession, UpstreamFailure>> {
  const key = `${request.session.sid}\u0000${upstream.name}`;
  const local = handshakes.get(key);
  if (avoid === undefined) {
    if (local) return local;
    const sealed = heldSession(request.session, upstream.name);
    if (sealed) return ok(sealed);
  } else if (local) {
    const known = await local;
    if (known.ok && known.value.sessionId !== avoid) return known;
  }
  const pending = establish(upstream, request, avoid).then((result) => {
    if (!result.ok) handshakes.delete(key);
    return result;
  });
  if (handshakes.size >= HANDSHAKE_CACHE_ENTRIES) handshakes.clear();
  handshakes.set(key, pending);
  return pending;
}

/** What upstreams declared at the handshake, per client and upstream (a cache of KV). */
const declared = new Map<string, Promise<Result<Handshake, UpstreamFailure>>>();

/**
 * The whole handshake of this client with `upstream` (what it declared: capabilities,
 * instructions), made once and kept like its session: in this isolate and in KV until
 * the client's expiry. The session it opened becomes the client's session with the
 * upstream, so a later request sends no second handshake. For clients that keep no
 * session of their own (2026-07-28 clients, whose `server/discover` reports what
 * upstreams declared).
 *
 * @example
 * const found = await upstreamHandshake(upstream, { env, session: client });
 * if (found.ok) console.log(found.value.initializeResult["capabilities"]);
 */
export function upstreamHandshake(
  upstream: UpstreamConfig,
  request: PoolRequest,
): Promise<Result<Handshake, UpstreamFailure>> {
  const key = `${request.session.sid}\u0000${upstream.name}`;
  const local = declared.get(key);
  if (local) return local;
  const pending = (async (): Promise<Result<Handshake, UpstreamFailure>> => {
    const { kv } = request;
    const text = kv ? await readHandshakeRecord(kv, "handshake", request.session.sid, upstream.name) : null;
    if (text) return ok(JSON.parse(text) as Handshake);
    const result = await handshake(upstream, request);
    if (!result.ok) return result;
    const expiration = Math.max(request.session.exp, Math.floor(Date.now() / 1000) + 60);
    if (kv)
      await writeHandshakeRecord(
        kv,
        "handshake",
        request.session.sid,
        upstream.name,
        JSON.stringify(result.value),
        expiration,
      );
    if (!(await storedSession(request, upstream))) {
      await storeSession(request, upstream, result.value.session, expiration);
      handshakes.set(key, Promise.resolve(ok(result.value.session)));
    }
    return result;
  })().then((result) => {
    if (!result.ok) declared.delete(key);
    return result;
  });
  if (declared.size >= HANDSHAKE_CACHE_ENTRIES) declared.clear();
  declared.set(key, pending);
  return pending;
}

/** Every upstream session this client session has had past its token: what DELETE must close too. */
export async function laterSessions(upstream: UpstreamConfig, request: PoolRequest): Promise<UpstreamSession[]> {
  const found = [
    await storedSession(request, upstream),
    await handshakes.get(`${request.session.sid}\u0000${upstream.name}`),
  ];
  const sessions: UpstreamSession[] = [];
  for (const item of found) {
    const session = item && "ok" in item ? (item.ok ? item.value : undefined) : item;
    if (session?.sessionId && !sessions.some((s) => s.sessionId === session.sessionId)) sessions.push(session);
  }
  return sessions;
}

export type { SendOptions };
/**
 * Without options (a notification, the client's answer to a server request), the
 * upstream owes nothing but an acknowledgement: the whole answer within `timeoutMs`.
 */
const ACKNOWLEDGEMENT: SendOptions = { answerWithinTimeout: true };

/**
 * Sends one message text to `upstream` within the client's session, through the session's
 * transport (select-transport.ts). A forgotten upstream session (HTTP 404, or 400 to a
 * session id without a JSON-RPC error to the message itself) is re-established once per
 * message, transparently; a 2026-07-28 side that
 * now refuses the era it was remembered by is probed again, once.
 */
export async function sendToUpstream(
  upstream: UpstreamConfig,
  text: string,
  request: PoolRequest,
  options: SendOptions = ACKNOWLEDGEMENT,
): Promise<Result<UpstreamReply, UpstreamFailure>> {
  let refused: string | null | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    const session = await upstreamSession(upstream, request, refused);
    if (!session.ok) return session;
    const transport = transportOf(session.value);
    const reply = await transport.send(
      upstream,
      text,
      request,
      session.value,
      noticingListChanges(upstream.name, options),
    );
    if (reply.ok) return reply;
    if (attempt > 0) {
      // Refused again in a fresh session: a 400 was about the request, not the session.
      return reply.reason === "session-expired" && reply.status === 400
        ? fail({
            reason: "http-status",
            upstream: upstream.name,
            status: 400,
            detail: "bad request (the gateway's log has the body)",
          })
        : reply;
    }
    if (reply.reason === "session-expired") {
      refused = session.value.sessionId;
      continue;
    }
    // Remembered as 2026-07-28, but it refuses modern requests now (HTTP 400/404/405 without a modern error): probe again, once.
    if (transport.side !== "modern" || reply.reason !== "http-status" || !ERA_REFUSALS.has(reply.status)) return reply;
    await forgetEra(upstream, request.kv);
    refused = null;
  }
  throw new Error("unreachable: the retry loop always returns");
}

/**
 * Opens the stream of messages `upstream` sends the client outside requests, in the
 * client's current session with it (the pool's: one made since the upstream forgot the
 * sealed one counts, and a session the upstream says is gone (404) is replaced once, as
 * for a send), through the transport that streams for that session (`streamTransportFor`: a
 * 2025 GET, or a 2026-07-28 `subscriptions/listen` for `filter`). Undefined for an
 * upstream the client did not connect to: a stream alone opens no session.
 *
 * @example
 * const stream = await listenToUpstream(upstream, request, { toolsListChanged: true });
 */
export async function listenToUpstream(
  upstream: UpstreamConfig,
  request: PoolRequest,
  filter: ListenFilter,
): Promise<Result<OpenedStream, UpstreamFailure> | undefined> {
  if (!heldSession(request.session, upstream.name)) return undefined;
  const open = async (avoid?: string | null): Promise<Result<OpenedStream, UpstreamFailure>> => {
    const session = await upstreamSession(upstream, request, avoid);
    if (!session.ok) return session;
    const stream = await (await streamTransportFor(upstream, request, session.value)).listen(
      upstream,
      request,
      session.value,
      filter,
    );
    // Only a 404 says the session is gone: a 400 to a stream (an upstream that offers none
    // that way) would otherwise replace the session the client's calls use on every reconnect.
    const forgotten = !stream.ok && stream.reason === "session-expired" && stream.status === 404;
    return forgotten && avoid === undefined ? open(session.value.sessionId) : stream;
  };
  return open();
}

/** Reopens a cut SSE stream of this session's upstream after `lastEventId` (GET with Last-Event-ID). */
export async function resumeFromUpstream(
  upstream: UpstreamConfig,
  lastEventId: string,
  request: PoolRequest,
  options: SendOptions = {},
): Promise<Result<UpstreamReply, UpstreamFailure>> {
  const session = await upstreamSession(upstream, request);
  if (!session.ok) return session;
  return exchange({
    upstream,
    env: request.env,
    ...(request.identity ? { identity: request.identity } : {}),
    method: "GET",
    sessionId: session.value.sessionId,
    protocolVersion: session.value.protocolVersion,
    signal: request.signal,
    lastEventId,
    ...noticingListChanges(upstream.name, options),
  });
}

/**
 * `options` whose notifications passed on as bytes drop the lists a list_changed makes
 * stale, before the client sees it, as `upstreamMessages` does for every other message.
 */
function noticingListChanges(upstream: string, options: SendOptions): SendOptions {
  const pass = options.notifications;
  if (!pass) return options;
  return {
    ...options,
    notifications: (bytes, head) => {
      noteListChange(upstream, { jsonrpc: "2.0", method: head.method });
      return pass(bytes, head);
    },
  };
}

/** Reads an upstream message stream to its end, turning protocol breaks and missed deadlines into failures; a list_changed drops the lists held for it (list-cache.ts). */
export async function* upstreamMessages(
  reply: UpstreamReply,
  upstream: string,
): AsyncGenerator<Result<WireMessage, UpstreamFailure>> {
  try {
    for await (const wire of reply.messages) {
      // A response kept as its bytes (or flowing) is no list_changed: its text is not read for it.
      if (!unreadWire(wire)) noteListChange(upstream, wire.message);
      yield ok(wire);
    }
  } catch (error) {
    yield fail(breakFailure(error, upstream));
  }
}
