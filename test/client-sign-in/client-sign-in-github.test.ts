/**
 * GitHub as the identity provider of client sign-in (OAuth, not OpenID Connect): the
 * browser logs in at GitHub's web flow (a stand-in for github.com and its API on loopback,
 * test/fixtures/github-idp.ts), the gateway exchanges the code with its OAuth app's secret
 * and PKCE, asks the API who signed in (id, primary verified email, organizations) and shows
 * the consent page; the client's token then acts as that GitHub user, with the persona their
 * organization gives. An unverified email and another domain never get a code.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../helpers/auth";
import { gatewayFetch, type Json, type Vars } from "../helpers/gateway";
import { authorizeUrl, GATEWAY, pkcePair, registerClient, SignInUser, signedInToken } from "../helpers/client-sign-in";

const github = inject("githubIdp");
const label = crypto.randomUUID().slice(0, 8);
const UPSTREAMS = JSON.stringify([
  { name: "alpha", url: inject("fixtureUrls").alpha },
  { name: "beta", url: inject("fixtureUrls").beta },
]);
const SIGN_IN = {
  provider: "github",
  githubUrl: github.url,
  githubApiUrl: github.apiUrl,
  clientId: "GITHUB_CLIENT_ID",
  clientSecret: "GITHUB_CLIENT_SECRET",
  allowedDomains: ["example.test"],
  rolesClaim: "orgs",
};
let vars: Vars;

beforeAll(async () => {
  vars = {
    AUTH: JSON.stringify({ apiKeys: true, signIn: SIGN_IN }),
    GITHUB_CLIENT_ID: github.clientId,
    GITHUB_CLIENT_SECRET: github.clientSecret,
    UPSTREAMS,
    ADMIN_TOKEN: "admin-token-for-auth-tests-0123456789",
    FILTER_CACHE_TTL_MS: "0",
  };
  // The whole personas document: other files share this KV, and their personas for the same roles would add theirs.
  const personas = {
    "github-users": { roles: ["gateway-users"], allow: ["alpha___*"] },
    "github-admins": { roles: ["gateway-admins"], allow: ["alpha___*", "beta___*"] },
  };
  expect((await admin("PUT", "/personas", { personas }, vars)).status).toBe(200);
});
afterAll(async () => {
  await admin("PUT", "/personas", { personas: {} }, vars);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("GitHub as the identity provider", () => {
  it("signs a GitHub user in, by their numeric id and verified email, with their organization's persona", async () => {
    const user = `gina-${label}`;
    const { access_token: token, clientId } = await signedInToken(vars, user);
    const { grants } = (await (
      await gatewayFetch(`${GATEWAY}/oauth/grants`, { headers: bearer(token) }, vars)
    ).json()) as Json;
    expect(grants).toEqual([expect.objectContaining({ clientId, email: `${user}@example.test` })]);
    expect(grants[0].principal).toMatch(/^github:\d+$/);
    const home = (await (await gatewayFetch(`${GATEWAY}/`, { headers: bearer(token) }, vars)).json()) as Json;
    expect(home.upstreams).toEqual(["alpha"]);
    const { access_token: adminToken } = await signedInToken(vars, `admin-${label}`);
    expect(
      ((await (await gatewayFetch(`${GATEWAY}/`, { headers: bearer(adminToken) }, vars)).json()) as Json).upstreams,
    ).toEqual(["alpha", "beta"]);
  });

  it.each([
    ["an unverified email", `unverified-${label}`, "not verified"],
    ["an email of another domain", `mallory-${label}@elsewhere.test`, "may not sign in"],
  ])("refuses %s: a page saying so, no code", async (_name, user, said) => {
    const clientId = await registerClient(vars);
    const { challenge } = await pkcePair();
    const end = await new SignInUser(vars, user).walk(authorizeUrl({ clientId, challenge }));
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(403);
    expect(end.page?.text).toContain(said);
    expect(end.page?.text).not.toMatch(/gho_/);
  });

  it("refuses the login when the OAuth app's secret is wrong, saying so without the secret", async () => {
    const wrong = { ...vars, GITHUB_CLIENT_SECRET: "not-the-app-secret-0123456789" };
    const clientId = await registerClient(wrong);
    const { challenge } = await pkcePair();
    const end = await new SignInUser(wrong, `hal-${label}`).walk(authorizeUrl({ clientId, challenge }));
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(400);
    expect(end.page?.text).toContain("answer was refused");
    expect(end.page?.text).not.toContain("not-the-app-secret");
  });

  it.each([
    [{ ...SIGN_IN, clientSecret: undefined }, "AUTH.signIn.clientSecret"],
    [{ ...SIGN_IN, rolesClaim: "groups" }, 'AUTH.signIn.rolesClaim: with GitHub, "orgs"'],
    [{ ...SIGN_IN, githubApiUrl: "http://api.example" }, "AUTH.signIn.githubApiUrl: an https URL"],
  ])("says what is wrong with a GitHub configuration (%#)", async (signIn, problem) => {
    const { parseAuthConfig } = await import("../../src/config/auth-config");
    const parsed = parseAuthConfig({ signIn });
    expect(parsed.ok ? [] : parsed.problems.join("\n")).toContain(problem);
  });
});
