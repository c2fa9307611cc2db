/**
 * OAuth bearer JWTs: tokens signed in the test with keys whose public halves a JWKS on
 * loopback serves (test/fixtures/jwks-server.ts). Every failure with its status,
 * challenge and body; roles and email from the configured claims; per-route audiences;
 * the JWKS fetched once and again only for an unknown kid.
 */
import { exportSPKI, generateKeyPair, importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { bytesToBase64Url } from "../../src/core/base64url";
import { admin, authVars } from "../helpers/auth";
import { gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";
import { AUDIENCE, bearer, claims, INIT, ISSUER, jwtAuth, sign, strangerToken } from "../helpers/jwt";

const jwks = inject("jwks");
const ALPHA_AUDIENCE = "http://gateway.test/mcp/alpha";
const AUTH = jwtAuth(jwks.url, { routeAudiences: { alpha: ALPHA_AUDIENCE } });
const VARS = authVars(AUTH);
const METADATA = 'Bearer resource_metadata="http://gateway.test/.well-known/oauth-protected-resource/mcp"';
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  expect((await admin("PUT", "/personas/jwt-users", { roles: ["jwt-user"], allow: ["alpha___*"] }, VARS)).status).toBe(
    200,
  );
});
afterAll(async () => {
  await admin("DELETE", "/personas/jwt-users", undefined, VARS);
});

describe("a valid token", () => {
  it.each([
    ["RS256", jwks.keys.rsa],
    ["ES256", jwks.keys.ec],
  ])("signed %s opens a session and carries roles from the claim", async (_, key) => {
    const headers = bearer(await sign(claims(), key));
    const { session } = await initialize("/mcp", { vars: VARS, headers });
    const tools = await request("/mcp", session, "tools/list", undefined, { vars: VARS, headers });
    const names = tools.result.tools.map((t: Json) => t.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name: string) => name.startsWith("alpha___") || name.startsWith("sys___"))).toBe(true);
  });

  it("takes a token for the route's own resource on that route only", async () => {
    const token = await sign(claims({ aud: ALPHA_AUDIENCE }));
    expect((await post("/mcp/alpha", INIT, { vars: VARS, headers: bearer(token) })).status).toBe(200);
    expect((await post("/mcp", INIT, { vars: VARS, headers: bearer(token) })).status).toBe(401);
  });

  it("binds the session to the subject", async () => {
    const { session } = await initialize("/mcp", { vars: VARS, headers: bearer(await sign(claims())) });
    const other = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { vars: VARS, session, headers: bearer(await sign(claims({ sub: "user-2" }))) },
    );
    expect(other.status).toBe(404);
  });
});

