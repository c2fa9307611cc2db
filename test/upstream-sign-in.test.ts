/**
 * Per-user sign-in to upstreams (UPSTREAMS[].auth = {"type": "oauth"}), through the Worker
 * in workerd against a real authorization server (oidc-provider: PKCE, resource
 * indicators, dynamic registration, rotation, revocation) and a real SDK upstream that
 * checks each token's signature, issuer and audience (test/fixtures/oauth-upstream.ts).
 * A scripted browser (test/helpers/sign-in.ts) opens the links the gateway hands out.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { answer, gatewayFetch, initialize, post, request, type Json, type Vars } from "./helpers/gateway";
import { readSse } from "../src/core/sse";
import { admin, authVars, makeKey } from "./helpers/auth";
import { modern } from "./helpers/modern";
import { authorizationServerStats, Browser, oauthFixture } from "./helpers/sign-in";
import { parseUpstreams } from "../src/config/upstreams";

const { origin, staticClient } = oauthFixture();
const [STATIC_CLIENT_ID, STATIC_CLIENT_SECRET] = [staticClient.id, staticClient.secret];
const label = crypto.randomUUID().slice(0, 8);
const UPSTREAMS = [
  { name: "acme", url: `${origin}/acme${label}/mcp`, auth: { type: "oauth" } },
  { name: "shorty", url: `${origin}/short${label}/mcp`, auth: { type: "oauth" } },
];
const VARS: Vars = authVars({ apiKeys: true }, { UPSTREAMS: JSON.stringify(UPSTREAMS), FILTER_CACHE_TTL_MS: "0" });
const URL_ELICITATION = { elicitation: { url: {} } };
const PERSONAS = { users: { roles: ["user"], allow: ["acme___*", "shorty___*"] } };

type Who = { principal: string; headers: Record<string, string> };
let counter = 0;

/** A caller of its own (an API key for a fresh principal with the "user" role). */
async function caller(roles = ["user"]): Promise<Who> {
  const principal = `user-${label}-${counter++}`;
  const { headers } = await makeKey({ principal, roles }, VARS);
  return { principal, headers };
}

/** A 2025 session on `path` for `who` that declared `capabilities` (none: asked by a tool error). */
async function session(who: Who, path = "/mcp", capabilities: Record<string, unknown> = {}): Promise<string> {
  return (await initialize(path, { capabilities, vars: VARS, headers: who.headers })).session;
}

function callTool(who: Who, sessionId: string, name: string, path = "/mcp"): Promise<Json> {
  return request(path, sessionId, "tools/call", { name, arguments: {} }, { vars: VARS, headers: who.headers });
}

/** What an answer asking to sign in says: a -32042 error's message, or a tool error's text. */
function askText(response: Json): string {
  if (response.error?.code === -32042) return response.error.message as string;
  expect(response.result?.isError, JSON.stringify(response)).toBe(true);
  return response.result.content[0].text as string;
}

/** True for an answer asking to sign in (a -32042 error, or a tool error with a sign-in link). */
function asksToSignIn(response: Json): boolean {
  return response.error?.code === -32042 || (response.result?.isError === true && String(response.result.content[0].text).includes("/oauth/upstream/"));
}

/** The sign-in link of a -32042 answer (its URL-mode elicitation) or of a tool error's text. */
function linkOf(response: Json): string {
  if (response.error?.code === -32042) {
    const [elicitation] = response.error.data.elicitations;
    expect(elicitation.mode).toBe("url");
    expect(typeof elicitation.elicitationId).toBe("string");
    return elicitation.url as string;
  }
  const link = /(https?:\/\/gateway\.test\/oauth\/upstream\/[^/]+\/start\?link=\S+)/.exec(askText(response))?.[1];
  expect(link, JSON.stringify(response)).toBeDefined();
  return link!;
}

/** What the upstream said of its caller (whoami / admin_action). */
function callerSeen(response: Json): { sub: string; jti: string; scope: string } {
  expect(response.result?.isError, JSON.stringify(response)).not.toBe(true);
  return JSON.parse(response.result.content[0].text);
}

