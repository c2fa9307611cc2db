/**
 * Client ID Metadata Documents at http loopback URLs (features/client-sign-in/loopback-client.ts):
 * taken while the gateway runs locally (its origin on loopback, as under `npm start`), refused
 * deployed without being fetched. The documents are served on loopback by
 * test/fixtures/client-metadata-server.ts, changed between the steps of a sign-in: a redirect
 * URI the document does not list never gets a code, and a document that drops the code's
 * redirect URI (or disappears) before the token request gets no token.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../helpers/auth";
import { gatewayFetch, initialize, post, type Json, type Vars } from "../helpers/gateway";
import { authorizeUrl, CLIENT_REDIRECT, GATEWAY, pkcePair, SignInUser, signInVars } from "../helpers/client-sign-in";
import { ClientSignInBrowser, type WalkEnd } from "../helpers/node/client-sign-in-browser";

/** The gateway as `npm start` serves it: http on loopback (the operator's provider takes this callback too). */
const LOCAL = "http://127.0.0.1:8787";
const DOCUMENTS = inject("clientMetadataServer");
/** Another path: a loopback redirect URI's port may vary (RFC 8252 §7.3), its path may not. */
const OTHER_REDIRECT = "http://127.0.0.1:33418/other-callback";
const UPSTREAMS = JSON.stringify([{ name: "alpha", url: inject("fixtureUrls").alpha }]);
let vars: Vars;

beforeAll(async () => {
  vars = signInVars({}, { UPSTREAMS });
  const persona = { roles: ["gateway-users"], allow: ["alpha___*"] };
  expect((await admin("PUT", "/personas/loopback-cimd-users", persona, vars)).status).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/loopback-cimd-users", undefined, vars);
});

/** Serves a client's document at a fresh URL; its client id (the URL) and a way to change it. */
async function servedClient(redirectUris = [CLIENT_REDIRECT]) {
  const clientId = `${DOCUMENTS}/clients/${crypto.randomUUID()}`;
  const write = async (document: Json | undefined) => {
    const init = document === undefined ? { method: "DELETE" } : { method: "PUT", body: JSON.stringify(document) };
    expect((await fetch(clientId, init)).ok).toBe(true);
  };
  await write({ client_id: clientId, client_name: "Local dev client", redirect_uris: redirectUris });
  const fetches = async () =>
    ((await (await fetch(clientId.replace("/clients/", "/count/"))).json()) as { fetches: number }).fetches;
  return { clientId, write, fetches };
}

/** A person's browser reaching the gateway at `origin` (in workerd) and everything else over the network. */
function browserAt(origin: string, user: string): ClientSignInBrowser {
  if (origin === GATEWAY) return new SignInUser(vars, user);
  return new ClientSignInBrowser(user, "allow", (href, init) =>
    new URL(href).origin === origin
      ? gatewayFetch(href, { ...init, redirect: "manual" }, vars, undefined, true)
      : fetch(href, { ...init, redirect: "manual" }),
  );
}

async function signIn(origin: string, clientId: string, redirectUri = CLIENT_REDIRECT) {
  const { verifier, challenge } = await pkcePair();
  const url = authorizeUrl({ clientId, challenge, redirectUri, resource: `${origin}/mcp` }).replace(GATEWAY, origin);
  const end: WalkEnd = await browserAt(origin, "ada").walk(url, redirectUri);
  return { end, verifier, code: end.redirect?.searchParams.get("code") ?? undefined };
}

function exchange(clientId: string, code: string, verifier: string, redirectUri = CLIENT_REDIRECT) {
  const fields = { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier };
  const body = new URLSearchParams({ ...fields, redirect_uri: redirectUri, resource: `${LOCAL}/mcp` }).toString();
  const headers = { "content-type": "application/x-www-form-urlencoded" };
  return gatewayFetch(`${LOCAL}/oauth/token`, { method: "POST", headers, body }, vars);
}

