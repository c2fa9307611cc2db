/**
 * Cloudflare Access as the identity provider of client sign-in: the browser reaches
 * /oauth/authorize through an Access application, with its `Cf-Access-Jwt-Assertion`, which
 * the gateway verifies against the team's JWKS (a JWKS fixture on loopback stands in for
 * `<team>.cloudflareaccess.com/cdn-cgi/access/certs`) before the consent page. A forged,
 * expired, foreign-audience or missing assertion, and a person outside the allowed
 * domains, never reach consent nor get the client a code.
 */
import { SignJWT, generateKeyPair, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../helpers/auth";
import { gatewayFetch, type Json, type Vars } from "../helpers/gateway";
import { sign } from "../helpers/jwt";
import {
  authorizeUrl,
  CLIENT_REDIRECT,
  GATEWAY,
  pkcePair,
  registerClient,
  signInVars,
  tokenRequest,
} from "../helpers/client-sign-in";

const TEAM = new URL(inject("jwks").url).origin;
const AUD = "access-app-aud-tag-0123456789";
const label = crypto.randomUUID().slice(0, 8);
let vars: Vars;

beforeAll(async () => {
  const base = signInVars();
  const signIn = {
    provider: "cloudflare-access",
    teamDomain: TEAM,
    audience: AUD,
    allowedDomains: ["example.test"],
    roles: ["gateway-users"],
  };
  vars = { ...base, AUTH: JSON.stringify({ apiKeys: true, signIn }) };
  expect(
    (await admin("PUT", "/personas/signed-in-users", { roles: ["gateway-users"], allow: ["*"] }, vars)).status,
  ).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/signed-in-users", undefined, vars);
});

const nowS = () => Math.floor(Date.now() / 1000);
const assertion = (overrides: JWTPayload = {}) =>
  sign({
    iss: TEAM,
    aud: [AUD],
    sub: `access-${label}`,
    email: `ada-${label}@example.test`,
    type: "app",
    iat: nowS(),
    exp: nowS() + 300,
    ...overrides,
  });

/** GET /oauth/authorize for a new client, as Access forwards it (with `headers`). */
async function authorize(
  headers: Record<string, string>,
): Promise<{ response: Response; clientId: string; verifier: string }> {
  const clientId = await registerClient(vars);
  const { verifier, challenge } = await pkcePair();
  const response = await gatewayFetch(authorizeUrl({ clientId, challenge }), { headers, redirect: "manual" }, vars);
  return { response, clientId, verifier };
}

describe("Cloudflare Access as the identity provider", () => {
  it("shows the consent page to the person Access vouches for, and Allow gives a working token", async () => {
    const { response, clientId, verifier } = await authorize({ "cf-access-jwt-assertion": await assertion() });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain(`ada-${label}@example.test`);
    const handle = /name="handle" value="([^"]+)"/.exec(page)![1]!;
    const user = /name="user" value="([^"]+)"/.exec(page)![1]!;
    const cookie = response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const body = new URLSearchParams({ handle, user, decision: "allow" }).toString();
    const allowed = await gatewayFetch(
      `${GATEWAY}/oauth/authorize`,
      {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin: GATEWAY, "content-type": "application/x-www-form-urlencoded" },
        body,
      },
      vars,
    );
    expect(allowed.status).toBe(302);
    const redirect = new URL(allowed.headers.get("location")!);
    expect(redirect.href.startsWith(CLIENT_REDIRECT)).toBe(true);
    const token = await tokenRequest(vars, {
      client_id: clientId,
      code: redirect.searchParams.get("code")!,
      code_verifier: verifier,
      resource: `${GATEWAY}/mcp`,
    });
    expect(token.status).toBe(200);
    const { access_token: accessToken } = (await token.json()) as Json;
    const { grants } = (await (
      await gatewayFetch(`${GATEWAY}/oauth/grants`, { headers: { authorization: `Bearer ${accessToken}` } }, vars)
    ).json()) as Json;
    expect(grants).toEqual([
      expect.objectContaining({ clientId, principal: `access-${label}`, email: `ada-${label}@example.test` }),
    ]);
  });

  it.each([
    ["no assertion (not through Access)", async () => ({}), 400],
    [
      "an expired assertion",
      async () => ({ "cf-access-jwt-assertion": await assertion({ exp: nowS() - 3600, iat: nowS() - 7200 }) }),
      400,
    ],
    [
      "another application's audience",
      async () => ({ "cf-access-jwt-assertion": await assertion({ aud: ["another-app"] }) }),
      400,
    ],
    [
      "another team's issuer",
      async () => ({ "cf-access-jwt-assertion": await assertion({ iss: "https://other.cloudflareaccess.com" }) }),
      400,
    ],
    [
      "a person outside the allowed domains",
      async () => ({ "cf-access-jwt-assertion": await assertion({ email: "mallory@elsewhere.test" }) }),
      403,
    ],
    [
      "a service token (no email)",
      async () => ({ "cf-access-jwt-assertion": await assertion({ email: undefined, sub: "" }) }),
      403,
    ],
  ])("refuses %s: no consent page, no code", async (_name, headers, status) => {
    const { response } = await authorize(await headers());
    expect(response.status).toBe(status);
    const page = await response.text();
    expect(page).not.toContain("data-consent");
    expect(response.headers.get("location")).toBeNull();
  });

  it("refuses an assertion signed by a key the team does not publish", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({
      iss: TEAM,
      aud: [AUD],
      sub: "x",
      email: `eve-${label}@example.test`,
      iat: nowS(),
      exp: nowS() + 300,
    })
      .setProtectedHeader({ alg: "RS256", kid: inject("jwks").keys.rsa.kid! })
      .sign(privateKey);
    const { response } = await authorize({ "cf-access-jwt-assertion": forged });
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain(forged);
  });

  it.each([
    [{ provider: "cloudflare-access", audience: AUD, allowedDomains: ["example.test"] }, "AUTH.signIn.teamDomain"],
    [
      {
        provider: "cloudflare-access",
        teamDomain: "http://team.example",
        audience: AUD,
        allowedDomains: ["example.test"],
      },
      "AUTH.signIn.teamDomain: an https URL",
    ],
    [{ provider: "cloudflare-access", teamDomain: TEAM, allowedDomains: ["example.test"] }, "AUTH.signIn.audience"],
    [
      { provider: "saml", issuer: "https://idp.example", clientId: "X", allowedDomains: ["example.test"] },
      "AUTH.signIn.provider",
    ],
  ])("says what is wrong with %j", async (signIn, problem) => {
    const { parseAuthConfig } = await import("../../src/config/auth-config");
    const parsed = parseAuthConfig({ signIn });
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.problems.join("\n")).toContain(problem);
  });
});