/** Signs `who` in to `upstream` (asking on /mcp), as the authorization server's user `user`; returns the session. */
async function signedIn(who: Who, user: string, upstream = "acme"): Promise<string> {
  const id = await session(who);
  const link = linkOf(await callTool(who, id, `${upstream}___whoami`));
  const done = await new Browser(VARS).signIn(link, user);
  expect(done.status, await done.clone().text()).toBe(200);
  return id;
}

beforeAll(async () => {
  for (const [name, persona] of Object.entries(PERSONAS)) expect((await admin("PUT", `/personas/${name}`, persona, VARS)).status).toBe(200);
});

describe("signing in to an upstream that acts as the user", () => {
  it("a 2025 client with URL elicitation is asked by elicitation/create; the call waits for the sign-in and answers as that user", async () => {
    const alice = await caller();
    const id = await session(alice, "/mcp", URL_ELICITATION);
    // Not signed in: the merged list leaves the upstream out and says why.
    const listed = await request("/mcp", id, "tools/list", {}, { vars: VARS, headers: alice.headers });
    expect(listed.result.tools.some((t: Json) => t.name.startsWith("acme___"))).toBe(false);
    expect(JSON.stringify(listed.result._meta)).toContain('upstream \\"acme\\" needs you to sign in');
    const call = await post("/mcp", { jsonrpc: "2.0", id: 41, method: "tools/call", params: { name: "acme___whoami", arguments: {} } }, { session: id, vars: VARS, headers: alice.headers });
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect(asked.method).toBe("elicitation/create");
    expect(asked.params.mode).toBe("url");
    expect(asked.params.message).toContain('Sign in to upstream "acme"');
    const link: string = asked.params.url;
    expect(link).toMatch(/^http:\/\/gateway\.test\/oauth\/upstream\/acme\/start\?link=/);
    // The client shows the URL and the user accepts; then the user signs in in a browser.
    expect((await post("/mcp", { jsonrpc: "2.0", id: asked.id, result: { action: "accept" } }, { session: id, vars: VARS, headers: alice.headers })).status).toBe(202);
    const done = await new Browser(VARS).signIn(link, "alice@idp");
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("signed in to acme");
    const complete = JSON.parse((await events.next()).value.data) as Json;
    expect(complete).toEqual({ jsonrpc: "2.0", method: "notifications/elicitation/complete", params: { elicitationId: asked.params.elicitationId } });
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final.id).toBe(41);
    expect(callerSeen(final).sub).toBe("alice@idp");
    expect(callerSeen(await callTool(alice, id, "acme___whoami")).sub).toBe("alice@idp");
    const relisted = await request("/mcp", id, "tools/list", {}, { vars: VARS, headers: alice.headers });
    expect(relisted.result.tools.map((t: Json) => t.name)).toContain("acme___whoami");
  });

  it("a 2025 client with URL elicitation that declines gets a tool error, and is asked again next time", async () => {
    const bea = await caller();
    const id = await session(bea, "/mcp", URL_ELICITATION);
    const call = await post("/mcp", { jsonrpc: "2.0", id: 42, method: "tools/call", params: { name: "acme___whoami", arguments: {} } }, { session: id, vars: VARS, headers: bea.headers });
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect((await post("/mcp", { jsonrpc: "2.0", id: asked.id, result: { action: "decline" } }, { session: id, vars: VARS, headers: bea.headers })).status).toBe(202);
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final.id).toBe(42);
    expect(final.result.isError).toBe(true);
    expect(final.result.content[0].text).toContain("declined");
  });

  it("without the rendezvous binding, a 2025 client with URL elicitation gets the -32042 error and retries", async () => {
    const cleo = await caller();
    const unbound = { ...VARS, INPUT_RENDEZVOUS: undefined };
    const id = (await initialize("/mcp", { capabilities: URL_ELICITATION, vars: unbound, headers: cleo.headers })).session;
    const first = await request("/mcp", id, "tools/call", { name: "acme___whoami", arguments: {} }, { vars: unbound, headers: cleo.headers });
    expect(first.error?.code).toBe(-32042);
    expect(first.error.message).toContain('Sign in to upstream "acme"');
    expect((await new Browser(VARS).signIn(linkOf(first), "cleo@idp")).status).toBe(200);
    expect(callerSeen(await request("/mcp", id, "tools/call", { name: "acme___whoami", arguments: {} }, { vars: unbound, headers: cleo.headers })).sub).toBe("cleo@idp");
  });

  it("on /mcp/<upstream> too: initialize asks, and after the sign-in the client connects and calls", async () => {
    const carol = await caller();
    const refused = await answer(await post("/mcp/acme", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: URL_ELICITATION, clientInfo: { name: "t", version: "1" } } }, { vars: VARS, headers: carol.headers }));
    expect((await new Browser(VARS).signIn(linkOf(refused), "carol@idp")).status).toBe(200);
    const id = await session(carol, "/mcp/acme");
    expect(callerSeen(await callTool(carol, id, "whoami", "/mcp/acme")).sub).toBe("carol@idp");
  });

  it("two principals get two different tokens, and each upstream call carries its caller's", async () => {
    const [alice, bob] = [await caller(), await caller()];
    const [aliceSession, bobSession] = [await signedIn(alice, "alice@idp"), await signedIn(bob, "bob@idp")];
    const seen = [callerSeen(await callTool(alice, aliceSession, "acme___whoami")), callerSeen(await callTool(bob, bobSession, "acme___whoami")), callerSeen(await callTool(alice, aliceSession, "acme___whoami"))];
    expect(seen.map((s) => s.sub)).toEqual(["alice@idp", "bob@idp", "alice@idp"]);
    expect(seen[0]!.jti).not.toBe(seen[1]!.jti);
    expect(seen[0]!.jti).toBe(seen[2]!.jti); // alice's stored token, used again
  });

  it("a 2026-07-28 client gets input_required with a URL-mode elicitation; its retry runs the call", async () => {
    const dave = await caller();
    const call = (extra: Record<string, unknown> = {}) => modern("/mcp/acme", "tools/call", { name: "whoami", arguments: {}, ...extra }, { vars: VARS, headers: dave.headers, capabilities: URL_ELICITATION });
    // server/discover cannot answer input_required: it gets the -32042 error.
    const discover = await modern("/mcp/acme", "server/discover", {}, { vars: VARS, headers: dave.headers, capabilities: URL_ELICITATION });
    expect(discover.error?.code, JSON.stringify(discover)).toBe(-32042);
    const asked = await call();
    expect(asked.result?.resultType, JSON.stringify(asked)).toBe("input_required");
    const question = asked.result.inputRequests["sign-in"];
    expect(question.method).toBe("elicitation/create");
    expect(question.params.mode).toBe("url");
    expect((await new Browser(VARS).signIn(question.params.url, "dave@idp")).status).toBe(200);
    const retried = await call({ requestState: asked.result.requestState, inputResponses: { "sign-in": { action: "accept" } } });
    expect(callerSeen(retried).sub).toBe("dave@idp");
  });

  it("a client without URL elicitation gets a tool error naming the link, and the link works", async () => {
    const erin = await caller();
    const id = await session(erin);
    const first = await callTool(erin, id, "acme___whoami");
    expect(first.result.isError).toBe(true);
    const text: string = first.result.content[0].text;
    const link = /(http:\/\/gateway\.test\/oauth\/upstream\/acme\/start\?link=\S+)/.exec(text)?.[1];
    expect(link, text).toBeDefined();
    expect((await new Browser(VARS).signIn(link!, "erin@idp")).status).toBe(200);
    expect(callerSeen(await callTool(erin, id, "acme___whoami")).sub).toBe("erin@idp");
  });

  it("refreshes a token about to expire, storing the rotated refresh token each time", async () => {
    const frank = await caller();
    const id = await signedIn(frank, "frank@idp", "shorty");
    const before = (await authorizationServerStats()).refreshes;
    // The fixture issues 30 s tokens on "short" resources: inside the refresh margin, so every use refreshes.
    const first = callerSeen(await callTool(frank, id, "shorty___whoami"));
    const second = callerSeen(await callTool(frank, id, "shorty___whoami"));
    expect(first.sub).toBe("frank@idp");
    expect(second.sub).toBe("frank@idp");
    expect(second.jti).not.toBe(first.jti);
    // The second refresh used the refresh token the first one rotated in (oidc-provider refuses a spent one).
    expect((await authorizationServerStats()).refreshes - before).toBeGreaterThanOrEqual(2);
  });

  it("asks for the wider scope when the upstream answers 403 insufficient_scope (step-up)", async () => {
    const gina = await caller();
    const id = await signedIn(gina, "gina@idp");
    const refused = await callTool(gina, id, "acme___admin_action");
    const link = linkOf(refused);
    expect(askText(refused)).toContain("tools:admin");
    const browser = new Browser(VARS);
    const callback = await browser.signInUntilCallback(link, "gina@idp");
    expect((await browser.request(callback)).status).toBe(200);
    const seen = callerSeen(await callTool(gina, id, "acme___admin_action"));
    expect(seen.scope.split(" ")).toContain("tools:admin");
    expect(seen.sub).toBe("gina@idp");
  });
});

