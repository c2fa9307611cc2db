/**
 * `UPSTREAMS[].auth`: per-user sign-in to an upstream (`{"type": "oauth"}`; `userKey` and
 * `tokenExchange` are checked by config/user-credential-auth.ts), validated
 * with every problem located. Everything is discovered from the upstream by default
 * (docs/upstream-sign-in.md); the optional fields pin what discovery cannot know: a client
 * registered by hand (its secret by the *name* of a Worker secret, never the value), the
 * scopes to ask for, the authorization server to use.
 */
import { isObject } from "../core/jsonrpc";
import { parseUserCredentialAuth, type TokenExchangeAuth, type UserKeyAuth } from "./user-credential-auth";

/** How the gateway sends each user's own credential to an upstream. */
export type UpstreamAuth = OAuthAuth | UserKeyAuth | TokenExchangeAuth;

/** Each user signs in to the upstream's own authorization server. */
export type OAuthAuth = {
  readonly type: "oauth";
  /** A client registered with the authorization server by hand; absent: Client ID Metadata Document or dynamic registration. */
  readonly clientId?: string;
  /** The name of the Worker secret holding that client's secret (confidential clients only). */
  readonly clientSecret?: string;
  /** Scopes always asked for, beside those the upstream's challenge or metadata names. */
  readonly scopes?: readonly string[];
  /** The authorization server's issuer URL, when the upstream's metadata names several or none. */
  readonly authorizationServer?: string;
};

const KNOWN = ["type", "clientId", "clientSecret", "scopes", "authorizationServer"];
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Checks `raw` (the `auth` member of one upstream); `at` locates problems (`UPSTREAMS[0].auth`).
 *
 * @example
 * parseUpstreamAuth({ type: "oauth", scopes: ["repo"] }, "UPSTREAMS[0].auth"); // { auth: { type: "oauth", scopes: ["repo"] }, problems: [] }
 */
export function parseUpstreamAuth(raw: unknown, at: string): { auth?: UpstreamAuth; problems: string[] } {
  const problems: string[] = [];
  const other = parseUserCredentialAuth(raw, at);
  if (other) return other;
  if (!isObject(raw) || raw["type"] !== "oauth") {
    return {
      problems: [
        `${at}: must be {"type": "oauth"}, {"type": "userKey"} or {"type": "tokenExchange", "tokenEndpoint": ...} (docs/configuration.md)`,
      ],
    };
  }
  for (const key of Object.keys(raw))
    if (!KNOWN.includes(key)) problems.push(`${at}.${key}: unknown field (known: ${KNOWN.join(", ")})`);
  const { clientId, clientSecret, scopes, authorizationServer } = raw;
  if (clientId !== undefined && (typeof clientId !== "string" || clientId === ""))
    problems.push(`${at}.clientId: must be the client id the authorization server issued`);
  if (clientSecret !== undefined) {
    if (typeof clientSecret !== "string" || !SECRET_NAME.test(clientSecret))
      problems.push(
        `${at}.clientSecret: must be the NAME of a Worker secret holding the client secret (wrangler secret put NAME), never the secret itself`,
      );
    else if (clientId === undefined)
      problems.push(`${at}.clientSecret: needs "clientId" (a secret belongs to a client registered by hand)`);
  }
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || scopes.some((s) => typeof s !== "string" || !SCOPE_TOKEN.test(s)))
  ) {
    problems.push(`${at}.scopes: must be a list of scope names without spaces, like ["repo", "read:org"]`);
  }
  if (
    authorizationServer !== undefined &&
    (typeof authorizationServer !== "string" ||
      !/^https?:\/\//i.test(authorizationServer) ||
      !URL.canParse(authorizationServer))
  ) {
    problems.push(`${at}.authorizationServer: must be the authorization server's issuer, an absolute https:// URL`);
  }
  if (problems.length > 0) return { problems };
  return {
    auth: {
      type: "oauth",
      ...(typeof clientId === "string" ? { clientId } : {}),
      ...(typeof clientSecret === "string" ? { clientSecret } : {}),
      ...(Array.isArray(scopes) ? { scopes: scopes as string[] } : {}),
      ...(typeof authorizationServer === "string" ? { authorizationServer } : {}),
    },
    problems,
  };
}
