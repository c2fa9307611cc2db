/**
 * Clients sign in (AUTH.signIn): the gateway as an OAuth authorization server, its users
 * logging in at the operator's OpenID Connect provider (a real oidc-provider on loopback,
 * test/fixtures/operator-idp.ts). An MCP client registers, sends a person's browser through
 * the provider's login and the gateway's consent page, exchanges the code with PKCE and
 * calls /mcp as that person, with the persona the provider's groups give; API keys keep
 * working beside it.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, makeKey } from "../helpers/auth";
import { gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";
import {
  authorizeUrl,
  CLIENT_REDIRECT,
  GATEWAY,
  pkcePair,
  registerClient,
  signedInToken,
  signInVars,
  SignInUser,
  tokenEndpoint,
} from "../helpers/client-sign-in";

const alphaUrl = inject("fixtureUrls").alpha;
const UPSTREAMS = JSON.stringify([
  { name: "alpha", url: alphaUrl, identity: { header: "X-MCP-Identity" } },
  { name: "beta", url: inject("fixtureUrls").beta },
]);
let vars: Json;

async function signingKey(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return JSON.stringify({
    ...((await crypto.subtle.exportKey("jwk", pair.privateKey)) as object),
    kid: "sign-in-test",
  });
}

beforeAll(async () => {
  vars = signInVars({}, { UPSTREAMS, IDENTITY_SIGNING_KEY: await signingKey() });
  expect(
    (
      await admin(
        "PUT",
        "/personas/signed-in-users",
        { roles: ["gateway-users"], allow: ["alpha___whoami", "alpha___echo"] },
        vars,
      )
    ).status,
  ).toBe(200);
  expect(
    (
      await admin(
        "PUT",
        "/personas/signed-in-admins",
        { roles: ["gateway-admins"], allow: ["alpha___*", "beta___*"] },
        vars,
      )
    ).status,
  ).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/signed-in-users", undefined, vars);
  await admin("DELETE", "/personas/signed-in-admins", undefined, vars);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** The upstreams' tools listed (the gateway's own sys___ tools aside). */
const toolNames = (listed: Json): string[] =>
  listed.result.tools
    .map((tool: Json) => tool.name)
    .filter((name: string) => !name.startsWith("sys___"))
    .sort();