describe("a client registered by hand", () => {
  const upstreams = [{ name: "byhand", url: `${origin}/byhand${label}/mcp`, auth: { type: "oauth", clientId: STATIC_CLIENT_ID, clientSecret: "BYHAND_CLIENT_SECRET" } }];

  it.each([
    ["its secret", STATIC_CLIENT_SECRET, 200],
    ["a wrong secret", "not-the-secret-0123456789", 400],
  ])("is used with %s (client_secret_basic)", async (_label, secret, status) => {
    const vars: Vars = { ...VARS, UPSTREAMS: JSON.stringify(upstreams), BYHAND_CLIENT_SECRET: secret };
    expect((await admin("PUT", "/personas/byhand-users", { roles: ["byhand-user"], allow: ["byhand___*"] }, vars)).status).toBe(200);
    const who = await caller(["byhand-user"]);
    const id = (await initialize("/mcp", { vars, headers: who.headers })).session;
    const call = () => request("/mcp", id, "tools/call", { name: "byhand___whoami", arguments: {} }, { vars, headers: who.headers });
    const browser = new Browser(vars);
    const started = await browser.start(linkOf(await call()));
    expect(new URL(started.headers.get("location")!).searchParams.get("client_id")).toBe(STATIC_CLIENT_ID);
    const done = await new Browser(vars).signIn(linkOf(await call()), "rita@idp");
    const page = await done.text();
    expect(done.status, page).toBe(status);
    expect(page).not.toContain(secret);
    if (status === 200) expect(callerSeen(await call()).sub).toBe("rita@idp");
    else expect(asksToSignIn(await call())).toBe(true);
  });
});

