/**
 * Grants of client sign-in as people see them: a user lists and revokes the clients they
 * allowed (GET/DELETE /oauth/grants with a token the gateway gave them), an operator lists
 * and revokes anyone's (/admin/client-grants); a revoked grant's access and refresh tokens
 * stop working at once; grants, tokens, refreshes and revocations are audit events that
 * carry no token. The users log in at a real OpenID Connect provider (oidc-provider).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, ADMIN_TOKEN, makeKey } from "../helpers/auth";
import { readAudit } from "../helpers/audit";
import { gatewayFetch, post, type Json } from "../helpers/gateway";
import {
  authorizeUrl,
  GATEWAY,
  pkcePair,
  registerClient,
  signedInToken,
  SignInUser,
  signInVars,
  tokenEndpoint,
  tokenRequest,
} from "../helpers/client-sign-in";
import { formInit, signIn } from "../helpers/console";
import { TEST_ADMIN_TOKEN } from "../helpers/admin";

const label = crypto.randomUUID().slice(0, 8);
let vars: Json;

beforeAll(async () => {
  vars = signInVars();
  expect(
    (await admin("PUT", "/personas/signed-in-users", { roles: ["gateway-users"], allow: ["*"] }, vars)).status,
  ).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/signed-in-users", undefined, vars);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const grantsOf = async (token: string) => gatewayFetch(`${GATEWAY}/oauth/grants`, { headers: bearer(token) }, vars);
const revokeOwn = (token: string, grant: string) =>
  gatewayFetch(
    `${GATEWAY}/oauth/grants?grant=${encodeURIComponent(grant)}`,
    { method: "DELETE", headers: bearer(token) },
    vars,
  );
/** An initialize on /mcp with `token`: 200 while the token opens the gateway, 401 once it does not. */
const listTools = (token: string) => post(`${GATEWAY}/mcp`, INITIALIZE, { vars, headers: bearer(token) });
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "grants-test", version: "1" } },
};
/** The admin API at the gateway's https origin (the authorization server's issuer is the request's origin). */
const adminAt = (method: string, path: string, more: Json = {}) =>
  gatewayFetch(
    `${GATEWAY}/admin${path}`,
    { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    { ...vars, ...more },
  );
const refresh = (refreshToken: string, clientId: string) =>
  tokenEndpoint(vars, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });

/** Asserts `text` holds no part of `tokens` (each token's secret part is its last `:` field). */
function expectNoToken(text: string, tokens: readonly string[]): void {
  for (const token of tokens) {
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split(":").at(-1)!);
  }
}

describe("a user's own grants", () => {
  it("lists the clients the user allowed, with no token in the answer", async () => {
    const user = `ada-${label}`;
    const first = await signedInToken(vars, user);
    const second = await signedInToken(vars, user);
    const response = await grantsOf(first.access_token);
    expect(response.status).toBe(200);
    const text = await response.text();
    const { grants } = JSON.parse(text) as Json;
    expect(grants.map((g: Json) => g.clientId).sort()).toEqual([first.clientId, second.clientId].sort());
    expect(grants[0]).toMatchObject({
      clientName: "Test client",
      email: `${user}@example.test`,
      principal: user,
      resource: [`${GATEWAY}/mcp`],
    });
    expect(Object.keys(grants[0]).sort()).toEqual([
      "clientId",
      "clientName",
      "createdAt",
      "email",
      "expiresAt",
      "id",
      "principal",
      "redirectUri",
      "resource",
      "scope",
    ]);
    expectNoToken(text, [first.access_token, first.refresh_token!, second.access_token, second.refresh_token!]);
  });

  it("revoking one ends its client's access and refresh tokens at once, and leaves the others", async () => {
    const user = `bea-${label}`;
    const kept = await signedInToken(vars, user);
    const ended = await signedInToken(vars, user);
    expect((await listTools(ended.access_token)).status).toBe(200);
    const { grants } = (await (await grantsOf(kept.access_token)).json()) as Json;
    const grant = grants.find((g: Json) => g.clientId === ended.clientId);
    const revoked = await revokeOwn(kept.access_token, grant.id);
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as Json).revoked.id).toBe(grant.id);
    expect((await listTools(ended.access_token)).status).toBe(401);
    const refused = await refresh(ended.refresh_token!, ended.clientId);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Json).error).toBe("invalid_grant");
    expect((await listTools(kept.access_token)).status).toBe(200);
    expect((await refresh(kept.refresh_token!, kept.clientId)).status).toBe(200);
    expect((await revokeOwn(kept.access_token, grant.id)).status).toBe(404);
  });

  it("another user cannot see or revoke them", async () => {
    const owner = await signedInToken(vars, `cy-${label}`);
    const other = await signedInToken(vars, `dot-${label}`);
    const { grants } = (await (await grantsOf(owner.access_token)).json()) as Json;
    const seen = (await (await grantsOf(other.access_token)).json()) as Json;
    expect(seen.grants.map((g: Json) => g.id)).not.toContain(grants[0].id);
    expect((await revokeOwn(other.access_token, grants[0].id)).status).toBe(404);
    expect((await listTools(owner.access_token)).status).toBe(200);
  });

  it.each([
    ["no credentials", undefined, 401],
    ["a token the gateway never issued", "u:g:not-a-secret", 401],
  ])("refuses %s", async (_name, token, status) => {
    const response = await gatewayFetch(`${GATEWAY}/oauth/grants`, { headers: token ? bearer(token) : {} }, vars);
    expect(response.status).toBe(status);
    expect(response.headers.get("www-authenticate")).toContain("/.well-known/oauth-protected-resource/mcp");
  });

  it("tells an API key caller that grants belong to signed-in users", async () => {
    const { headers } = await makeKey({ principal: `key-${label}`, roles: ["gateway-users"] }, vars);
    const response = await gatewayFetch(`${GATEWAY}/oauth/grants`, { headers }, vars);
    expect(response.status).toBe(403);
    expect(((await response.json()) as Json).error).toContain("signed in through the gateway");
  });
});

