/**
 * Remembered consent: a user who allowed a client is not asked again for the same client
 * and the same or a narrower request while the grant lives; a wider request (another
 * resource, more scopes), another client, another redirect URI or a revoked grant asks
 * again. Each user logs in afresh at the real OpenID Connect provider (a new browser), so
 * the memory is the gateway's, not a cookie's.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../helpers/auth";
import { gatewayFetch, type Json, type Vars } from "../helpers/gateway";
import { readAudit } from "../helpers/audit";
import {
  authorizeUrl,
  CLIENT_REDIRECT,
  GATEWAY,
  pkcePair,
  registerClient,
  SignInUser,
  signInVars,
  tokenRequest,
  type AuthorizeParams,
} from "../helpers/client-sign-in";

const label = crypto.randomUUID().slice(0, 8);
const OTHER_REDIRECT = "http://127.0.0.1:33419/callback";
const UPSTREAMS = JSON.stringify([{ name: "alpha", url: inject("fixtureUrls").alpha }]);
let vars: Vars;

beforeAll(async () => {
  const base = signInVars({}, { UPSTREAMS });
  vars = {
    ...base,
    AUTH: JSON.stringify({ ...JSON.parse(base["AUTH"] as string), scopes: ["tools:read", "tools:call"] }),
  };
  expect(
    (await admin("PUT", "/personas/signed-in-users", { roles: ["gateway-users"], allow: ["*"] }, vars)).status,
  ).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/signed-in-users", undefined, vars);
});

type Ask = Omit<AuthorizeParams, "challenge"> & { scope?: string };

/** Walks a fresh browser of `user` through an authorization request; what it ended on. */
async function ask(user: string, params: Ask): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = await pkcePair();
  const url = new URL(authorizeUrl({ ...params, challenge }));
  if (params.scope !== undefined) url.searchParams.set("scope", params.scope);
  const end = await new SignInUser(vars, user, "allow").walk(url.href, params.redirectUri ?? CLIENT_REDIRECT);
  const code = end.redirect?.searchParams.get("code") ?? undefined;
  if (!code) throw new Error(`no code: ${JSON.stringify(end.page ?? end.redirect?.href)}`);
  return { code, verifier };
}

/** Walks a fresh browser of `user` that stops on the consent page if there is one: true when it was shown. */
async function isAsked(user: string, params: Ask): Promise<boolean> {
  const { challenge } = await pkcePair();
  const url = new URL(authorizeUrl({ ...params, challenge }));
  if (params.scope !== undefined) url.searchParams.set("scope", params.scope);
  const end = await new SignInUser(vars, user, "look").walk(url.href, params.redirectUri ?? CLIENT_REDIRECT);
  if (end.page) {
    expect(end.page.text).toContain("data-consent");
    return true;
  }
  expect(end.redirect?.searchParams.get("code")).toBeTruthy();
  return false;
}

const alpha = `${GATEWAY}/mcp/alpha`;
const aggregated = `${GATEWAY}/mcp`;

describe("remembered consent", () => {
  it("does not ask again for the same client and request, and the code it gives works", async () => {
    const user = `ann-${label}`;
    const clientId = await registerClient(vars);
    expect(await isAsked(user, { clientId })).toBe(true);
    await ask(user, { clientId });
    expect(await isAsked(user, { clientId })).toBe(false);
    const { code, verifier } = await ask(user, { clientId });
    const token = await tokenRequest(vars, {
      client_id: clientId,
      code,
      code_verifier: verifier,
      resource: aggregated,
    });
    expect(token.status).toBe(200);
  });

  it.each([
    [
      "a narrower resource (/mcp/alpha under /mcp) is not asked again",
      { resource: aggregated, scope: "tools:read tools:call" },
      { resource: alpha, scope: "tools:read" },
      false,
    ],
    ["fewer scopes are not asked again", { scope: "tools:read tools:call" }, { scope: "tools:call" }, false],
    ["a wider resource (/mcp over /mcp/alpha) is asked again", { resource: alpha }, { resource: aggregated }, true],
    ["more scopes are asked again", { scope: "tools:read" }, { scope: "tools:read tools:call" }, true],
    ["another redirect URI of the same client is asked again", {}, { redirectUri: OTHER_REDIRECT }, true],
  ])("%s", async (_name, first: Partial<Ask>, then: Partial<Ask>, asked) => {
    const user = `bo-${label}-${crypto.randomUUID().slice(0, 4)}`;
    const clientId = await registerClient(vars, [CLIENT_REDIRECT, OTHER_REDIRECT]);
    await ask(user, { clientId, ...first });
    expect(await isAsked(user, { clientId, ...then })).toBe(asked);
  });

  it("asks again for another client, and for another user of the same client", async () => {
    const user = `cal-${label}`;
    const clientId = await registerClient(vars);
    await ask(user, { clientId });
    expect(await isAsked(user, { clientId: await registerClient(vars) })).toBe(true);
    expect(await isAsked(`dee-${label}`, { clientId })).toBe(true);
  });

  it("asks again once the grant is revoked", async () => {
    const user = `eli-${label}`;
    const clientId = await registerClient(vars);
    const { code, verifier } = await ask(user, { clientId });
    const { access_token: token } = (await (
      await tokenRequest(vars, { client_id: clientId, code, code_verifier: verifier, resource: aggregated })
    ).json()) as Json;
    const { grants } = (await (
      await gatewayFetch(`${GATEWAY}/oauth/grants`, { headers: { authorization: `Bearer ${token}` } }, vars)
    ).json()) as Json;
    const revoked = await gatewayFetch(
      `${GATEWAY}/oauth/grants?grant=${grants[0].id}`,
      { method: "DELETE", headers: { authorization: `Bearer ${token}` } },
      vars,
    );
    expect(revoked.status).toBe(200);
    expect(await isAsked(user, { clientId })).toBe(true);
  });

  it("records a remembered grant as such", async () => {
    const user = `fox-${label}`;
    const clientId = await registerClient(vars);
    await ask(user, { clientId });
    expect(await isAsked(user, { clientId })).toBe(false);
    const deadline = Date.now() + 15_000;
    let grants: Json[] = [];
    while (grants.length < 2 && Date.now() < deadline) {
      grants = (await readAudit(`user=${user}`)).events.filter((e) => e["mcp.method.name"] === "(client-grant)");
      if (grants.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(grants.map((e) => e["gateway.error.message"]).sort()).toEqual(["by consent", "by remembered consent"]);
  });
});