describe("a Client ID Metadata Document", () => {
  it("is the gateway's client where the authorization server advertises it (no registration)", async () => {
    const upstreams = [{ name: "docs", url: `${origin}/cimd${label}/mcp`, auth: { type: "oauth" } }];
    const vars: Vars = { ...VARS, UPSTREAMS: JSON.stringify(upstreams) };
    const gateway = "https://gateway.test";
    const documentUrl = `${gateway}/oauth/upstream/client-metadata.json`;
    const served = await gatewayFetch(documentUrl, {}, vars);
    expect(served.status).toBe(200);
    const document = await served.text();
    expect(JSON.parse(document)).toMatchObject({ client_id: documentUrl, redirect_uris: [`${gateway}/oauth/upstream/callback`], token_endpoint_auth_method: "none" });
    // The authorization server fetches the document at its URL: the fixture hands it over (gateway.test is not on the network).
    expect((await fetch(`${origin}/client-documents`, { method: "POST", body: JSON.stringify({ url: documentUrl, document }) })).status).toBe(204);
    expect((await admin("PUT", "/personas/docs-users", { roles: ["docs-user"], allow: ["docs___*"] }, vars)).status).toBe(200);
    const who = await caller(["docs-user"]);
    const id = (await initialize(`${gateway}/mcp`, { vars, headers: who.headers })).session;
    const call = () => request(`${gateway}/mcp`, id, "tools/call", { name: "docs___whoami", arguments: {} }, { vars, headers: who.headers });
    const link = linkOf(await call());
    const browser = new Browser(vars);
    const started = await browser.start(link);
    expect(started.status).toBe(303);
    expect(new URL(started.headers.get("location")!).searchParams.get("client_id")).toBe(documentUrl);
    const again = linkOf(await call());
    const done = await new Browser(vars).signIn(again, "quinn@idp");
    expect(done.status, await done.clone().text()).toBe(200);
    expect(callerSeen(await call()).sub).toBe("quinn@idp");
  });
});