describe("authentication failures", () => {
  async function hmacWithPublicKey(): Promise<string> {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = jwks.keys.rsa;
    const pem = await exportSPKI((await importJWK(publicJwk, "RS256", { extractable: true })) as CryptoKey);
    return new SignJWT(claims())
      .setProtectedHeader({ alg: "HS256", kid: jwks.keys.rsa.kid!, typ: "JWT" })
      .sign(new TextEncoder().encode(pem));
  }
  function unsigned(): string {
    const part = (value: unknown) => bytesToBase64Url(new TextEncoder().encode(JSON.stringify(value)));
    return `${part({ alg: "none", typ: "JWT" })}.${part(claims())}.`;
  }
  async function otherKeySameKid(): Promise<string> {
    const { privateKey } = await generateKeyPair("RS256");
    return new SignJWT(claims()).setProtectedHeader({ alg: "RS256", kid: jwks.keys.rsa.kid! }).sign(privateKey);
  }

  const cases: [string, () => Promise<string>, string][] = [
    ["a wrong issuer", () => sign(claims({ iss: "https://evil.test" })), "the token is from another issuer"],
    [
      "a wrong audience",
      () => sign(claims({ aud: "https://other.test/mcp" })),
      "the token is for another audience (resource)",
    ],
    ["an expired token", () => sign(claims({ exp: now() - 120 })), "the token expired"],
    ["a token not yet valid", () => sign(claims({ nbf: now() + 600 })), "the token is not valid yet"],
    [
      "an unknown kid",
      () => strangerToken("not-published"),
      "the token is signed with a key the issuer does not publish",
    ],
    ["a known kid with another key's signature", otherKeySameKid, "the token's signature does not verify"],
    ["alg none", async () => unsigned(), "the token's algorithm is not allowed"],
    ["HS256 signed with the public key", hmacWithPublicKey, "the token's algorithm is not allowed"],
    [
      "no subject",
      () => sign(claims({ sub: undefined })),
      "the token lacks a required claim (sub, exp) or a claim is invalid",
    ],
    [
      "an empty subject",
      () => sign(claims({ sub: "" })),
      "the token lacks a required claim (sub, exp) or a claim is invalid",
    ],
    [
      "a subject that is not a string",
      () => sign(claims({ sub: 42 as unknown as string })),
      "the token lacks a required claim (sub, exp) or a claim is invalid",
    ],
    ["three parts that are not JWT", async () => "a.b.c", "the token is not a well-formed JWT"],
  ];

  it.each(cases)("%s: 401 invalid_token", async (_, token, description) => {
    const response = await post("/mcp", INIT, { vars: VARS, headers: bearer(await token()) });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      `${METADATA}, error="invalid_token", error_description="${description}"`,
    );
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32001, message: `Unauthorized: ${description}` },
    });
  });

  it("accepts a token expired within the allowed skew", async () => {
    expect(
      (await post("/mcp", INIT, { vars: VARS, headers: bearer(await sign(claims({ exp: now() - 5 }))) })).status,
    ).toBe(200);
  });

  it("refuses an API key where only JWTs are configured", async () => {
    const response = await post("/mcp", INIT, {
      vars: VARS,
      headers: bearer(`mgw_${"0".repeat(32)}_${"A".repeat(43)}`),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error_description="API keys are not accepted"');
  });

  it("answers 503 when the issuer's keys cannot be fetched (test/auth/auth-idp.test.ts has the outages)", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const down = authVars({ jwt: { ...AUTH.jwt, jwksUrl: "http://127.0.0.1:9/jwks.json" } });
    const response = await post("/mcp", INIT, { vars: down, headers: bearer(await sign(claims())) });
    errors.mockRestore();
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});

describe("the JWKS cache", () => {
  it("fetches keys once, and again only for an unknown kid, at most once per cooldown", async () => {
    const fetches = async () => Number(await (await fetch(jwks.fetchesUrl)).text());
    const vars = authVars({ jwt: { ...AUTH.jwt, jwksUrl: `${jwks.url}?cache-test` } });
    const token = await sign(claims());
    const before = await fetches();
    for (let i = 0; i < 3; i++) expect((await post("/mcp", INIT, { vars, headers: bearer(token) })).status).toBe(200);
    expect(await fetches()).toBe(before + 1);
    const stranger = await strangerToken("stranger");
    for (let i = 0; i < 3; i++)
      expect((await post("/mcp", INIT, { vars, headers: bearer(stranger) })).status).toBe(401);
    // Within the cooldown an unknown kid does not refetch.
    expect(await fetches()).toBe(before + 1);
  });
});

describe("protected resource metadata", () => {
  it("names the authorization server and each route's resource", async () => {
    const root = (await (await gatewayFetch("/.well-known/oauth-protected-resource/mcp", {}, VARS)).json()) as Json;
    expect(root).toMatchObject({ resource: AUDIENCE, authorization_servers: [ISSUER] });
    const alpha = (await (
      await gatewayFetch("/.well-known/oauth-protected-resource/mcp/alpha", {}, VARS)
    ).json()) as Json;
    expect(alpha.resource).toBe(ALPHA_AUDIENCE);
  });
});
