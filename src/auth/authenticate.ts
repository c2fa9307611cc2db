/**
 * Who an MCP request comes from: the pluggable verifier the shell calls before the front
 * sees the request. `Authorization: Bearer <credential>` holds a gateway API key
 * (`mgw_...`, an `ApiKeyVerifier` of features/api-keys/), an OAuth access token of an external issuer (a JWT) or one the gateway
 * issued itself (AUTH.signIn: a `TokenVerifier` of features/client-sign-in/); each kind is checked only when
 * AUTH turns it on. Failures are tagged values; `authError` maps each to its wire form: 401 with a
 * `WWW-Authenticate` challenge naming the protected-resource metadata (RFC 9728, RFC
 * 6750 §3), or a 500/503 when the fault is the gateway's (no AUTH; the identity
 * provider's keys unavailable, with `Retry-After`).
 */
import { fail, GatewayError, ok, type Result } from "../core/errors";
import { INTERNAL_ERROR } from "../core/jsonrpc";
import type { AuthConfig } from "../config/auth-config";
import { ANONYMOUS_PRINCIPAL, type Caller } from "../context/call-context";
import { verifyJwt, type TokenProblem } from "./jwt";

/** The principal of every caller while authentication is off. */
export const ANONYMOUS_CALLER: Caller = { principal: ANONYMOUS_PRINCIPAL, roles: [], method: "none" };
const UNAUTHORIZED = -32001;
const BEARER = /^Bearer +([^\s]+) *$/i;

export type AuthProblem =
  | { reason: "not-configured" }
  | { reason: "missing" }
  | { reason: "wrong-scheme" }
  | { reason: "malformed" }
  | { reason: "api-keys-off" }
  | { reason: "unknown-key" }
  | { reason: "expired-key" }
  | { reason: "jwt"; problem: TokenProblem }
  /** An access token of the gateway's own (sign-in) that is unknown, expired, revoked or for another resource. */
  | { reason: "sign-in-token" }
  /** The issuer's keys could not be fetched: the gateway's fault, retried after `retryAfterS`. */
  | { reason: "idp-unavailable"; retryAfterS: number };

/** A check of tokens a feature issues (client sign-in's access tokens), plugged in by the composition root. */
export type TokenVerifier = {
  /** Whether a token is of this verifier's kind (then no other check is tried). */
  readonly claims: (token: string) => boolean;
  /** The caller a token of this kind names, or undefined when it is unknown, expired or for another resource. */
  readonly verify: (token: string) => Promise<Caller | undefined>;
};

/** Who a gateway API key names: the fields of its record the caller is made of. */
export type ApiKeyHolder = { readonly principal: string; readonly email?: string; readonly roles: readonly string[] };

/** The check of the gateway's API keys (features/api-keys/), plugged in by the composition root. */
export type ApiKeyVerifier = {
  /** Whether a token has an API key's shape (then no other check is tried). */
  readonly claims: (token: string) => boolean;
  /** The holder a key names, or why it names none; an isolate trusts its copy of a record for `cacheTtlMs`. */
  readonly verify: (
    kv: KVNamespace,
    token: string,
    cacheTtlMs: number,
  ) => Promise<Result<ApiKeyHolder, { readonly reason: "malformed" | "unknown" | "expired" }>>;
};

/** The verifier for a request at `origin` on `route` ("" for /mcp), or undefined when its feature is off. */
export type TokenVerifierFor = (
  env: Readonly<Record<string, unknown>>,
  auth: AuthConfig,
  origin: string,
  upstreams: readonly string[],
  route: string,
) => TokenVerifier | undefined;

export type AuthRequest = {
  readonly authorization: string | null;
  readonly auth: AuthConfig;
  readonly kv: KVNamespace | undefined;
  /** How long an isolate trusts its copy of an API key record. */
  readonly cacheTtlMs: number;
  /** The check of API keys (AUTH.apiKeys). */
  readonly apiKeys: ApiKeyVerifier;
  /** "" for /mcp. */
  readonly route: string;
  /** The check of the gateway's own access tokens for this route, when AUTH.signIn is on. */
  readonly signInToken?: TokenVerifier | undefined;
};

