/**
 * Identity assertions: who the caller is, told to an upstream that opted in
 * (`"identity": {"header": "X-MCP-Identity"}` in UPSTREAMS) without handing it the
 * caller's own credential. A short-lived JWT signed by the gateway (ES256 with the
 * private JWK in the IDENTITY_SIGNING_KEY secret): issuer the gateway, audience the
 * upstream's name, subject the principal, with email, roles and persona. Upstreams verify
 * it against the gateway's `/.well-known/jwks.json`. A token is reused for a caller and
 * upstream while it has more than ASSERTION_REUSE_MIN_S left, so signing is rare.
 *
 * Rotation: the key IDENTITY_SIGNING_KEY replaced goes to IDENTITY_SIGNING_KEY_PREVIOUS,
 * whose public key stays published (it never signs) while upstreams may hold tokens it
 * signed or a key set cached before the rotation.
 */
import { importJWK, SignJWT, type JWK } from "jose";
import { isObject } from "../core/jsonrpc";

export const IDENTITY_KEY_SECRET = "IDENTITY_SIGNING_KEY";
/** The key IDENTITY_SIGNING_KEY replaced: published, never used to sign. */
export const PREVIOUS_IDENTITY_KEY_SECRET = "IDENTITY_SIGNING_KEY_PREVIOUS";
/** The issuer (`iss`) of every assertion. */
export const ASSERTION_ISSUER = "mcp-edge-gateway";
export const ASSERTION_TTL_S = 5 * 60;
const ASSERTION_REUSE_MIN_S = 60;
const MAX_CACHED_ASSERTIONS = 1_000;
/** Parsed keys kept per isolate: the current and the previous one, and a rotation's worth more. */
const MAX_CACHED_KEYS = 4;
const ALG = "ES256";

/** What an assertion says of the caller. */
export type AssertedIdentity = {
  readonly principal: string;
  readonly email?: string;
  readonly roles: readonly string[];
  readonly persona?: string;
};

type SigningKey = { readonly key: CryptoKey; readonly kid: string; readonly publicJwk: JWK };

const keys = new Map<string, Promise<SigningKey>>();
const minted = new Map<string, { readonly token: string; readonly exp: number }>();

/** The private JWK in the secret `name`, with its kid; undefined when the secret is not set. */
function keyOf(env: Readonly<Record<string, unknown>>, name: string): Promise<SigningKey> | undefined {
  const raw = env[name];
  if (typeof raw !== "string" || raw === "") return undefined;
  let key = keys.get(raw);
  if (!key) {
    key = (async () => {
      const invalid = () =>
        new Error(`${name} must be a private P-256 JWK (see docs/authentication.md, "Identity to upstreams")`);
      let jwk: unknown;
      try {
        jwk = JSON.parse(raw);
      } catch {
        throw invalid(); // JSON.parse's message would quote the start of the secret
      }
      if (!isObject(jwk) || jwk["kty"] !== "EC" || jwk["crv"] !== "P-256" || typeof jwk["d"] !== "string")
        throw invalid();
      const { d: _d, key_ops: _ops, ...publicJwk } = jwk as JWK;
      const kid = typeof jwk["kid"] === "string" ? jwk["kid"] : "gateway-1";
      return {
        key: (await importJWK(jwk as JWK, ALG)) as CryptoKey,
        kid,
        publicJwk: { ...publicJwk, kid, alg: ALG, use: "sig" },
      };
    })();
    if (keys.size >= MAX_CACHED_KEYS) keys.clear(); // rotated secrets do not pile up
    keys.set(raw, key);
  }
  return key;
}

/** The key that signs: IDENTITY_SIGNING_KEY. */
function signingKey(env: Readonly<Record<string, unknown>>): Promise<SigningKey> | undefined {
  return keyOf(env, IDENTITY_KEY_SECRET);
}

/** The public JWK of the previous key, if one is set; a broken one is logged and left out (the current key is still published). */
async function previousPublicKey(env: Readonly<Record<string, unknown>>): Promise<JWK | undefined> {
  try {
    return (await keyOf(env, PREVIOUS_IDENTITY_KEY_SECRET))?.publicJwk;
  } catch (error) {
    console.error(`mcp-edge-gateway: ${error instanceof Error ? error.message : String(error)}; it is not published`);
    return undefined;
  }
}

/**
 * The gateway's public keys as a JWKS: the signing key's, then the previous key's
 * (IDENTITY_SIGNING_KEY_PREVIOUS) while it is set; empty when neither is.
 *
 * @example
 * const jwks = await identityJwks(env); // { keys: [{ kty: "EC", crv: "P-256", kid: "gateway-1", ... }] }
 */
export async function identityJwks(env: Readonly<Record<string, unknown>>): Promise<{ keys: JWK[] }> {
  const key = signingKey(env);
  const current = key ? (await key).publicJwk : undefined;
  const previous = await previousPublicKey(env);
  // The same key in both secrets (mid-rotation) is published once.
  const same =
    current !== undefined && previous !== undefined && current["x"] === previous["x"] && current["y"] === previous["y"];
  return { keys: [...(current ? [current] : []), ...(previous && !same ? [previous] : [])] };
}

/**
 * The assertion for `who` calling `upstream`; throws when the secret is missing or not
 * a P-256 key (an upstream that opted in must not be called without it).
 */
export async function identityAssertion(
  env: Readonly<Record<string, unknown>>,
  upstream: string,
  who: AssertedIdentity,
  now = Date.now(),
): Promise<string> {
  const key = signingKey(env);
  if (!key)
    throw new Error(
      `upstream "${upstream}" asks for identity assertions but the ${IDENTITY_KEY_SECRET} secret is not set`,
    );
  const signing = await key;
  const cacheKey = JSON.stringify([
    signing.kid,
    upstream,
    who.principal,
    who.email ?? null,
    who.roles,
    who.persona ?? null,
  ]);
  const seconds = Math.floor(now / 1000);
  const cached = minted.get(cacheKey);
  if (cached && cached.exp - seconds > ASSERTION_REUSE_MIN_S) return cached.token;
  const exp = seconds + ASSERTION_TTL_S;
  const token = await new SignJWT({
    ...(who.email !== undefined ? { email: who.email } : {}),
    roles: [...who.roles],
    ...(who.persona !== undefined ? { persona: who.persona } : {}),
  })
    .setProtectedHeader({ alg: ALG, kid: signing.kid, typ: "JWT" })
    .setIssuer(ASSERTION_ISSUER)
    .setAudience(upstream)
    .setSubject(who.principal)
    .setIssuedAt(seconds)
    .setExpirationTime(exp)
    .sign(signing.key);
  if (minted.size >= MAX_CACHED_ASSERTIONS) minted.clear();
  minted.set(cacheKey, { token, exp });
  return token;
}
