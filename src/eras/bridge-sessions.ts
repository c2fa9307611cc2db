/**
 * The upstream sessions of bridged calls (eras/bridged-exchange.ts), held by a
 * `BridgedCall` Durable Object: each serves one call at a time, with the session's GET
 * stream open, so that every question the upstream sends in that session belongs to that
 * call. Real 2025 servers do not all ask on the call's own stream: `fastmcp` sends
 * `elicit(...)` and `requestSampling(...)`, and server-everything `roots/list`, without a
 * related request id, which their transports put on the session's GET stream (or drop
 * when none is open). On the session a modern client's requests share (one per
 * principal, route and capabilities: front/modern/upstream-client.ts) such a question
 * could belong to any of its calls, and only one GET stream may be open; so a bridged
 * call runs in a session of its own.
 *
 * A session is leased to one call and returned when the call ends well, to be reused by
 * the object's next call of the same client (a handshake costs two upstream requests, and
 * some servers take a second to answer one); at most MAX_IDLE_BRIDGE_SESSIONS wait per
 * client, each for BRIDGE_SESSION_IDLE_MS, then it is closed (DELETE). A question that
 * arrives while no call holds the session is refused to the upstream at once (it would
 * otherwise wait for an answer no one will give). An upstream without sessions (no
 * `Mcp-Session-Id`) has no GET stream to read: its calls use the shared session.
 * Sessions live in the object's memory only; an evicted object leaves its sessions to the
 * upstream's own expiry.
 */
import { ok, type Result } from "../core/errors";
import { kindOf, METHOD_NOT_FOUND, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange, type UpstreamFailure } from "../upstream/client";
import { handshake, sendToUpstream, upstreamMessages, type PoolRequest } from "../upstream/pool";
import type { UpstreamClient, UpstreamSession } from "../upstream/upstream-session";
import { MAX_CALLS_PER_OBJECT } from "./bridge-protocol";

/** How long a bridged call's session waits, unused, for the object's next call before it is closed. */
export const BRIDGE_SESSION_IDLE_MS = 30_000;
/** Unused sessions kept per client and upstream (one per call an object may hold at once). */
export const MAX_IDLE_BRIDGE_SESSIONS = MAX_CALLS_PER_OBJECT;
/** Clients and upstreams remembered as offering no GET stream (a bound on the object's memory). */
const MAX_STREAMLESS_ENTRIES = 1_000;

/**
 * Answers an upstream's question the client cannot be asked: a ping is answered, anything
 * else refused with `why`, at once, so the upstream never waits for it.
 */
export async function refuseQuestion(
  upstream: UpstreamConfig,
  request: JsonRpcRequest,
  why: string,
  pool: PoolRequest,
): Promise<void> {
  const reply =
    request.method === "ping"
      ? { result: {} }
      : { error: { code: METHOD_NOT_FOUND, message: `Method not found: ${request.method} (${why})` } };
  const sent = await sendToUpstream(upstream, JSON.stringify({ jsonrpc: "2.0", id: request.id, ...reply }), pool);
  if (sent.ok) for await (const ack of upstreamMessages(sent.value, upstream.name)) if (!ack.ok) break;
}

/**
 * One upstream session of bridged calls and its GET stream. While leased, the questions
 * the stream brings wait in `next()` for the call; otherwise they are refused.
 */
export class BridgeSession {
  readonly #abort = new AbortController();
  readonly #queue: WireMessage<JsonRpcRequest>[] = [];
  #waiter: ((question: WireMessage<JsonRpcRequest> | undefined) => void) | undefined;
  #leased = false;
  #ended = false;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param pool  What a call sends in this session with (the session is its client's only one).
   */
  constructor(
    /** Which client's and upstream's sessions it is one of. */
    readonly key: string,
    readonly upstream: UpstreamConfig,
    readonly pool: PoolRequest,
    private readonly session: UpstreamSession,
  ) {}

