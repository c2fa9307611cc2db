/**
 * Rate limits per principal, with Cloudflare's rate-limiting binding (declared as
 * `[[ratelimits]]` in wrangler.toml, so `wrangler dev` counts too). The caller's persona
 * names a limit (`"rateLimit": "standard"`); AUTH.rateLimits maps that name to a binding.
 * Every message that reaches an upstream on the principal's behalf counts once under its
 * key: requests and notifications alike. Two notifications are free: the client's
 * `notifications/initialized` (the gateway told each upstream itself; it is never relayed),
 * and the first cancellation of a request of the client this isolate knows in flight
 * (pipeline/in-flight.ts). Over the limit: HTTP 429 with Retry-After for a request on its
 * own (or a POST of notifications), the same JSON-RPC error inside a stream already open.
 * Callers without a limit, and AUTH off, are not counted.
 */
import { GatewayError } from "../../core/errors";
import type { AuthConfig } from "../../config/auth-config";
import type { CallContext, Middleware } from "../../context/call-context";
import { isId, type JsonRpcId, type JsonRpcNotification } from "../../core/jsonrpc";
import { takeCancellation } from "../../pipeline/in-flight";

/** The binding's longest period: a client that waits this long is counted afresh. */
export const RETRY_AFTER_S = 60;
const TOO_MANY_REQUESTS = -32029;

export type RateLimitOptions = {
  readonly auth: AuthConfig;
};

/** True for a notification the limit does not count (see the header). */
function free(ctx: CallContext, { method, params }: JsonRpcNotification): boolean {
  if (method === "notifications/initialized") return true;
  const requestId = params?.["requestId"];
  return method === "notifications/cancelled" && isId(requestId) && takeCancellation(ctx, requestId);
}

/**
 * The rate-limit middleware. Requests and notifications (which an upstream receives too,
 * from every upstream of `/mcp`) count under the principal's one key, so a principal over
 * its limit cannot drive upstreams with notifications (a batch of cancellations of requests
 * it never sent included), and cancelling a request of its own in flight costs nothing.
 * Over the limit a notification is refused before the relay: the front answers the POST 429
 * (a notification cannot get a JSON-RPC error), and the upstream never receives it. The
 * client's answers to server requests are not counted: each answers a request an upstream
 * made, and only reaches the upstream that asked.
 *
 * @example
 * composeMiddleware([authorization({ auth }), rateLimit({ auth }), sysTools()], relay);
 */
export function rateLimit({ auth }: RateLimitOptions): Middleware {
  if (auth.mode !== "on" || Object.keys(auth.rateLimits).length === 0) return (next) => next;
  const limits = auth.rateLimits;
  /** Counts one message; throws the 429 (or the 500 of a limit without a binding) that refuses it. */
  const count = async (ctx: CallContext, id: JsonRpcId | null): Promise<void> => {
    const name = (await ctx.grant())?.rateLimit;
    if (name === undefined) return;
    const bindingName = Object.hasOwn(limits, name) ? limits[name] : undefined;
    const binding = bindingName === undefined ? undefined : ctx.services.rateLimiter(bindingName);
    if (!binding) {
      // A persona naming a limit that is not configured fails closed: the operator meant to limit this caller.
      console.error(
        `mcp-edge-gateway: rate limit "${name}" is not configured (AUTH.rateLimits) or its binding is missing from wrangler.toml`,
      );
      throw new GatewayError(
        500,
        -32603,
        `Gateway configuration error: the rate limit "${name}" is not configured`,
        undefined,
        id,
      );
    }
    const { success } = await binding.limit({ key: `request:${ctx.identity.principal}` });
    if (!success) {
      const what = id === null ? " (notifications count with requests)" : "";
      const message =
        `Too Many Requests: the rate limit "${name}" is used up${what}; ` + `retry after ${RETRY_AFTER_S} seconds`;
      throw new GatewayError(429, TOO_MANY_REQUESTS, message, { retryAfterSeconds: RETRY_AFTER_S }, id, {
        "retry-after": String(RETRY_AFTER_S),
      });
    }
  };
  return (next) =>
    async function rateLimit(ctx, message) {
      if (message.kind === "request") await count(ctx, message.wire.message.id);
      else if (message.kind === "notification" && !free(ctx, message.wire.message)) await count(ctx, null);
      return next(ctx, message);
    };
}