describe("an operator's view of grants", () => {
  it("lists every user's grants and revokes one, which ends the client's tokens", async () => {
    const user = `eve-${label}`;
    const held = await signedInToken(vars, user);
    const answer = await adminAt("GET", "/client-grants");
    const all = (await answer.json()) as Json;
    expect(answer.status, JSON.stringify(all)).toBe(200);
    const listed = all.users.find((u: Json) => u.principal === user);
    expect(listed).toMatchObject({ email: `${user}@example.test` });
    expect(listed.grants[0].clientId).toBe(held.clientId);
    const one = (await (await adminAt("GET", `/client-grants?principal=${user}`)).json()) as Json;
    expect(one.users[0].grants.map((g: Json) => g.id)).toEqual([listed.grants[0].id]);
    expect((await adminAt("DELETE", `/client-grants?principal=${user}`)).status).toBe(400);
    const deleted = await adminAt("DELETE", `/client-grants?principal=${user}&grant=${listed.grants[0].id}`);
    expect(deleted.status).toBe(200);
    expect((await listTools(held.access_token)).status).toBe(401);
    expect((await refresh(held.refresh_token!, held.clientId)).status).toBe(400);
    expect((await adminAt("DELETE", `/client-grants?principal=${user}&grant=${listed.grants[0].id}`)).status).toBe(404);
  });

  it("says sign-in is off when it is", async () => {
    const response = await adminAt("GET", "/client-grants", { AUTH: JSON.stringify({ apiKeys: true }) });
    expect(response.status).toBe(404);
    expect(((await response.json()) as Json).error).toContain("AUTH.signIn");
  });
});

