/**
 * Per-user sign-in to upstreams, what it refuses and what it keeps: tampered, replayed,
 * foreign and wrong-issuer callbacks, used or altered links, personas; connections listed
 * without tokens, sealed at rest, revoked by the user or an operator; tokens the upstream
 * refuses or that were issued for another resource; audit events; the configuration's
 * checks. Against the real authorization server and upstream of test/fixtures/oauth-upstream.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { gatewayFetch, request, type Json, type Vars } from "../helpers/gateway";
import { admin } from "../helpers/auth";
import { authorizationServerStats, Browser, oauthFixture } from "../helpers/sign-in";
import { asksToSignIn, callerSeen, linkOf, signInWorld, type Who } from "../helpers/sign-in-world";
import { parseUpstreams } from "../../src/config/upstreams";

const {
  origin,
  label,
  upstreams: UPSTREAMS,
  vars: VARS,
  personas: PERSONAS,
  caller,
  session,
  callTool,
  signedIn,
} = signInWorld();

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
    const crossSite = await new Browser(VARS).request(link, {
      method: "POST",
      body: new URLSearchParams({ link: new URL(link).searchParams.get("link")! }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
    });
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
    const own = (await (
      await gatewayFetch("/oauth/upstream/connections", { headers: lena.headers }, VARS)
    ).json()) as Json;
    expect(own.connections).toHaveLength(1);
    expect(Object.keys(own.connections[0]).sort()).toEqual([
      "connectedAt",
      "expiresAt",
      "principal",
      "scope",
      "upstream",
    ]);
    expect(own.connections[0]).toMatchObject({ principal: lena.principal, upstream: "acme" });
    const listed = (await (await admin("GET", "/upstream-connections", undefined, VARS)).json()) as Json;
    expect(listed.connections.some((c: Json) => c.principal === lena.principal && c.upstream === "acme")).toBe(true);
    // At rest: sealed, no JWT in clear (a JWT's header and payload both start "eyJ", joined by
    // a dot; the sealed text is "s1." and base64url, which holds "eyJ" by chance about once
    // in 250,000 characters, so "eyJ" alone failed about one run in thirty), no token fields.
    const keys = await env.GATEWAY_KV.list({ prefix: "upstream-token/" });
    for (const key of keys.keys) {
      const value = (await env.GATEWAY_KV.get(key.name))!;
      expect(value.startsWith("s1.")).toBe(true);
      expect(value).not.toMatch(/eyJ[\w-]*\.eyJ|access_token|refresh_token/);
    }
    const revocations = (await authorizationServerStats()).revocations;
    const deleted = await gatewayFetch(
      "/oauth/upstream/connections?upstream=acme",
      { method: "DELETE", headers: lena.headers },
      VARS,
      undefined,
      true,
    );
    expect(deleted.status).toBe(200);
    expect((await authorizationServerStats()).revocations).toBeGreaterThan(revocations);
    expect(asksToSignIn(await callTool(lena, id, "acme___whoami"))).toBe(true);
    expect(
      (
        await gatewayFetch(
          "/oauth/upstream/connections?upstream=acme",
          { method: "DELETE", headers: lena.headers },
          VARS,
        )
      ).status,
    ).toBe(404);
  });

  it("an operator revokes one through /admin/upstream-connections", async () => {
    const mona = await caller();
    const id = await signedIn(mona, "mona@idp");
    const deleted = await admin(
      "DELETE",
      `/upstream-connections?principal=${encodeURIComponent(mona.principal)}&upstream=acme`,
      undefined,
      VARS,
    );
    expect(deleted.status).toBe(200);
    expect(asksToSignIn(await callTool(mona, id, "acme___whoami"))).toBe(true);
  });
});

describe("tokens that no longer serve", () => {
  /** VARS with `upstream` pointed at another resource of the fixture. */
  function moved(upstream: string, path: string): Vars {
    return {
      ...VARS,
      UPSTREAMS: JSON.stringify(
        UPSTREAMS.map((u) => (u.name === upstream ? { ...u, url: `${origin}/${path}/mcp` } : u)),
      ),
    };
  }

  it("a token the upstream refuses (401) is forgotten and the user asked again", async () => {
    const nina = await caller();
    const id = await signedIn(nina, "nina@idp");
    callerSeen(await callTool(nina, id, "acme___whoami"));
    expect((await fetch(`${origin}/acme${label}/reject-tokens`, { method: "POST" })).status).toBe(204);
    expect(asksToSignIn(await callTool(nina, id, "acme___whoami"))).toBe(true);
    const own = (await (
      await gatewayFetch("/oauth/upstream/connections", { headers: nina.headers }, VARS)
    ).json()) as Json;
    expect(own.connections).toEqual([]);
  });

  it("a token is never sent to another resource: an upstream re-pointed elsewhere asks again", async () => {
    const otto = await caller();
    const id = await signedIn(otto, "otto@idp");
    const elsewhere = moved("acme", `elsewhere${label}`);
    const asked = await request(
      "/mcp",
      id,
      "tools/call",
      { name: "acme___whoami", arguments: {} },
      { vars: elsewhere, headers: otto.headers },
    );
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
    const asked = await request(
      "/mcp",
      id,
      "tools/call",
      { name: "shorty___whoami", arguments: {} },
      { vars: VARS, headers: paul.headers, settle: true },
    );
    expect(asksToSignIn(asked)).toBe(true);
    await signedIn(paul, "paul@idp", "shorty");
    expect(
      (
        await gatewayFetch(
          "/oauth/upstream/connections?upstream=shorty",
          { method: "DELETE", headers: paul.headers },
          VARS,
          undefined,
          true,
        )
      ).status,
    ).toBe(200);
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
    const events = text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Json)
      .filter((e) => String(e["mcp.method.name"]).startsWith("(upstream-"));
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
    const parsed = parseUpstreams([
      { name: "gh", url: "https://example.com/mcp", auth: { type: "oauth" }, credential: { secret: "T" } },
    ]);
    expect(parsed.ok).toBe(false);
  });

  it("accepts the full form", () => {
    const parsed = parseUpstreams([
      {
        name: "gh",
        url: "https://example.com/mcp",
        auth: {
          type: "oauth",
          clientId: "c",
          clientSecret: "GH_CLIENT_SECRET",
          scopes: ["repo"],
          authorizationServer: "https://github.com/login/oauth",
        },
      },
    ]);
    expect(parsed.ok && parsed.value[0]!.auth).toEqual({
      type: "oauth",
      clientId: "c",
      clientSecret: "GH_CLIENT_SECRET",
      scopes: ["repo"],
      authorizationServer: "https://github.com/login/oauth",
    });
  });
});
