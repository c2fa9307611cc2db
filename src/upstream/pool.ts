/**
 * The upstream pool: sends a client session's traffic to an upstream inside that
 * upstream's own session.
 *
 * The upstream's session id normally comes from the sealed gateway session. When an
 * upstream failed to initialize with the client, or has since forgotten the session
 * (HTTP 404, or 400 as some servers answer), the pool performs the handshake again and records the new session in KV,
 * so every isolate continues in it (and DELETE closes it); isolate memory only caches it.
 */
import { fail, ok, type Result } from "../core/errors";
import { GATEWAY_INFO } from "../core/gateway-info";
import { isObject, type JsonObject, type WireMessage } from "../core/jsonrpc";
import { exchange, type LargeAnswerConsumer, type UpstreamFailure, type UpstreamReply } from "./client";
import type { UpstreamConfig } from "../config/upstreams";
import { heldSession, type UpstreamClient, type UpstreamSession } from "./upstream-session";
import { UpstreamBreak } from "./deadlines";
import { forgetEra, upstreamEra } from "./era";
import { initializeResultOf, modernSession, sendModern } from "./modern-send";
import { MODERN_UPSTREAM_VERSION } from "./modern-wire";

/** A 2026-07-28 server's answer to a version it does not speak (initialize, from a modern-only upstream). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

const HANDSHAKE_CACHE_ENTRIES = 1_000;

/** What a handshake learns; the `initialize` result is kept whole for transparent mode. */
export type Handshake = { readonly session: UpstreamSession; readonly initializeResult: JsonObject };


export type PoolRequest = {
  readonly env: Readonly<Record<string, unknown>>;
  readonly session: UpstreamClient;
  readonly signal?: AbortSignal;
  /** Mints the identity assertion for upstreams that opted in. */
  readonly identity?: (upstream: string) => Promise<string>;
  /** The revision the client itself speaks (a 2025 client gets 2026-07-28 results it can read). */
  readonly clientVersion?: string;
  /** A modern client's own `Mcp-Param-*` headers, forwarded to modern upstreams. */
  readonly paramHeaders?: Readonly<Record<string, string>>;
};

/** Upstream sessions established after initialize, per client session and upstream (a cache of KV). */
const handshakes = new Map<string, Promise<Result<UpstreamSession, UpstreamFailure>>>();
const UPSTREAM_SESSION_KEY_PREFIX = "upstream-session/";
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
export async function handshake(upstream: UpstreamConfig, request: PoolRequest): Promise<Result<Handshake, UpstreamFailure>> {
  for (let attempt = 0; ; attempt++) {
    const era = await upstreamEra(upstream, request.env, request.signal);
    if (!era.ok) return era;
    // A 2026-07-28 upstream has no handshake: what it declared at discovery stands in for one.
    if (era.value.era === "modern") return ok({ session: modernSession(era.value.discover), initializeResult: initializeResultOf(upstream.name, era.value.discover) });
    const result = await initializeUpstream(upstream, request);
    // Remembered as 2025, but it now refuses initialize as a modern-only server does: probe again, once.
    if (result.ok || result.reason !== "http-status" || result.modernOnly !== true || attempt > 0) return result;
    await forgetEra(upstream, request.env);
  }
}

async function initializeUpstream(upstream: UpstreamConfig, request: PoolRequest): Promise<Result<Handshake, UpstreamFailure>> {
  const { session } = request;
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: session.protocolVersion,
      capabilities: session.clientCapabilities,
      clientInfo: isObject(session.clientInfo) && typeof session.clientInfo["name"] === "string" ? session.clientInfo : GATEWAY_INFO,
    },
  });
  // Initialize is never long in coming: the whole answer, however framed, within timeoutMs.
  const reply = await exchange({ upstream, env: request.env, ...(request.identity ? { identity: request.identity } : {}), method: "POST", body, signal: request.signal, answerWithinTimeout: true, rpcErrorsInBody: true });
  if (!reply.ok) return reply;
  let result: JsonObject | undefined;
  try {
    for await (const wire of reply.value.messages) {
      const message = wire.message;
      if ("id" in message && !("method" in message)) {
        if ("error" in message) {
          const modernOnly = message.error.code === UNSUPPORTED_PROTOCOL_VERSION;
          return fail({ reason: "http-status", upstream: upstream.name, status: reply.value.status, detail: `initialize failed: ${message.error.message}`, ...(modernOnly ? { modernOnly: true as const } : {}) });
        }
        result = message.result;
        break;
      }
    }
  } catch (error) {
    return fail(breakFailure(error, upstream.name));
  }
  if (!result || typeof result["protocolVersion"] !== "string") {
    return fail({ reason: "bad-response", upstream: upstream.name, detail: "initialize answered without a protocolVersion" });
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
  return ok({ session: { sessionId, protocolVersion, capabilities: keys, ...(subscribe ? { subscribe } : {}) }, initializeResult: result });
}

function kvOf(request: PoolRequest): KVNamespace | undefined {
  return request.env["GATEWAY_KV"] as KVNamespace | undefined;
}

function storedKey(request: PoolRequest, upstream: UpstreamConfig): string {
  return `${UPSTREAM_SESSION_KEY_PREFIX}${request.session.sid}/${upstream.name}`;
}

/** An upstream session established after initialize (by any isolate), from KV. */
async function storedSession(request: PoolRequest, upstream: UpstreamConfig): Promise<UpstreamSession | undefined> {
  const text = await kvOf(request)?.get(storedKey(request, upstream));
  return text ? (JSON.parse(text) as UpstreamSession) : undefined;
}

