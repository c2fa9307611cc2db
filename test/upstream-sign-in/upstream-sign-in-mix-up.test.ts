/**
 * Per-user sign-in with several authorization servers and several host names: the OAuth
 * mix-up (RFC 9700 §4.4) reproduced with an honest server that sends no `iss` and a hostile
 * one (test/fixtures/hostile-authorization-server.ts), the redirect URI each kind of client
 * gets, and sign-ins through a second host name of the gateway, which must not cost the
 * first one's users their connections. Through the Worker in workerd, against the real
 * authorization servers (oidc-provider) and upstreams of test/fixtures/oauth-upstream.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { initialize, request, type Json, type Vars } from "../helpers/gateway";
import { admin } from "../helpers/auth";
import { Browser, oauthFixture } from "../helpers/sign-in";
import { asksToSignIn, callerSeen, linkOf, signInWorld, type Who } from "../helpers/sign-in-world";
import { readTokens, writeTokens } from "../../src/storage/upstream-tokens";

const { origin, label, vars: BASE, caller } = signInWorld();
const { hostileIssuer, staticClient } = oauthFixture();
const SECRET = (env as unknown as Record<string, string>)["SESSION_SECRET"]!;
const ROLE = "mix-up-user";
const BY_HAND = { type: "oauth", clientId: staticClient.id, clientSecret: "MIX_UP_CLIENT_SECRET" };
const UPSTREAMS = [
  { name: "bank", url: `${origin}/noiss${label}/mcp`, auth: { type: "oauth" } },
  { name: "evil", url: `${origin}/evil${label}/mcp`, auth: { type: "oauth" } },
  { name: "twohosts", url: `${origin}/short2h${label}/mcp`, auth: { type: "oauth" } },
  { name: "docs", url: `${origin}/cimd${label}/mcp`, auth: { type: "oauth" } },
  { name: "byhand", url: `${origin}/byhand${label}/mcp`, auth: BY_HAND },
  { name: "byhandnoiss", url: `${origin}/noissbyhand${label}/mcp`, auth: BY_HAND },
];
const VARS: Vars = { ...BASE, UPSTREAMS: JSON.stringify(UPSTREAMS), MIX_UP_CLIENT_SECRET: staticClient.secret };

/** A caller reaching every upstream above, with a session on `gateway` (an origin of the gateway). */
async function user(gateway = "http://gateway.test"): Promise<Who & { call: (tool: string) => Promise<Json> }> {
  const persona = { roles: [ROLE], allow: UPSTREAMS.map((u) => `${u.name}___*`) };
  expect((await admin("PUT", "/personas/mix-up-users", persona, VARS)).status).toBe(200);
  const who = await caller([ROLE]);
  const id = (await initialize(`${gateway}/mcp`, { vars: VARS, headers: who.headers })).session;
  const call = (tool: string) =>
    request(`${gateway}/mcp`, id, "tools/call", { name: tool, arguments: {} }, { vars: VARS, headers: who.headers });
  return { ...who, call };
}

/** Where a fresh sign-in of `who` to `upstream` sends the browser (the authorization request). */
async function authorizationRequest(who: Awaited<ReturnType<typeof user>>, upstream: string): Promise<URL> {
  const started = await new Browser(VARS).start(linkOf(await who.call(`${upstream}___whoami`)));
  expect(started.status, await started.clone().text()).toBe(303);
  return new URL(started.headers.get("location")!);
}

/**
 * Points the hostile server at "bank"'s server, with what an attacker reads off a sign-in of
 * its own to "bank": the gateway's client id there and (unless `keepRedirect`) its redirect URI there.
 */
async function aimHostileServerAtBank(keepRedirect = false): Promise<void> {
  const honest = await authorizationRequest(await user(), "bank");
  const target = {
    authorizationEndpoint: `${honest.origin}${honest.pathname}`,
    clientId: honest.searchParams.get("client_id"),
    ...(keepRedirect ? {} : { redirectUri: honest.searchParams.get("redirect_uri") }),
    resource: UPSTREAMS[0]!.url,
  };
  expect((await fetch(`${hostileIssuer}/mix-up`, { method: "POST", body: JSON.stringify(target) })).status).toBe(204);
}

async function codesReceivedByHostileServer(): Promise<(string | null)[]> {
  return ((await (await fetch(`${hostileIssuer}/received`)).json()) as { code: string | null }[]).map((r) => r.code);
}