describe("client sign-in: metadata", () => {
  it("serves RFC 8414 metadata: public clients, S256 only, registration", async () => {
    const response = await gatewayFetch(`${GATEWAY}/.well-known/oauth-authorization-server`, {}, vars);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Json;
    expect(metadata).toMatchObject({
      issuer: GATEWAY,
      authorization_endpoint: `${GATEWAY}/oauth/authorize`,
      token_endpoint: `${GATEWAY}/oauth/token`,
      registration_endpoint: `${GATEWAY}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(metadata.token_endpoint_auth_methods_supported).toContain("none");
  });

  it.each([["/mcp"], ["/mcp/alpha"]])("names the gateway as the authorization server of %s", async (path) => {
    const metadata = (await (
      await gatewayFetch(`${GATEWAY}/.well-known/oauth-protected-resource${path}`, {}, vars)
    ).json()) as Json;
    expect(metadata).toMatchObject({ resource: `${GATEWAY}${path}`, authorization_servers: [GATEWAY] });
  });

  it("is off by default: no authorization server metadata, none named", async () => {
    const off = { AUTH: JSON.stringify({ apiKeys: true }) };
    expect((await gatewayFetch(`${GATEWAY}/.well-known/oauth-authorization-server`, {}, off)).status).toBe(404);
    const metadata = (await (
      await gatewayFetch(`${GATEWAY}/.well-known/oauth-protected-resource/mcp`, {}, off)
    ).json()) as Json;
    expect(metadata.authorization_servers).toBeUndefined();
  });

  it("tells a client without credentials to sign in here, not that the gateway signs no one in", async () => {
    const refused = await gatewayFetch(`${GATEWAY}/mcp`, { method: "POST", body: "{}" }, vars);
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain("/.well-known/oauth-protected-resource/mcp");
    expect(challenge).not.toContain("does not sign clients in");
    const register = await gatewayFetch(`${GATEWAY}/register`, { method: "POST", body: "{}" }, vars);
    expect(register.status).toBe(404);
    const said = await register.text();
    expect(said).toContain("/.well-known/oauth-authorization-server");
    expect(said).not.toContain("is not an OAuth authorization server");
  });
});

describe("client sign-in: the whole flow", () => {
  it("ends with a token that lists and calls tools as the signed-in user, with the user's persona", async () => {
    const { access_token: token } = await signedInToken(vars, "ada");
    const { session } = await initialize(`${GATEWAY}/mcp`, { vars, headers: bearer(token) });
    const listed = await request(`${GATEWAY}/mcp`, session, "tools/list", {}, { vars, headers: bearer(token) });
    expect(toolNames(listed)).toEqual(["alpha___echo", "alpha___whoami"]);
    const called = await request(
      `${GATEWAY}/mcp`,
      session,
      "tools/call",
      { name: "alpha___whoami", arguments: {} },
      { vars, headers: bearer(token) },
    );
    const seen = JSON.parse(called.result.content[0].text);
    expect(seen.authorization).toBeUndefined();
    expect(decodeJwt(seen["x-mcp-identity"])).toMatchObject({
      sub: "ada",
      email: "ada@example.test",
      roles: ["gateway-users"],
      persona: "signed-in-users",
    });
  });

  it("gives each user the roles of their groups", async () => {
    const { access_token: token } = await signedInToken(vars, "admin-grace");
    const { session } = await initialize(`${GATEWAY}/mcp`, { vars, headers: bearer(token) });
    const listed = await request(`${GATEWAY}/mcp`, session, "tools/list", {}, { vars, headers: bearer(token) });
    expect(listed.result.tools.some((tool: Json) => tool.name.startsWith("beta___"))).toBe(true);
  });

  it("keeps API keys working beside it", async () => {
    const { headers } = await makeKey({ principal: "key-user", roles: ["gateway-users"] }, vars);
    const { session } = await initialize(`${GATEWAY}/mcp`, { vars, headers });
    const listed = await request(`${GATEWAY}/mcp`, session, "tools/list", {}, { vars, headers });
    expect(toolNames(listed)).toEqual(["alpha___echo", "alpha___whoami"]);
  });

  it("shows the consent page before any code, and Deny answers access_denied", async () => {
    const clientId = await registerClient(vars, [CLIENT_REDIRECT], "Denied app");
    const { challenge } = await pkcePair();
    const end = await new SignInUser(vars, "ada", "deny").walk(authorizeUrl({ clientId, challenge }));
    expect(end.redirect?.searchParams.get("error")).toBe("access_denied");
    expect(end.redirect?.searchParams.get("code")).toBeNull();
    expect(end.redirect?.searchParams.get("state")).toBe("client-state-1");
  });

  it("shows a client's name and redirect host escaped, their invisible characters as code points", async () => {
    const name = '<img src=x onerror="alert(1)">Trusted\u202Eppa\u200B';
    const clientId = await registerClient(vars, [CLIENT_REDIRECT], name);
    const { challenge } = await pkcePair();
    const end = await new SignInUser(vars, "ada", "look").walk(authorizeUrl({ clientId, challenge }));
    expect(end.page?.status).toBe(200);
    const page = end.page!.text;
    const shownName = /<span data-client-name>(.*?)<\/span>/s.exec(page)![1]!;
    expect(shownName).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Trusted");
    expect(shownName).toContain("[U+202E]");
    expect(shownName).toContain("[U+200B]");
    // Nothing of the name is markup, and nothing is invisible: the only tags are the page's own code marks.
    expect(shownName.replaceAll(/<code>\[U\+[0-9A-F]+\]<\/code>/g, "")).not.toMatch(/[<>\u202E\u200B]/);
    expect(page).toContain("<strong data-redirect-host>127.0.0.1</strong>");
    expect(page).toContain("This sends access to an app on your computer");
    expect(page).toContain("ada@example.test");
  });

  it("a refreshed token is still the user's; a revoked one opens nothing", async () => {
    const { refresh_token: refresh, clientId } = await signedInToken(vars, "ada");
    const refreshed = await tokenEndpoint(vars, {
      grant_type: "refresh_token",
      refresh_token: refresh!,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    const { access_token: token } = (await refreshed.json()) as { access_token: string };
    const home = (await (await gatewayFetch(`${GATEWAY}/`, { headers: bearer(token) }, vars)).json()) as Json;
    expect(home.upstreams).toEqual(["alpha"]);
    // The user's own upstream connections are theirs to list with the same token.
    const connections = await gatewayFetch(`${GATEWAY}/oauth/upstream/connections`, { headers: bearer(token) }, vars);
    expect(connections.status).toBe(200);
    expect(((await connections.json()) as Json).connections).toEqual([]);
    const revoked = await tokenEndpoint(vars, { token, client_id: clientId });
    expect(revoked.status).toBe(200);
    const after = await post(
      `${GATEWAY}/mcp`,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { vars, headers: bearer(token) },
    );
    expect(after.status).toBe(401);
  });
});
