/**
 * Cloudflare Access in front of the console (CONSOLE_ACCESS): every console request must
 * carry a `Cf-Access-Jwt-Assertion` signed by the team's keys (a JWKS on loopback here)
 * for the configured audience; a bad CONSOLE_ACCESS closes the console.
 */
import { importJWK, SignJWT, type JWTPayload } from "jose";
import { describe, expect, inject, it } from "vitest";
import { consoleGet } from "../helpers/console";

const jwks = inject("jwks");
const TEAM = "https://team.cloudflareaccess.test";
const AUDIENCE = "console-aud-tag";
const ACCESS = { CONSOLE_ACCESS: JSON.stringify({ teamDomain: TEAM, audience: AUDIENCE, certsUrl: jwks.url }) };
const now = () => Math.floor(Date.now() / 1000);

async function accessToken(overrides: JWTPayload = {}): Promise<string> {
  const key = jwks.keys.rsa;
  const payload = {
    iss: TEAM,
    aud: [AUDIENCE],
    sub: "access-user-1",
    email: "ops@example.com",
    iat: now(),
    exp: now() + 300,
    ...overrides,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg!, kid: key.kid! }).sign(await importJWK(key, key.alg!));
}

function get(token: string | undefined, vars: Record<string, unknown> = ACCESS): Promise<Response> {
  return consoleGet("/sign-in", undefined, vars, token ? { "cf-access-jwt-assertion": token } : {});
}

describe("the console behind Cloudflare Access", () => {
  it("opens with a token the team's keys verify for the audience", async () => {
    const response = await get(await accessToken());
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("Admin token");
  });

  it.each([
    ["no token", async () => undefined, "did not come through it"],
    ["a token for another audience", () => accessToken({ aud: ["another-app"] }), "(audience)"],
    ["a token from another issuer", () => accessToken({ iss: "https://other.cloudflareaccess.test" }), "(issuer)"],
    ["an expired token", () => accessToken({ exp: now() - 120 }), "(expired)"],
    ["a token that is not a JWT", async () => "not-a-jwt", "(malformed)"],
  ])("refuses %s", async (_, token, reason) => {
    const response = await get(await token());
    expect(response.status).toBe(403);
    expect(await response.text()).toContain(reason);
  });

  it("stays closed while CONSOLE_ACCESS does not parse", async () => {
    const response = await get(await accessToken(), { CONSOLE_ACCESS: '{"teamDomain": "team"}' });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("CONSOLE_ACCESS must be");
  });

  it("is not asked for while CONSOLE_ACCESS is unset", async () => {
    expect((await get(undefined, {})).status).toBe(200);
  });
});
