/**
 * A client's notifications that mean nothing upstream never reach one. A 2025 client may
 * tell upstreams two things about requests: `notifications/cancelled` (stop one of mine)
 * and `notifications/progress` (progress on one of yours). This layer keeps what a client
 * has in flight (in-flight.ts: its requests while relayed, the progress tokens
 * of the requests an upstream sends it while they run) and drops:
 * - a cancellation whose `requestId` is no JSON-RPC id (no request of the client has it);
 * - progress whose `progressToken` names no request an upstream sent this client (as far
 *   as this isolate knows: progress is advisory, and a receiver may ignore it).
 * A cancellation with a well-formed id passes on; the rate limit forwards one for a request
 * known in flight without counting it and counts every other (features/personas/rate-limit.ts),
 * since the request it names may be in flight on another isolate.
 */
import { isId, isObject, kindOf, type JsonRpcMessage, type OutgoingMessage } from "../core/jsonrpc";
import type { CallContext, Middleware } from "../context/call-context";
import { holdInFlight, isInFlight } from "./in-flight";

/** Progress tokens of upstream requests kept per client message (a call, a GET stream); past it the oldest goes. */
const MAX_PROGRESS_TOKENS_PER_CALL = 32;
const PROGRESS_TOKEN_KEY = '"progressToken"';

/** The progress token of an upstream's request to the client, when `text` is one that carries it. */
function progressTokenOf(text: string): string | number | undefined {
  // Most of what is emitted (progress, logs) never names a progress token: only those are parsed.
  if (!text.includes(PROGRESS_TOKEN_KEY)) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(message) || kindOf(message as JsonRpcMessage) !== "request") return undefined;
  const meta = isObject(message["params"]) ? message["params"]["_meta"] : undefined;
  const token = isObject(meta) ? meta["progressToken"] : undefined;
  return isId(token) ? token : undefined;
}

/** `ctx` whose emit notes the progress tokens of the upstreams' requests it carries, and what forgets them. */
function watchingUpstreamRequests(ctx: CallContext): { ctx: CallContext; release: () => void } {
  const releases: (() => void)[] = [];
  const emit = (message: OutgoingMessage) => {
    const token = typeof message === "string" ? progressTokenOf(message) : undefined;
    if (token !== undefined) {
      // A long GET stream carries many requests: the oldest, long answered, is forgotten first.
      if (releases.length >= MAX_PROGRESS_TOKENS_PER_CALL) releases.shift()!();
      releases.push(holdInFlight(ctx, "progress", token));
    }
    return ctx.emit(message);
  };
  return { ctx: { ...ctx, emit }, release: () => releases.forEach((release) => release()) };
}

/** True when a client notification means something to an upstream (see the header). */
function meaningful(ctx: CallContext, method: string, params: Readonly<Record<string, unknown>> | undefined): boolean {
  switch (method) {
    case "notifications/cancelled":
      return isId(params?.["requestId"]);
    case "notifications/progress": {
      const token = params?.["progressToken"];
      return isId(token) && isInFlight(ctx, "progress", token);
    }
    default:
      return true;
  }
}

/**
 * The client-notifications middleware; it sits before the rate limit, which reads what it keeps.
 *
 * @example
 * composeMiddleware([authorization({ auth }), clientNotifications(), rateLimit({ auth })], relay);
 */
export function clientNotifications(): Middleware {
  return (next) =>
    async function clientNotifications(ctx, message) {
      // Only a client with a session (2025) sends these to upstreams; a 2026-07-28 client's are not relayed.
      if (!ctx.identity.session) return next(ctx, message);
      switch (message.kind) {
        case "notification": {
          const { method, params } = message.wire.message;
          return meaningful(ctx, method, params) ? next(ctx, message) : undefined;
        }
        case "request": {
          const done = holdInFlight(ctx, "request", message.wire.message.id);
          const watched = watchingUpstreamRequests(ctx);
          try {
            return await next(watched.ctx, message);
          } finally {
            watched.release();
            done();
          }
        }
        case "listen": {
          const watched = watchingUpstreamRequests(ctx);
          try {
            return await next(watched.ctx, message);
          } finally {
            watched.release();
          }
        }
        default:
          return next(ctx, message);
      }
    };
}