describe("OAuth mix-up (RFC 9700 §4.4)", () => {
  it("an honest server's code, sent on by a hostile server, never reaches the hostile token endpoint", async () => {
    await aimHostileServerAtBank();
    // The victim signs in to "evil"; its server sends the browser on to bank's, where the victim signs in.
    const victim = await user();
    const browser = new Browser(VARS);
    const link = linkOf(await victim.call("evil___whoami"));
    const callback = new URL(await browser.signInUntilCallback(link, "victim@idp"));
    const code = callback.searchParams.get("code");
    expect(code).toBeTruthy();
    expect(callback.searchParams.get("iss")).toBeNull(); // the honest server does not identify its answers
    const answered = await browser.request(callback.href);
    expect(answered.status).toBe(400);
    expect(await answered.text()).toContain("came back to another sign-in");
    expect(await codesReceivedByHostileServer()).not.toContain(code);
    expect(asksToSignIn(await victim.call("evil___whoami"))).toBe(true);
    // The victim's own sign-in to "bank" works as before.
    const done = await new Browser(VARS).signIn(linkOf(await victim.call("bank___whoami")), "victim@idp");
    expect(done.status, await done.clone().text()).toBe(200);
    expect(callerSeen(await victim.call("bank___whoami")).sub).toBe("victim@idp");
  });

  it("the honest server refuses the hostile upstream's redirect URI for the gateway's client there", async () => {
    await aimHostileServerAtBank(true);
    const victim = await user();
    const before = (await codesReceivedByHostileServer()).length;
    const link = linkOf(await victim.call("evil___whoami"));
    // oidc-provider answers an unregistered redirect URI with an error page of its own: no code is issued.
    const stopped = new Browser(VARS).signInUntilCallback(link, "victim@idp");
    await expect(stopped).rejects.toThrow(/^sign-in stopped at http:\/\/127\.0\.0\.1:\d+\/auth\?.*: HTTP 400\//s);
    expect(await codesReceivedByHostileServer()).toHaveLength(before);
    expect(asksToSignIn(await victim.call("evil___whoami"))).toBe(true);
  });

  it.each([
    ["registered dynamically", "own", "bank"],
    ["registered dynamically, at a server sending iss", "own", "twohosts"],
    ["by hand, at a server sending iss (what operators registered)", "shared", "byhand"],
    ["by hand, at a server sending no iss", "own", "byhandnoiss"],
    ["as a Client ID Metadata Document (at a server sending iss)", "shared", "docs"],
  ])("a client %s gets the %s redirect URI", async (_kind, which, upstream) => {
    const redirect = (await authorizationRequest(await user(), upstream)).searchParams.get("redirect_uri")!;
    const own = new RegExp(`^http://gateway\\.test/oauth/upstream/callback/${upstream}/[0-9a-f]{16}$`);
    if (which === "shared") expect(redirect).toBe("http://gateway.test/oauth/upstream/callback");
    else expect(redirect).toMatch(own);
  });
});

describe("a second host name of the gateway", () => {
  it("keeps the first one's registration: each user's refresh uses the client its tokens were issued to", async () => {
    // "twohosts" issues tokens inside the refresh margin: every call refreshes.
    const [alice, bob] = [await user("http://gateway.test"), await user("https://gateway.test")];
    await signIn(alice, "alice@idp");
    await signIn(bob, "bob@idp");
    const [aliceClient, bobClient] = [await tokensOf(alice), await tokensOf(bob)];
    expect(aliceClient.clientId).not.toBe(bobClient.clientId);
    for (let round = 0; round < 2; round++) {
      expect(callerSeen(await alice.call("twohosts___whoami")).sub).toBe("alice@idp");
      expect(callerSeen(await bob.call("twohosts___whoami")).sub).toBe("bob@idp");
    }
    expect((await tokensOf(alice)).clientId).toBe(aliceClient.clientId);
  });

  it("tokens stored before registrations were kept with them still refresh (their client id alone)", async () => {
    const carl = await user();
    await signIn(carl, "carl@idp");
    const { client: _client, ...older } = await tokensOf(carl);
    await writeTokens(env.GATEWAY_KV, SECRET, carl.principal, "twohosts", older);
    expect(callerSeen(await carl.call("twohosts___whoami")).sub).toBe("carl@idp");
  });
});

async function signIn(who: Awaited<ReturnType<typeof user>>, as: string): Promise<void> {
  expect((await new Browser(VARS).signIn(linkOf(await who.call("twohosts___whoami")), as)).status).toBe(200);
}

async function tokensOf(who: Who) {
  const tokens = await readTokens(env.GATEWAY_KV, SECRET, who.principal, "twohosts");
  expect(tokens).toBeDefined();
  return tokens!;
}
