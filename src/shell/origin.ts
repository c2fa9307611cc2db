/**
 * Origin validation (the MCP transport's defence against DNS rebinding) and CORS for
 * browser clients whose origin the operator allowed.
 *
 * Requests without an Origin header come from non-browser clients and pass. A browser
 * request passes when its Origin is listed in ALLOWED_ORIGINS, or is the gateway's own
 * origin on a loopback host. Same-origin alone proves nothing under DNS rebinding
 * (evil.example resolving to 127.0.0.1 makes Host and Origin agree), so it is trusted
 * only where the host name cannot be an attacker's.
 */
import { GatewayError } from "../core/errors";

/** Request headers a browser client may send: both eras' (2026-07-28 adds Mcp-Method, Mcp-Name and the Mcp-Param-* mirrors) and the trace context. */
const CORS_ALLOWED_HEADERS = [
  "content-type",
  "accept",
  "authorization",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "mcp-method",
  "mcp-name",
  "traceparent",
  "tracestate",
];
/** A 2026-07-28 parameter header (`Mcp-Param-<name>`), which a preflight can only allow by name. */
const PARAM_HEADER = /^mcp-param-[a-z0-9_-]{1,64}$/;
/** Parameter headers one preflight may have allowed; a longer request is answered with the fixed list only. */
const MAX_PARAM_HEADERS = 32;
const CORS_EXPOSED_HEADERS = "mcp-session-id, mcp-protocol-version";
const CORS_MAX_AGE_S = 600;

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Throws 403 for a browser origin that is neither the gateway's own nor allowed. */
export function checkOrigin(request: Request, allowed: readonly string[]): string | null {
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  if (allowed.includes(origin) || allowed.includes("*")) return origin;
  const own = new URL(request.url);
  if (origin === own.origin && LOOPBACK_HOSTS.has(own.hostname)) return origin;
  throw new GatewayError(
    403,
    -32000,
    `Forbidden: Origin ${origin} is not allowed; an operator can add it to ALLOWED_ORIGINS`,
  );
}

/** The Mcp-Param-* headers a preflight asks for (Access-Control-Request-Headers), when they are few and well formed. */
function requestedParamHeaders(requested: string | null): string[] {
  if (requested === null) return [];
  const names = requested.split(",", MAX_PARAM_HEADERS * 4).map((name) => name.trim().toLowerCase());
  const params = names.filter((name) => PARAM_HEADER.test(name));
  return params.length <= MAX_PARAM_HEADERS ? params : [];
}

/**
 * CORS headers for an allowed browser origin; `requested` is a preflight's
 * Access-Control-Request-Headers, whose Mcp-Param-* names are allowed by name.
 */
export function corsHeaders(origin: string, requested: string | null = null): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
    "access-control-allow-headers": [...CORS_ALLOWED_HEADERS, ...requestedParamHeaders(requested)].join(", "),
    "access-control-expose-headers": CORS_EXPOSED_HEADERS,
    "access-control-max-age": String(CORS_MAX_AGE_S),
    vary: requested === null ? "origin" : "origin, access-control-request-headers",
  };
}
