/**
 * Where an authorization server sends the user back, chosen so that an answer of one
 * server can never be taken for another's (OAuth mix-up, RFC 9700 §4.4). A hostile
 * upstream's server can send the user on to an honest server with the gateway's client id
 * there and the hostile flow's `state`; without a defence the honest code comes back and
 * is redeemed at the hostile token endpoint. Two defences, one per flow:
 *
 * - a redirect URI of the server's own, one per upstream and authorization server:
 *   `/oauth/upstream/callback/<upstream>/<first 16 hex of SHA-256(issuer)>`; the callback
 *   takes a flow only at the URI the flow recorded (RFC 9700 §4.4.2.2);
 * - the shared `/oauth/upstream/callback` (what clients registered by hand name, and the
 *   one redirect URI of the Client ID Metadata Document, which any server may be handed),
 *   only with a server that advertises `authorization_response_iss_parameter_supported`:
 *   its answers must then carry its `iss`, which is checked (RFC 9207, §4.4.2.1).
 */
import type { AuthorizationServer } from "oauth4webapi";

/** The shared redirect URI, relative to the gateway's origin. */
export const CALLBACK_PATH = "/oauth/upstream/callback";
/** Hex characters of the issuer's SHA-256 in its redirect URI (64 bits: distinct per server). */
const ISSUER_TAG_HEX_CHARS = 16;

/** True when `as` says each of its authorization responses carries its `iss` (RFC 9207). */
export function advertisesIss(as: AuthorizationServer): boolean {
  return as.authorization_response_iss_parameter_supported === true;
}

/** The tag of `issuer` in its redirect URIs. */
export async function issuerTag(issuer: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(issuer)));
  return [...bytes]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, ISSUER_TAG_HEX_CHARS);
}

/**
 * The redirect URI of `upstream`'s sign-ins at the server `issuer`, through `origin`.
 *
 * @example
 * await serverRedirectUri("https://gw.example", "linear", "https://mcp.linear.app");
 * // "https://gw.example/oauth/upstream/callback/linear/3c1f0b2e9a7d4c55"
 */
export async function serverRedirectUri(origin: string, upstream: string, issuer: string): Promise<string> {
  return `${origin}${CALLBACK_PATH}/${encodeURIComponent(upstream)}/${await issuerTag(issuer)}`;
}

/** The shared redirect URI through `origin`. */
export function sharedRedirectUri(origin: string): string {
  return `${origin}${CALLBACK_PATH}`;
}

/** The redirect URI a callback arrived at (its query left out). */
export function arrivedAt(url: URL): string {
  return `${url.origin}${url.pathname}`;
}
