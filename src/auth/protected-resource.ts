/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): what a client learns from the URL in
 * a 401's `WWW-Authenticate` — which resource this is, which authorization servers issue
 * tokens for it (none named for a gateway without an OAuth issuer) and which scopes it
 * knows. One document per route: `/mcp` at
 * `/.well-known/oauth-protected-resource/mcp`, `/mcp/<upstream>` at the same path with
 * its own suffix, and the bare `/.well-known/oauth-protected-resource` for the gateway.
 * With AUTH.signIn the gateway is itself an authorization server of every route (its
 * origin is the issuer), named first.
 */
import type { AuthConfig } from "../config/auth-config";

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** Where the metadata of the resource at `path` ("/mcp", "/mcp/<upstream>") is served. */
export function metadataUrl(origin: string, path: string): string {
  return `${origin}${PROTECTED_RESOURCE_PATH}${path}`;
}

/** The resource URL of a route ("" for /mcp): the configured audience, a route's own when configured, else the URL itself. */
export function resourceUrl(auth: AuthConfig, origin: string, route: string): string {
  const jwt = auth.mode === "on" ? auth.jwt : undefined;
  const own = route === "" ? undefined : jwt?.routeAudiences[route];
  return own ?? jwt?.audience[0] ?? `${origin}/mcp${route === "" ? "" : `/${route}`}`;
}

/**
 * The metadata document of a route.
 *
 * @example
 * protectedResourceMetadata(auth, "https://gw.example", "")
 * // { resource: "https://gw.example/mcp", authorization_servers: ["https://idp.example"], ... }
 */
export function protectedResourceMetadata(auth: AuthConfig, origin: string, route: string): Record<string, unknown> {
  const on = auth.mode === "on" ? auth : undefined;
  const servers = [...(on?.signIn ? [origin] : []), ...(on?.jwt?.authorizationServers ?? [])];
  return {
    resource: resourceUrl(auth, origin, route),
    // Optional (RFC 9728 §2): an empty list reads as "sign in somewhere" to OAuth clients; a
    // gateway that takes API keys only names none, and its 401 says to send a key.
    ...(servers.length > 0 ? { authorization_servers: servers } : {}),
    ...(on && on.scopes.length > 0 ? { scopes_supported: on.scopes } : {}),
    bearer_methods_supported: ["header"],
    resource_name: route === "" ? "mcp-edge-gateway" : `mcp-edge-gateway: ${route}`,
  };
}