/**
 * A new upstream session for this client session: made by a handshake, kept in KV so
 * other isolates use it too (and DELETE can close it), and cached here.
 */
async function establish(upstream: UpstreamConfig, request: PoolRequest, avoid: string | null | undefined): Promise<Result<UpstreamSession, UpstreamFailure>> {
  const stored = await storedSession(request, upstream);
  if (stored && (avoid === undefined || stored.sessionId !== avoid)) return ok(stored);
  const result = await handshake(upstream, request);
  if (!result.ok) return result;
  // Kept as long as the client session lives (KV wants an expiry at least 60 s ahead).
  const expiration = Math.max(request.session.exp, Math.floor(Date.now() / 1000) + 60);
  await kvOf(request)?.put(storedKey(request, upstream), JSON.stringify(result.value.session), { expiration });
  return ok(result.value.session);
}

/**
 * The upstream's session for this client session: this isolate's latest, else the one
 * sealed in the token, else one established now. `avoid` names a session the upstream
 * just refused (404): a replacement is found in KV or made.
 */
export async function upstreamSession(upstream: UpstreamConfig, request: PoolRequest, avoid?: string | null): Promise<Result<UpstreamSession, UpstreamFailure>> {
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

const UPSTREAM_HANDSHAKE_KEY_PREFIX = "upstream-handshake/";
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
export function upstreamHandshake(upstream: UpstreamConfig, request: PoolRequest): Promise<Result<Handshake, UpstreamFailure>> {
  const key = `${request.session.sid}\u0000${upstream.name}`;
  const local = declared.get(key);
  if (local) return local;
  const pending = (async (): Promise<Result<Handshake, UpstreamFailure>> => {
    const kv = kvOf(request);
    const storedKeyOfHandshake = `${UPSTREAM_HANDSHAKE_KEY_PREFIX}${request.session.sid}/${upstream.name}`;
    const text = await kv?.get(storedKeyOfHandshake);
    if (text) return ok(JSON.parse(text) as Handshake);
    const result = await handshake(upstream, request);
    if (!result.ok) return result;
    const expiration = Math.max(request.session.exp, Math.floor(Date.now() / 1000) + 60);
    await kv?.put(storedKeyOfHandshake, JSON.stringify(result.value), { expiration });
    if (!(await storedSession(request, upstream))) {
      await kv?.put(storedKey(request, upstream), JSON.stringify(result.value.session), { expiration });
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
  const found = [await storedSession(request, upstream), await handshakes.get(`${request.session.sid}\u0000${upstream.name}`)];
  const sessions: UpstreamSession[] = [];
  for (const item of found) {
    const session = item && "ok" in item ? (item.ok ? item.value : undefined) : item;
    if (session?.sessionId && !sessions.some((s) => s.sessionId === session.sessionId)) sessions.push(session);
  }
  return sessions;
}

/** How one message is sent: see `UpstreamExchange`. */
export type SendOptions = { readonly large?: LargeAnswerConsumer; readonly answerWithinTimeout?: boolean; readonly traceparent?: string };
/**
 * Without options (a notification, the client's answer to a server request), the
 * upstream owes nothing but an acknowledgement: the whole answer within `timeoutMs`.
 */
const ACKNOWLEDGEMENT: SendOptions = { answerWithinTimeout: true };

/**
 * Sends one message text to `upstream` within the client's session. A forgotten
 * upstream session (HTTP 404, or 400 to a session id) is re-established once per
 * message, transparently.
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
    if (session.value.protocolVersion === MODERN_UPSTREAM_VERSION) {
      const modern = await sendModern(upstream, text, request, options);
      // Remembered as 2026-07-28, but it refuses modern requests now (HTTP 4xx without a modern error): probe again, once.
      if (modern.ok || modern.reason !== "http-status" || modern.status >= 500 || attempt > 0) return modern;
      await forgetEra(upstream, request.env);
      refused = null;
      continue;
    }
    const reply = await exchange({
      upstream,
      env: request.env,
    ...(request.identity ? { identity: request.identity } : {}),
      method: "POST",
      body: text,
      sessionId: session.value.sessionId,
      protocolVersion: session.value.protocolVersion,
      signal: request.signal,
      ...options,
    });
    if (reply.ok || reply.reason !== "session-expired") return reply;
    if (attempt > 0) {
      // Refused again in a fresh session: a 400 was about the request, not the session.
      return reply.status === 400 ? fail({ reason: "http-status", upstream: upstream.name, status: 400, detail: "bad request (the gateway's log has the body)" }) : reply;
    }
    refused = session.value.sessionId;
  }
  throw new Error("unreachable: the retry loop always returns");
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
    ...options,
  });
}

/** The failure behind an error thrown while an upstream's answer was read. */
function breakFailure(error: unknown, upstream: string): UpstreamFailure {
  if (error instanceof UpstreamBreak) return error.failure;
  return { reason: "bad-response", upstream, detail: `its answer broke off: ${error instanceof Error ? error.message : String(error)}` };
}

/** Reads an upstream message stream to its end, turning protocol breaks and missed deadlines into failures. */
export async function* upstreamMessages(reply: UpstreamReply, upstream: string): AsyncGenerator<Result<WireMessage, UpstreamFailure>> {
  try {
    for await (const wire of reply.messages) yield ok(wire);
  } catch (error) {
    yield fail(breakFailure(error, upstream));
  }
}