/**
 * The caller of a request, or why there is none.
 *
 * @example
 * const caller = await authenticate({ authorization, auth, kv, cacheTtlMs: 30_000, apiKeys: API_KEYS, route: "" });
 */
export async function authenticate({
  authorization,
  auth,
  kv,
  cacheTtlMs,
  apiKeys,
  route,
  signInToken,
}: AuthRequest): Promise<Result<Caller, AuthProblem>> {
  if (auth.mode === "off") return ok(ANONYMOUS_CALLER);
  if (auth.mode === "missing") return fail({ reason: "not-configured" });
  if (authorization === null || authorization.trim() === "") return fail({ reason: "missing" });
  if (!/^Bearer(\s|$)/i.test(authorization)) return fail({ reason: "wrong-scheme" });
  const token = BEARER.exec(authorization)?.[1];
  if (!token) return fail({ reason: "malformed" });
  if (apiKeys.claims(token)) {
    if (!auth.apiKeys || !kv) return fail({ reason: "api-keys-off" });
    const verified = await apiKeys.verify(kv, token, cacheTtlMs);
    if (!verified.ok)
      return fail({
        reason:
          verified.reason === "expired" ? "expired-key" : verified.reason === "malformed" ? "malformed" : "unknown-key",
      });
    const { principal, email, roles } = verified.value;
    return ok({ principal, ...(email !== undefined ? { email } : {}), roles, method: "api-key" });
  }
  if (auth.signIn && signInToken?.claims(token)) {
    const caller = await signInToken.verify(token);
    return caller ? ok({ ...caller, token }) : fail({ reason: "sign-in-token" });
  }
  // Neither an API key nor, where JWTs are off or it has not three parts, a JWT.
  if (!auth.jwt || token.split(".").length !== 3) return fail({ reason: "malformed" });
  const verified = await verifyJwt(token, auth.jwt, route);
  if (!verified.ok)
    return fail(
      verified.reason === "jwks-unavailable"
        ? { reason: "idp-unavailable", retryAfterS: verified.retryAfterS }
        : { reason: "jwt", problem: verified.reason },
    );
  const { subject, email, roles } = verified.value;
  return ok({ principal: subject, ...(email !== undefined ? { email } : {}), roles, method: "jwt", token });
}

/**
 * The name of a failed authentication in the audit trail (never the credential), or
 * `undefined` for a configuration error, which is the operator's log's business.
 */
export function authFailureName(problem: AuthProblem): string | undefined {
  switch (problem.reason) {
    case "not-configured":
      return undefined;
    case "missing":
      return "missing-credentials";
    case "wrong-scheme":
      return "wrong-scheme";
    case "malformed":
      return "malformed-credential";
    case "api-keys-off":
      return "api-keys-off";
    case "unknown-key":
      return "unknown-or-revoked-api-key";
    case "expired-key":
      return "expired-api-key";
    case "jwt":
      return `token-${problem.problem}`;
    case "sign-in-token":
      return "unknown-or-revoked-access-token";
    case "idp-unavailable":
      return "idp-unavailable";
    default: {
      const never: never = problem;
      return never;
    }
  }
}

function jwtDescription(problem: TokenProblem): string {
  switch (problem) {
    case "malformed":
      return "the token is not a well-formed JWT";
    case "signature":
      return "the token's signature does not verify";
    case "algorithm":
      return "the token's algorithm is not allowed";
    case "unknown-key":
      return "the token is signed with a key the issuer does not publish";
    case "issuer":
      return "the token is from another issuer";
    case "audience":
      return "the token is for another audience (resource)";
    case "expired":
      return "the token expired";
    case "not-yet-valid":
      return "the token is not valid yet";
    case "claims":
      return "the token lacks a required claim (sub, exp) or a claim is invalid";
    default: {
      const never: never = problem;
      return never;
    }
  }
}