describe("the console's page of client grants", () => {
  it("lists grants with the client's name escaped and revokes one", async () => {
    const user = `gus-${label}`;
    const name = '<img src=x onerror="alert(1)">Mail\u202Eppa';
    const clientId = await registerClient(vars, undefined, name);
    const { verifier, challenge } = await pkcePair();
    const end = await new SignInUser(vars, user).walk(authorizeUrl({ clientId, challenge }));
    const code = end.redirect!.searchParams.get("code")!;
    const { access_token: token } = (await (
      await tokenRequest(vars, { client_id: clientId, code, code_verifier: verifier, resource: `${GATEWAY}/mcp` })
    ).json()) as Json;
    const consoleVars = { ...vars, ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    const session = await signIn(consoleVars, GATEWAY);
    const page = await gatewayFetch(
      `${GATEWAY}/admin/console/client-grants`,
      { headers: { cookie: session.cookie } },
      consoleVars,
    );
    expect(page.status).toBe(200);
    const html = await page.text();
    const row = new RegExp(
      `<tr data-grant-id="([\\w-]+)">((?:(?!</tr>).)*${user}@example\\.test(?:(?!</tr>).)*)</tr>`,
      "s",
    ).exec(html);
    expect(row, html).not.toBeNull();
    expect(row![2]).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Mail");
    expect(row![2]).toContain("U+202E");
    expect(row![2]).not.toContain("\u202E");
    expect(row![2]).not.toContain("<img");
    const action = `/admin/console/client-grants/revoke?principal=${user}&grant=${row![1]}`;
    const revoked = await gatewayFetch(
      `${GATEWAY}${action}`,
      formInit({ csrf: session.csrf }, session.cookie, GATEWAY),
      consoleVars,
    );
    expect(revoked.status).toBe(303);
    expect((await listTools(token)).status).toBe(401);
  });
});

describe("the console's role mapping", () => {
  it("saves a valid mapping and shows a refused one with its problems, storing nothing", async () => {
    const consoleVars = { ...vars, ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    const session = await signIn(consoleVars, GATEWAY);
    const save = (document: string) =>
      gatewayFetch(
        `${GATEWAY}/admin/console/client-grants/roles`,
        formInit({ csrf: session.csrf, document, etag: "" }, session.cookie, GATEWAY),
        consoleVars,
      );
    const saved = await save('{"rules": [{"emailDomain": "example.test", "roles": ["console-mapped"]}]}');
    expect(saved.status).toBe(303);
    const stored = await adminAt("GET", "/sign-in-roles");
    expect(await stored.json()).toEqual({ rules: [{ emailDomain: "example.test", roles: ["console-mapped"] }] });
    const refused = await save('{"rules": [{"group": "g"}]}');
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain("/rules/0/roles");
    expect(await (await adminAt("GET", "/sign-in-roles")).json()).toEqual({
      rules: [{ emailDomain: "example.test", roles: ["console-mapped"] }],
    });
    expect((await adminAt("DELETE", "/sign-in-roles")).status).toBe(200);
  });
});

describe("audit events of grants", () => {
  it("records the grant, its tokens, a refresh and the revocation, never a token", async () => {
    const user = `fay-${label}`;
    const held = await signedInToken(vars, user);
    const refreshed = (await (await refresh(held.refresh_token!, held.clientId)).json()) as Json;
    const { grants } = (await (await grantsOf(refreshed.access_token)).json()) as Json;
    expect((await revokeOwn(refreshed.access_token, grants[0].id)).status).toBe(200);
    expect((await refresh(refreshed.refresh_token, held.clientId)).status).toBe(400);
    const methods = [
      "(client-grant)",
      "(client-grant-revoke)",
      "(client-refresh-failed)",
      "(client-token)",
      "(client-token-refresh)",
    ];
    const events = await clientEventsOf(user, methods.length);
    expect(events.map((e) => e["mcp.method.name"]).sort()).toEqual(methods);
    expect(events.every((e) => e["gateway.oauth.client_id"] === held.clientId)).toBe(true);
    expect(events.find((e) => e["mcp.method.name"] === "(client-grant-revoke)")).toMatchObject({
      "gateway.oauth.grant_id": grants[0].id,
      "gateway.error.message": "by user",
    });
    const failed = events.find((e) => e["mcp.method.name"] === "(client-refresh-failed)");
    expect(failed).toMatchObject({
      "gateway.oauth.grant_id": grants[0].id,
      "error.type": "invalid_grant",
      "gateway.outcome": "error",
    });
    expectNoToken(JSON.stringify(events), [
      held.access_token,
      held.refresh_token!,
      refreshed.access_token,
      refreshed.refresh_token,
    ]);
  });

  it("refuses a token request larger than a token request can be, before the library reads it", async () => {
    const response = await tokenEndpoint(vars, { grant_type: "refresh_token", refresh_token: "x".repeat(70 * 1024) });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Json).error).toBe("invalid_request");
  });
});

/**
 * The client sign-in audit events of `principal` once at least `count` are written (the Worker's own consumer writes
 * them).
 */
async function clientEventsOf(principal: string, count: number): Promise<Json[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { events } = await readAudit(`user=${encodeURIComponent(principal)}`);
    const ours = events.filter((e) => String(e["mcp.method.name"]).startsWith("(client-"));
    if (ours.length >= count || Date.now() > deadline) return ours;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