describe("an http client id on loopback, with the gateway running locally", () => {
  it("signs the person in: the consent page names the document's client, the token lists tools", async () => {
    const client = await servedClient();
    const { challenge } = await pkcePair();
    const url = authorizeUrl({ clientId: client.clientId, challenge, resource: `${LOCAL}/mcp` }).replace(
      GATEWAY,
      LOCAL,
    );
    const looked = await new ClientSignInBrowser("ada", "look", (href, init) =>
      href.startsWith(LOCAL)
        ? gatewayFetch(href, { ...init, redirect: "manual" }, vars, undefined, true)
        : fetch(href, { ...init, redirect: "manual" }),
    ).walk(url, CLIENT_REDIRECT);
    expect(looked.page?.text).toContain("Local dev client");

    const { code, verifier } = await signIn(LOCAL, client.clientId);
    expect(code).toBeTruthy();
    const token = await exchange(client.clientId, code!, verifier);
    expect(token.status).toBe(200);
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${accessToken}` };
    const { session } = await initialize(`${LOCAL}/mcp`, { vars, headers });
    const listed = await post(
      `${LOCAL}/mcp`,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { vars, headers, session },
    );
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain("alpha___");
  });

  it("a redirect URI the document does not list: an error page, never a redirect there", async () => {
    const client = await servedClient();
    const { end } = await signIn(LOCAL, client.clientId, OTHER_REDIRECT);
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(400);
    expect(end.page?.url).toContain(`${LOCAL}/oauth/authorize`);
  });

  it("a document that drops the code's redirect URI before the token request: no token", async () => {
    const client = await servedClient();
    const { code, verifier } = await signIn(LOCAL, client.clientId);
    expect(code).toBeTruthy();
    await client.write({
      client_id: client.clientId,
      client_name: "Local dev client",
      redirect_uris: [OTHER_REDIRECT],
    });
    const refused = await exchange(client.clientId, code!, verifier);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Json).error).toBe("invalid_grant");
  });

  it("a document gone before the token request: no token", async () => {
    const client = await servedClient();
    const { code, verifier } = await signIn(LOCAL, client.clientId);
    expect(code).toBeTruthy();
    await client.write(undefined);
    const refused = await exchange(client.clientId, code!, verifier);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as Json).error).toBe("invalid_client");
  });

  it.each([
    [
      "a client_id that is not its URL",
      (id: string) => ({ client_id: `${id}-other`, redirect_uris: [CLIENT_REDIRECT] }),
    ],
    ["a client secret", (id: string) => ({ client_id: id, client_secret: "s", redirect_uris: [CLIENT_REDIRECT] })],
    [
      "a redirect URI over http off loopback",
      (id: string) => ({ client_id: id, redirect_uris: ["http://app.example/cb"] }),
    ],
    ["no redirect URI", (id: string) => ({ client_id: id, redirect_uris: [] })],
  ])("a document with %s: a page saying the app is not verified", async (_label, document) => {
    const client = await servedClient();
    await client.write({ client_name: "Local dev client", ...document(client.clientId) });
    const { end } = await signIn(LOCAL, client.clientId);
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(400);
    expect(end.page?.text).toContain("App not verified");
  });
});

describe("an http client id off loopback, with the gateway running locally", () => {
  it("is refused with a page saying the app is not verified", async () => {
    const { end } = await signIn(LOCAL, "http://app.example/client.json");
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(400);
    expect(end.page?.text).toContain("App not verified");
  });
});

describe("an http client id with the gateway deployed", () => {
  it("is refused with a page saying why, and its document is never fetched", async () => {
    const client = await servedClient();
    const { end } = await signIn(GATEWAY, client.clientId);
    expect(end.redirect).toBeUndefined();
    expect(end.page?.status).toBe(400);
    expect(end.page?.text).toContain("must be served over https");
    expect(await client.fetches()).toBe(0);
    const { clientId } = client;
    const token = await gatewayFetch(
      `${GATEWAY}/oauth/token`,
      {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", client_id: clientId, code: "a:b:c" }).toString(),
      },
      vars,
    );
    expect(token.status).toBe(401);
    expect(await client.fetches()).toBe(0);
  });
});