  /** A bodiless request of this session to its upstream (the GET stream, the DELETE that ends it). */
  #inSession(method: "GET" | "DELETE", signal: AbortSignal) {
    return exchange({
      upstream: this.upstream,
      env: this.pool.env,
      ...(this.pool.identity ? { identity: this.pool.identity } : {}),
      method,
      sessionId: this.session.sessionId,
      protocolVersion: this.session.protocolVersion,
      signal,
    });
  }

  /** True while its GET stream may still bring questions. */
  get open(): boolean {
    return !this.#ended;
  }

  /**
   * Opens the GET stream and reads it until the session ends: "open", or "refused" when
   * the upstream offers none (405, or an answer that is not a stream), or "failed".
   */
  async listen(): Promise<"open" | "refused" | "failed"> {
    const reply = await this.#inSession("GET", this.#abort.signal);
    if (!reply.ok || reply.value.mode !== "sse") {
      this.#end();
      return reply.ok || (reply.reason === "http-status" && reply.status === 405) ? "refused" : "failed";
    }
    void this.#pump(reply.value.messages);
    return "open";
  }

  async #pump(messages: AsyncIterable<WireMessage>): Promise<void> {
    try {
      for await (const wire of messages) {
        if (kindOf(wire.message) !== "request") continue; // the session's notifications are no call's
        const question = wire as WireMessage<JsonRpcRequest>;
        if (!this.#leased) {
          await refuseQuestion(
            this.upstream,
            question.message,
            "no call of a 2026-07-28 client is waiting in this session",
            this.pool,
          ).catch(() => {});
        } else if (this.#waiter) {
          this.#waiter(question);
          this.#waiter = undefined;
        } else this.#queue.push(question);
      }
    } catch {
      // a stream that breaks off ends like one that ends
    }
    this.#end();
  }

  #end(): void {
    this.#ended = true;
    this.#waiter?.(undefined);
    this.#waiter = undefined;
  }

  /** The next question on the GET stream for the call holding the session; undefined once the stream ended. */
  next(): Promise<WireMessage<JsonRpcRequest> | undefined> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.#waiter = resolve));
  }

  lease(): void {
    clearTimeout(this.#idleTimer);
    this.#leased = true;
  }

  /**
   * The call is over: questions it left unanswered are refused, and the session waits for
   * the next call until `onIdle`. `taken` is the call's last `next()`, which may hold a
   * question it took off the stream but never read (its answer came at the same moment):
   * it is refused too (a pending one ends here, with undefined).
   */
  async release(onIdle: () => void, taken?: Promise<WireMessage<JsonRpcRequest> | undefined>): Promise<void> {
    this.#leased = false;
    this.#waiter?.(undefined);
    this.#waiter = undefined;
    const left = this.#queue.splice(0);
    this.#idleTimer = setTimeout(onIdle, BRIDGE_SESSION_IDLE_MS);
    const unread = await taken;
    if (unread) left.unshift(unread);
    await Promise.all(
      left.map((question) =>
        refuseQuestion(this.upstream, question.message, "the call that asked has ended", this.pool).catch(() => {}),
      ),
    );
  }

  /** Closes the stream and ends the session upstream (best effort). */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    this.#abort.abort();
    this.#end();
    const ended = await this.#inSession("DELETE", AbortSignal.timeout(this.upstream.timeoutMs));
    if (ended.ok) for await (const _ of upstreamMessages(ended.value, this.upstream.name)) break;
  }
}

/** A Durable Object's bridge sessions, per client and upstream. */
export class BridgeSessions {
  readonly #idle = new Map<string, BridgeSession[]>();
  /** Clients and upstreams whose sessions have no GET stream: their calls use the shared session. */
  readonly #streamless = new Set<string>();

  /**
   * A session of its own for a call of `client` at `upstream`: an unused one, or one made
   * now (handshake, then its GET stream). Undefined when the upstream keeps no sessions
   * or opens no GET stream for them (HTTP 405): such an upstream can only ask on the
   * call's own stream, so the call runs in the client's shared session.
   *
   * @example
   * const own = await sessions.lease(upstream, { env, session: client, identity });
   */
  async lease(
    upstream: UpstreamConfig,
    request: PoolRequest,
  ): Promise<Result<BridgeSession | undefined, UpstreamFailure>> {
    const key = `${request.session.sid}\n${upstream.name}`;
    if (this.#streamless.has(key)) return ok(undefined);
    const idle = this.#idle.get(key) ?? [];
    for (let reused = idle.pop(); reused; reused = idle.pop()) {
      if (reused.open) {
        reused.lease();
        return ok(reused);
      }
      void reused.close().catch(() => {});
    }
    const made = await handshake(upstream, request);
    if (!made.ok) return made;
    if (made.value.session.sessionId === null) return ok(this.#withoutStream(key));
    const client: UpstreamClient = {
      ...request.session,
      sid: `${request.session.sid}/bridge/${crypto.randomUUID()}`,
      upstreams: { [upstream.name]: made.value.session },
    };
    const session = new BridgeSession(
      key,
      upstream,
      {
        env: request.env,
        kv: request.kv,
        session: client,
        ...(request.identity ? { identity: request.identity } : {}),
      },
      made.value.session,
    );
    session.lease();
    const listening = await session.listen();
    if (listening === "open") return ok(session);
    await session.close().catch(() => {});
    // Without a GET stream the call can still run in the shared session (questions on its own stream reach the client).
    return ok(listening === "refused" ? this.#withoutStream(key) : undefined);
  }

  /** Remembers that `key`'s upstream has no GET stream to read: its calls run in the shared session. */
  #withoutStream(key: string): undefined {
    if (this.#streamless.size >= MAX_STREAMLESS_ENTRIES) this.#streamless.clear();
    this.#streamless.add(key);
    return undefined;
  }

  /**
   * Takes a session back from a call that ended well (refusing the questions it left,
   * `taken` included: see BridgeSession.release); one that ended otherwise is closed, its
   * questions ending with it upstream.
   */
  async release(
    session: BridgeSession,
    reusable: boolean,
    taken?: Promise<WireMessage<JsonRpcRequest> | undefined>,
  ): Promise<void> {
    const { key } = session;
    const idle = this.#idle.get(key) ?? [];
    if (!reusable || !session.open || idle.length >= MAX_IDLE_BRIDGE_SESSIONS) return session.close();
    idle.push(session);
    this.#idle.set(key, idle);
    await session.release(() => {
      const still = this.#idle.get(key) ?? [];
      const at = still.indexOf(session);
      if (at >= 0) still.splice(at, 1);
      if (still.length === 0) this.#idle.delete(key);
      void session.close().catch(() => {});
    }, taken);
  }
}
