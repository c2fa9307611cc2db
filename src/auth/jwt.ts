/**
 * OAuth 2.1 bearer JWTs, the gateway being the resource server: verified with `jose`
 * against the issuer's JWKS (kept per isolate by key-set.ts: one fetch in flight, a
 * cooldown after every fetch, the last good set kept through an outage), for the configured issuer,
 * an audience that is the gateway's resource URL (RFC 8707; a route's own when one is
 * configured), expiry and not-before within a bounded skew, and only the configured
 * asymmetric algorithms (`none` and HMAC never verify: a JWKS key is public).
 */
import { jwtVerify, type JWTPayload } from "jose";
// The error classes through their own subpath: `errors` from "jose" is a namespace object
// that keeps every class in the bundle; member accesses on this import keep only those named.
import * as errors from "jose/errors";
import { fail, ok, type Result } from "../core/errors";
import { isObject } from "../core/jsonrpc";
import type { JwtConfig } from "../config/auth-config";
import { issuerKeys, KeySetUnavailable } from "./key-set";

/** The longest `sub` taken as a principal. */
const MAX_SUBJECT_CHARS = 256;
/**
 * A token whose signature and claims verified is trusted again, by its exact text, for
 * this long (never past its own expiry): a client sends the same token with every
 * request, and a signature check per request is most of what a JWT costs.
 */
const VERIFIED_TOKEN_CACHE_MS = 60_000;
const MAX_CACHED_TOKENS = 1_000;

export type VerifiedJwt = { readonly subject: string; readonly email?: string; readonly roles: readonly string[] };

/** What is wrong with a token (the caller's fault, a 401). */
export type TokenProblem =
  | "malformed"
  | "signature"
  | "algorithm"
  | "unknown-key"
  | "issuer"
  | "audience"
  | "expired"
  | "not-yet-valid"
  | "claims";

/** Why a token did not verify: the token, or the issuer's keys (unavailable until `retryAfterS`: the gateway's fault). */
export type JwtProblem = { reason: TokenProblem } | { reason: "jwks-unavailable"; retryAfterS: number };

/** Verified tokens by config identity and token text: until when they may be trusted, and what they said. */
const verified = new Map<string, { readonly until: number; readonly value: VerifiedJwt }>();

/** The value at a dotted path of the claims ("realm_access.roles"). */
export function claimAt(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload;
  for (const key of path.split(".")) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
  return value;
}

/** Roles from a claim's value: a list of strings, or one space-separated string. */
export function rolesFrom(value: unknown): string[] {
  if (typeof value === "string") return value.split(" ").filter((role) => role !== "");
  return Array.isArray(value) ? value.filter((role): role is string => typeof role === "string") : [];
}

/** The problem of a failed verification; anything neither jose nor the key set threw is a bug, rethrown. */
function problemOf(error: unknown): JwtProblem {
  if (error instanceof KeySetUnavailable) return { reason: "jwks-unavailable", retryAfterS: error.retryAfterS };
  if (error instanceof errors.JOSEError) return { reason: tokenProblemOf(error) };
  throw error;
}

function tokenProblemOf(error: errors.JOSEError): TokenProblem {
  if (error instanceof errors.JWTExpired) return "expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return "issuer";
      case "aud":
        return "audience";
      case "nbf":
        return error.reason === "check_failed" ? "not-yet-valid" : "claims";
      default:
        return "claims";
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return "algorithm";
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return "unknown-key";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "signature";
  return "malformed";
}

/**
 * Verifies a bearer JWT for `route` ("" for /mcp).
 *
 * @example
 * const verified = await verifyJwt(token, config.jwt, "");
 * if (verified.ok) console.log(verified.value.subject, verified.value.roles);
 */
export async function verifyJwt(
  token: string,
  config: JwtConfig,
  route: string,
  now = Date.now(),
): Promise<Result<VerifiedJwt, JwtProblem>> {
  const routeAudience = route === "" ? undefined : config.routeAudiences[route];
  // The configuration is part of the key: a token verified for one issuer, audience or route says nothing for another.
  const cacheKey = `${config.issuer}\n${config.jwksUrl}\n${config.rolesClaim}\n${config.emailClaim}\n${config.audience.join(" ")}\n${routeAudience ?? ""}\n${config.algorithms.join(" ")}\n${token}`;
  const cached = verified.get(cacheKey);
  if (cached && cached.until > now) return ok(cached.value);
  if (cached) verified.delete(cacheKey);
  try {
    const { payload } = await jwtVerify(token, issuerKeys(config.jwksUrl), {
      issuer: config.issuer,
      audience: routeAudience ? [...config.audience, routeAudience] : [...config.audience],
      algorithms: [...config.algorithms],
      clockTolerance: config.clockToleranceS,
      requiredClaims: ["exp", "sub"],
    });
    // jose checks that `sub` is present, not what it is: the principal is a bounded, non-empty string.
    if (typeof payload.sub !== "string" || payload.sub === "" || payload.sub.length > MAX_SUBJECT_CHARS)
      return fail({ reason: "claims" });
    const email = claimAt(payload, config.emailClaim);
    const value: VerifiedJwt = {
      subject: payload.sub,
      ...(typeof email === "string" ? { email } : {}),
      roles: rolesFrom(claimAt(payload, config.rolesClaim)),
    };
    if (verified.size >= MAX_CACHED_TOKENS) verified.clear();
    // Trusted again until it expires (by its own exp, with no skew), and no longer than the cache allows.
    verified.set(cacheKey, { until: Math.min(now + VERIFIED_TOKEN_CACHE_MS, payload.exp! * 1000), value });
    return ok(value);
  } catch (error) {
    // The key set logged why it has no keys (once per failed fetch, not once per request).
    return fail(problemOf(error));
  }
}
