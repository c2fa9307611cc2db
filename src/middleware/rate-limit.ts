/**
 * Rate limits per principal, with Cloudflare's rate-limiting binding (declared as
 * `[[ratelimits]]` in wrangler.toml, so `wrangler dev` counts too). The caller's persona
 * names a limit (`"rateLimit": "standard"`); AUTH.rateLimits maps that name to a binding.
 * Each request counts once under the principal's key. Over the limit: HTTP 429 with
 * Retry-After for a request on its own, the same JSON-RPC error inside a stream already
 * open. Callers without a limit, and AUTH off, are not counted.
 */
import { GatewayError } from "../core/errors";
import type { AuthConfig } from "../config/auth-config";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../config/gateway-config";
import { onRequests, type Middleware } from "../context/call-context";
import { callerGrant } from "./authorization";

/** The binding's longest period: a client that waits this long is counted afresh. */
export const RETRY_AFTER_S = 60;
const TOO_MANY_REQUESTS = -32029;

type RateLimitBinding = { limit: (options: { key: string }) => Promise<{ success: boolean }> };

function isBinding(value: unknown): value is RateLimitBinding {
  return typeof value === "object" && value !== null && typeof (value as { limit?: unknown }).limit === "function";
}

export type RateLimitOptions = {
  readonly auth: AuthConfig;
  readonly cacheTtlMs?: number;
};

/**
 * The rate-limit middleware.
 *
 * @example
 * composeMiddleware([authorization({ auth }), rateLimit({ auth }), sysTools()], relay);
 */
export function rateLimit({ auth, cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: RateLimitOptions): Middleware {
  if (auth.mode !== "on" || Object.keys(auth.rateLimits).length === 0) return (next) => next;
  const limits = auth.rateLimits;
  return onRequests((next) =>
    async function rateLimit(ctx, request) {
      const name = (await callerGrant(ctx, cacheTtlMs))?.rateLimit;
      if (name === undefined) return next(ctx, request);
      const bindingName = Object.hasOwn(limits, name) ? limits[name] : undefined;
      const binding = bindingName === undefined ? undefined : ctx.services.env[bindingName];
      if (!isBinding(binding)) {
        // A persona naming a limit that is not configured fails closed: the operator meant to limit this caller.
        console.error(`mcp-edge-gateway: rate limit "${name}" is not configured (AUTH.rateLimits) or its binding is missing from wrangler.toml`);
        throw new GatewayError(500, -32603, `Gateway configuration error: the rate limit "${name}" is not configured`, undefined, request.message.id);
      }
      const { success } = await binding.limit({ key: ctx.identity.principal });
      if (!success) {
        throw new GatewayError(429, TOO_MANY_REQUESTS, `Too Many Requests: the rate limit "${name}" is used up; retry after ${RETRY_AFTER_S} seconds`, { retryAfterSeconds: RETRY_AFTER_S }, request.message.id, {
          "retry-after": String(RETRY_AFTER_S),
        });
      }
      return next(ctx, request);
    });
}
