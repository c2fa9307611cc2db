/**
 * Rate limits per principal, with Cloudflare's rate-limiting binding (declared as
 * `[[ratelimits]]` in wrangler.toml, so `wrangler dev` counts too). The caller's persona
 * names a limit (`"rateLimit": "standard"`); AUTH.rateLimits maps that name to a binding.
 * Each request counts once under the principal's key, each notification once under its
 * own. Over the limit: HTTP 429 with Retry-After for a request on its own (or a POST of
 * notifications), the same JSON-RPC error inside a stream already open. Callers without
 * a limit, and AUTH off, are not counted.
 */
import { GatewayError } from "../core/errors";
import type { AuthConfig } from "../config/auth-config";
import type { CallContext, Middleware } from "../context/call-context";
import type { JsonRpcId } from "../core/jsonrpc";

/** The binding's longest period: a client that waits this long is counted afresh. */
export const RETRY_AFTER_S = 60;
const TOO_MANY_REQUESTS = -32029;

export type RateLimitOptions = {
  readonly auth: AuthConfig;
};

/** What a message counts as: requests and notifications each have their own count per principal. */
type Counted = "request" | "notification";

/**
 * The rate-limit middleware. Requests count under the principal's request key;
 * notifications (which an upstream receives too, from every upstream of `/mcp`) count
 * separately under its notification key, against the same limit, so a principal over
 * its request limit cannot drive upstreams with notifications, and a cancellation never
 * costs a request. Over the limit a notification is refused before the relay: the front
 * answers the POST 429 (a notification cannot get a JSON-RPC error), and the upstream
 * never receives it. The client's answers to server requests are not counted: each
 * answers a request an upstream made, and only reaches the upstream that asked.
 *
 * @example
 * composeMiddleware([authorization({ auth }), rateLimit({ auth }), sysTools()], relay);
 */
export function rateLimit({ auth }: RateLimitOptions): Middleware {
  if (auth.mode !== "on" || Object.keys(auth.rateLimits).length === 0) return (next) => next;
  const limits = auth.rateLimits;
  /** Counts one message; throws the 429 (or the 500 of a limit without a binding) that refuses it. */
  const count = async (ctx: CallContext, counted: Counted, id: JsonRpcId | null): Promise<void> => {
    const name = (await ctx.grant())?.rateLimit;
    if (name === undefined) return;
    const bindingName = Object.hasOwn(limits, name) ? limits[name] : undefined;
    const binding = bindingName === undefined ? undefined : ctx.services.rateLimiter(bindingName);
    if (!binding) {
      // A persona naming a limit that is not configured fails closed: the operator meant to limit this caller.
      console.error(`mcp-edge-gateway: rate limit "${name}" is not configured (AUTH.rateLimits) or its binding is missing from wrangler.toml`);
      throw new GatewayError(500, -32603, `Gateway configuration error: the rate limit "${name}" is not configured`, undefined, id);
    }
    const { success } = await binding.limit({ key: `${counted}:${ctx.identity.principal}` });
    if (!success) {
      const what = counted === "request" ? "" : " for notifications";
      throw new GatewayError(429, TOO_MANY_REQUESTS, `Too Many Requests: the rate limit "${name}"${what} is used up; retry after ${RETRY_AFTER_S} seconds`, { retryAfterSeconds: RETRY_AFTER_S }, id, {
        "retry-after": String(RETRY_AFTER_S),
      });
    }
  };
  return (next) =>
    async function rateLimit(ctx, message) {
      if (message.kind === "request") await count(ctx, "request", message.wire.message.id);
      else if (message.kind === "notification") await count(ctx, "notification", null);
      return next(ctx, message);
    };
}
