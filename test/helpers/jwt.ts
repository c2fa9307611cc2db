/**
 * OAuth access tokens for tests: claims for the test issuer, tokens signed with the keys
 * the JWKS fixture publishes (test/fixtures/jwks-server.ts), and tokens signed with a key
 * no JWKS publishes.
 */
import { generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import { inject } from "vitest";

export const ISSUER = "https://idp.test/realms/gw";
export const AUDIENCE = "http://gateway.test/mcp";
export const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

const nowS = () => Math.floor(Date.now() / 1000);

/** The `jwt` field of AUTH for the test issuer, with its JWKS at `jwksUrl`. */
export function jwtAuth(jwksUrl: string, more: Record<string, unknown> = {}): { jwt: Record<string, unknown> } {
  return {
    jwt: {
      issuer: ISSUER,
      audience: AUDIENCE,
      jwksUrl,
      rolesClaim: "realm_access.roles",
      authorizationServers: [ISSUER],
      ...more,
    },
  };
}

/** Claims of a valid token (issued now, for five minutes), with `overrides`. */
export function claims(overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: "user-1",
    email: "user1@example.com",
    realm_access: { roles: ["jwt-user"] },
    iat: nowS(),
    exp: nowS() + 300,
    ...overrides,
  };
}

/** A token signed with one of the fixture's published keys (RS256 by default). */
export async function sign(
  payload: JWTPayload,
  key: JWK = inject("jwks").keys.rsa,
  header: Record<string, unknown> = {},
): Promise<string> {
  const alg = key.alg!;
  return new SignJWT(payload)
    .setProtectedHeader({ alg, kid: key.kid!, typ: "JWT", ...header })
    .sign(await importJWK(key, alg));
}

/** A token with valid claims signed by a key of its own, named `kid` (which no JWKS publishes). */
export async function strangerToken(kid: string, payload: JWTPayload = claims()): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256");
  return new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid }).sign(privateKey);
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