/**
 * `Bearer resource_metadata="..."`, with an RFC 6750 error when the credential itself was
 * bad; `hint` (no error code: RFC 6750 §3.1 wants none when no credential came) tells a
 * client without credentials what the gateway takes.
 */
function challenge(metadataUrl: string, description?: string, hint?: string): Record<string, string> {
  const error =
    description !== undefined
      ? `, error="invalid_token", error_description="${description}"`
      : hint !== undefined
        ? `, error_description="${hint}"`
        : "";
  return { "www-authenticate": `Bearer resource_metadata="${metadataUrl}"${error}` };
}

/**
 * What a client without credentials is told the gateway takes, when it takes API keys: an
 * OAuth client that finds no authorization server to sign in with (mcp-remote tries
 * dynamic client registration) learns it needs a key, and the header to send it in.
 * Undefined for an issuer's tokens alone, or with sign-in on: the metadata names an
 * authorization server, and OAuth works.
 */
export function credentialHint(auth: AuthConfig | undefined): string | undefined {
  // With sign-in on, the metadata names the gateway itself, and OAuth clients sign in there.
  if (auth?.mode !== "on" || !auth.apiKeys || auth.signIn) return undefined;
  return auth.jwt
    ? "this gateway takes API keys or access tokens of the authorization server its metadata names: " +
        "send the header Authorization: Bearer <API key or access token>"
    : "this gateway takes API keys and does not sign clients in with OAuth: " +
        "send the header Authorization: Bearer <API key> (a key its operator made with POST /admin/api-keys)";
}

/**
 * The wire error for a request that did not authenticate. `metadataUrl` is the route's RFC
 * 9728 document; with `auth`, a request without credentials is told what the gateway takes.
 */
export function authError(problem: AuthProblem, metadataUrl: string, auth?: AuthConfig): GatewayError {
  const unauthorized = (message: string, description?: string, hint?: string) =>
    new GatewayError(
      401,
      UNAUTHORIZED,
      `Unauthorized: ${message}`,
      undefined,
      null,
      challenge(metadataUrl, description, hint),
    );
  switch (problem.reason) {
    case "not-configured":
      return new GatewayError(
        500,
        INTERNAL_ERROR,
        'Gateway configuration error: authentication is not configured (the AUTH var is not set); set AUTH to {"apiKeys": true} and create keys with POST /admin/api-keys, ' +
          'configure an OAuth issuer under AUTH.jwt, or set AUTH to {"mode": "off"} to serve anyone (see docs/authentication.md)',
      );
    case "missing": {
      const hint = credentialHint(auth);
      return unauthorized(hint ?? "send Authorization: Bearer <API key or access token>", undefined, hint);
    }
    case "wrong-scheme":
      return unauthorized("the Authorization header must use the Bearer scheme");
    case "malformed":
      return unauthorized("the bearer credential is malformed", "the credential is malformed");
    case "api-keys-off":
      return unauthorized("API keys are not accepted by this gateway", "API keys are not accepted");
    case "unknown-key":
      return unauthorized("the API key is not valid (unknown or revoked)", "the API key is unknown or revoked");
    case "expired-key":
      return unauthorized("the API key expired", "the API key expired");
    case "jwt":
      return unauthorized(jwtDescription(problem.problem), jwtDescription(problem.problem));
    case "sign-in-token": {
      const description = "the access token is unknown, expired, revoked, or for another resource";
      return unauthorized(description, description);
    }
    case "idp-unavailable":
      // No URL and no cause here: the JWKS URL may carry a credential; the log has the cause.
      return new GatewayError(
        503,
        INTERNAL_ERROR,
        `Service Unavailable: the gateway cannot check access tokens right now (its identity provider's signing keys could not be fetched); retry in ${problem.retryAfterS} s. ` +
          "If this persists, the gateway's operator should check AUTH.jwt.jwksUrl and the identity provider (the gateway's log has the cause)",
        undefined,
        null,
        { "retry-after": String(problem.retryAfterS) },
      );
    default: {
      const never: never = problem;
      return never;
    }
  }
}