describe("what a sign-in refuses", () => {
  /** A fresh caller's sign-in link and a browser stopped at the callback. */
  async function atCallback(user: string): Promise<{ who: Who; id: string; browser: Browser; callback: string }> {
    const who = await caller();
    const id = await session(who);
    const browser = new Browser(VARS);
    const callback = await browser.signInUntilCallback(linkOf(await callTool(who, id, "acme___whoami")), user);
    return { who, id, browser, callback };
  }

  async function stillAsked(who: Who, id: string): Promise<void> {
    expect(asksToSignIn(await callTool(who, id, "acme___whoami"))).toBe(true);
  }

  it("a tampered state", async () => {
    const { who, id, browser, callback } = await atCallback("henry@idp");
    const url = new URL(callback);
    const state = url.searchParams.get("state")!;
    url.searchParams.set("state", `${state.slice(0, -4)}${state.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`);
    const refused = await browser.request(url.href);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("not issued to this browser");
    await stillAsked(who, id);
  });

  it("a replayed callback", async () => {
    const { who, id, browser, callback } = await atCallback("ivy@idp");
    expect((await browser.request(callback)).status).toBe(200);
    const replayed = await browser.request(callback);
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toContain("already completed");
    expect(callerSeen(await callTool(who, id, "acme___whoami")).sub).toBe("ivy@idp");
  });

  it("a callback for another principal (another browser's flow)", async () => {
    const victim = await atCallback("jack@idp");
    const attacker = await atCallback("mallory@idp");
    // The attacker's code and state, opened in the victim's browser: refused, nothing stored for either.
    const refused = await victim.browser.request(attacker.callback);
    expect(refused.status).toBe(400);
    await stillAsked(victim.who, victim.id);
    await stillAsked(attacker.who, attacker.id);
  });

  it("a callback whose iss is not the authorization server's (RFC 9207)", async () => {
    const { who, id, browser, callback } = await atCallback("kate@idp");
    const url = new URL(callback);
    expect(url.searchParams.get("iss")).toBe(oauthFixture().issuer);
    url.searchParams.set("iss", "https://evil.example");
    const refused = await browser.request(url.href);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("refused");
    await stillAsked(who, id);
  });

  it("a sign-in link used twice, or altered; opening it only shows whom it signs in", async () => {
    const who = await caller();
    const id = await session(who);
    const link = linkOf(await callTool(who, id, "acme___whoami"));
    const shown = await new Browser(VARS).request(link);
    expect(shown.status).toBe(200);
    const page = await shown.text();
    expect(page).toContain(who.principal);
    expect(page).toContain("If someone sent you this link, close this page");
    const first = await new Browser(VARS).start(link); // opened again: still unused
    expect(first.status).toBe(303);
    expect(new URL(first.headers.get("location")!).origin).toBe(oauthFixture().issuer);
    expect((await new Browser(VARS).start(link)).status).toBe(410);
    expect((await new Browser(VARS).request(link.replace("/acme/", "/shorty/"))).status).toBe(400);
    const crossSite = await new Browser(VARS).request(link, { method: "POST", body: new URLSearchParams({ link: new URL(link).searchParams.get("link")! }).toString(), headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
  });

  it("a persona that no longer reaches the upstream never starts its sign-in", async () => {
    const who = await caller();
    const id = await session(who);
    const link = linkOf(await callTool(who, id, "acme___whoami"));
    expect((await admin("PUT", "/personas/users", { roles: ["user"], allow: ["shorty___*"] }, VARS)).status).toBe(200);
    try {
      const refused = await new Browser(VARS).start(link);
      expect(refused.status).toBe(403);
      expect(refused.headers.get("location")).toBeNull();
    } finally {
      expect((await admin("PUT", "/personas/users", PERSONAS.users, VARS)).status).toBe(200);
    }
  });
});

describe("connections", () => {
  it("are listed without tokens, kept encrypted, and revoked on DELETE (then the user is asked again)", async () => {
    const lena = await caller();
    const id = await signedIn(lena, "lena@idp");
    const own = (await (await gatewayFetch("/oauth/upstream/connections", { headers: lena.headers }, VARS)).json()) as Json;
    expect(own.connections).toHaveLength(1);
    expect(Object.keys(own.connections[0]).sort()).toEqual(["connectedAt", "expiresAt", "principal", "scope", "upstream"]);
    expect(own.connections[0]).toMatchObject({ principal: lena.principal, upstream: "acme" });
    const listed = (await (await admin("GET", "/upstream-connections", undefined, VARS)).json()) as Json;
    expect(listed.connections.some((c: Json) => c.principal === lena.principal && c.upstream === "acme")).toBe(true);
    // At rest: sealed, no JWT in clear.
    const keys = await env.GATEWAY_KV.list({ prefix: "upstream-token/" });
    for (const key of keys.keys) {
      const value = (await env.GATEWAY_KV.get(key.name))!;
      expect(value.startsWith("s1.")).toBe(true);
      expect(value).not.toContain("eyJ");
    }
    const revocations = (await authorizationServerStats()).revocations;
    const deleted = await gatewayFetch("/oauth/upstream/connections?upstream=acme", { method: "DELETE", headers: lena.headers }, VARS, undefined, true);
    expect(deleted.status).toBe(200);
    expect((await authorizationServerStats()).revocations).toBeGreaterThan(revocations);
    expect(asksToSignIn(await callTool(lena, id, "acme___whoami"))).toBe(true);
    expect((await gatewayFetch("/oauth/upstream/connections?upstream=acme", { method: "DELETE", headers: lena.headers }, VARS)).status).toBe(404);
  });

  it("an operator revokes one through /admin/upstream-connections", async () => {
    const mona = await caller();
    const id = await signedIn(mona, "mona@idp");
    const deleted = await admin("DELETE", `/upstream-connections?principal=${encodeURIComponent(mona.principal)}&upstream=acme`, undefined, VARS);
    expect(deleted.status).toBe(200);
    expect(asksToSignIn(await callTool(mona, id, "acme___whoami"))).toBe(true);
  });
});

describe("tokens that no longer serve", () => {
  /** VARS with `upstream` pointed at another resource of the fixture. */
  function moved(upstream: string, path: string): Vars {
    return { ...VARS, UPSTREAMS: JSON.stringify(UPSTREAMS.map((u) => (u.name === upstream ? { ...u, url: `${origin}/${path}/mcp` } : u))) };
  }

  it("a token the upstream refuses (401) is forgotten and the user asked again", async () => {
    const nina = await caller();
    const id = await signedIn(nina, "nina@idp");
    callerSeen(await callTool(nina, id, "acme___whoami"));
    expect((await fetch(`${origin}/acme${label}/reject-tokens`, { method: "POST" })).status).toBe(204);
    expect(asksToSignIn(await callTool(nina, id, "acme___whoami"))).toBe(true);
    const own = (await (await gatewayFetch("/oauth/upstream/connections", { headers: nina.headers }, VARS)).json()) as Json;
    expect(own.connections).toEqual([]);
  });

  it("a token is never sent to another resource: an upstream re-pointed elsewhere asks again", async () => {
    const otto = await caller();
    const id = await signedIn(otto, "otto@idp");
    const elsewhere = moved("acme", `elsewhere${label}`);
    const asked = await request("/mcp", id, "tools/call", { name: "acme___whoami", arguments: {} }, { vars: elsewhere, headers: otto.headers });
    expect(asksToSignIn(asked)).toBe(true);
    // Still connected to the resource it signed in to.
    expect(callerSeen(await callTool(otto, id, "acme___whoami")).sub).toBe("otto@idp");
  });

  it("connect, a failed refresh and a revocation are audit events, with no token in them", async () => {
    const paul = await caller();
    const id = await signedIn(paul, "paul@idp", "shorty");
    expect(callerSeen(await callTool(paul, id, "shorty___whoami")).sub).toBe("paul@idp");
    // The authorization server forgets paul's refresh tokens: the next refresh fails, and paul is asked again.
    expect((await fetch(`${origin}/forget-refresh-tokens?account=paul@idp`, { method: "POST" })).status).toBe(204);
    const asked = await request("/mcp", id, "tools/call", { name: "shorty___whoami", arguments: {} }, { vars: VARS, headers: paul.headers, settle: true });
    expect(asksToSignIn(asked)).toBe(true);
    await signedIn(paul, "paul@idp", "shorty");
    expect((await gatewayFetch("/oauth/upstream/connections?upstream=shorty", { method: "DELETE", headers: paul.headers }, VARS, undefined, true)).status).toBe(200);
    const methods = ["(upstream-connect)", "(upstream-connect)", "(upstream-refresh-failed)", "(upstream-revoke)"];
    const events = await auditEventsOf(paul.principal, methods.length);
    expect(events.map((e) => e["mcp.method.name"]).sort()).toEqual(methods);
    expect(events.every((e) => e["gateway.upstream"] === "shorty")).toBe(true);
    expect(JSON.stringify(events)).not.toMatch(/eyJ|"s1\./);
  });
});

/** The connection audit events of `principal` once at least `count` are written (the Worker's own consumer writes them to R2). */
async function auditEventsOf(principal: string, count: number): Promise<Json[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const text = await (await admin("GET", `/audit?user=${encodeURIComponent(principal)}`, undefined, VARS)).text();
    const events = text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Json).filter((e) => String(e["mcp.method.name"]).startsWith("(upstream-"));
    if (events.length >= count || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("UPSTREAMS[].auth", () => {
  it.each([
    [{ type: "basic" }, 'must be {"type": "oauth"}'],
    [{ type: "oauth", clientSecret: "S" }, 'needs "clientId"'],
    [{ type: "oauth", clientId: "c", clientSecret: "not a name!" }, "NAME of a Worker secret"],
    [{ type: "oauth", scopes: "repo" }, "list of scope names"],
    [{ type: "oauth", authorizationServer: "ftp://x" }, "issuer"],
    [{ type: "oauth", extra: 1 }, "unknown field"],
  ])("refuses %j", (auth, problem) => {
    const parsed = parseUpstreams([{ name: "gh", url: "https://example.com/mcp", auth }]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.join("\n")).toContain(problem);
  });

  it("refuses a credential in Authorization beside it", () => {
    const parsed = parseUpstreams([{ name: "gh", url: "https://example.com/mcp", auth: { type: "oauth" }, credential: { secret: "T" } }]);
    expect(parsed.ok).toBe(false);
  });

  it("accepts the full form", () => {
    const parsed = parseUpstreams([{ name: "gh", url: "https://example.com/mcp", auth: { type: "oauth", clientId: "c", clientSecret: "GH_CLIENT_SECRET", scopes: ["repo"], authorizationServer: "https://github.com/login/oauth" } }]);
    expect(parsed.ok && parsed.value[0]!.auth).toEqual({ type: "oauth", clientId: "c", clientSecret: "GH_CLIENT_SECRET", scopes: ["repo"], authorizationServer: "https://github.com/login/oauth" });
  });
});
