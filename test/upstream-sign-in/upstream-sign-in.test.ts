/**
 * Per-user sign-in to upstreams (UPSTREAMS[].auth = {"type": "oauth"}), through the Worker
 * in workerd against a real authorization server (oidc-provider: PKCE, resource
 * indicators, dynamic registration, rotation, revocation) and a real SDK upstream that
 * checks each token's signature, issuer and audience (test/fixtures/oauth-upstream.ts):
 * how each kind of client is asked, what a sign-in gives each caller, refresh, step-up,
 * and the three ways the gateway is a client (registration, by hand, metadata document).
 * A scripted browser (test/helpers/node/sign-in-browser.ts) opens the links the gateway hands out.
 * What a sign-in refuses, connections and revocation: test/upstream-sign-in/upstream-sign-in-refusals.test.ts.
 */
import { describe, expect, it } from "vitest";
import { answer, gatewayFetch, initialize, post, request, type Json, type Vars } from "../helpers/gateway";
import { readSse } from "../../src/core/sse";
import { admin } from "../helpers/auth";
import { modern } from "../helpers/modern";
import { authorizationServerStats, Browser, oauthFixture } from "../helpers/sign-in";
import { askText, asksToSignIn, callerSeen, linkOf, signInWorld, URL_ELICITATION } from "../helpers/sign-in-world";

const { origin, label, vars: VARS, caller, session, callTool, signedIn } = signInWorld();
const { staticClient } = oauthFixture();
const [STATIC_CLIENT_ID, STATIC_CLIENT_SECRET] = [staticClient.id, staticClient.secret];

describe("signing in to an upstream that acts as the user", () => {
  it("a 2025 client with URL elicitation is asked by elicitation/create; the call waits for the sign-in and answers as that user", async () => {
    const alice = await caller();
    const id = await session(alice, "/mcp", URL_ELICITATION);
    // Not signed in: the merged list leaves the upstream out and says why.
    const listed = await request("/mcp", id, "tools/list", {}, { vars: VARS, headers: alice.headers });
    expect(listed.result.tools.some((t: Json) => t.name.startsWith("acme___"))).toBe(false);
    expect(JSON.stringify(listed.result._meta)).toContain('upstream \\"acme\\" needs you to sign in');
    const call = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 41, method: "tools/call", params: { name: "acme___whoami", arguments: {} } },
      { session: id, vars: VARS, headers: alice.headers },
    );
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect(asked.method).toBe("elicitation/create");
    expect(asked.params.mode).toBe("url");
    expect(asked.params.message).toContain('Sign in to upstream "acme"');
    const link: string = asked.params.url;
    expect(link).toMatch(/^http:\/\/gateway\.test\/oauth\/upstream\/acme\/start\?link=/);
    // The client shows the URL and the user accepts; then the user signs in in a browser.
    expect(
      (
        await post(
          "/mcp",
          { jsonrpc: "2.0", id: asked.id, result: { action: "accept" } },
          { session: id, vars: VARS, headers: alice.headers },
        )
      ).status,
    ).toBe(202);
    const done = await new Browser(VARS).signIn(link, "alice@idp");
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("signed in to acme");
    const complete = JSON.parse((await events.next()).value.data) as Json;
    expect(complete).toEqual({
      jsonrpc: "2.0",
      method: "notifications/elicitation/complete",
      params: { elicitationId: asked.params.elicitationId },
    });
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final.id).toBe(41);
    expect(callerSeen(final).sub).toBe("alice@idp");
    expect(callerSeen(await callTool(alice, id, "acme___whoami")).sub).toBe("alice@idp");
    const relisted = await request("/mcp", id, "tools/list", {}, { vars: VARS, headers: alice.headers });
    expect(relisted.result.tools.map((t: Json) => t.name)).toContain("acme___whoami");
  });

  it("after the sign-in, a large answer to the retried call is read by the sign-in layer, never passed on as it flows", async () => {
    // Offload off for it: the answer would flow to the client if nothing said the sign-in layer reads it.
    const vars = { ...VARS, OFFLOAD: JSON.stringify({ exclude: ["*"] }) };
    const nora = await caller();
    const id = await session(nora, "/mcp", URL_ELICITATION);
    const call = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 43, method: "tools/call", params: { name: "acme___whoami_large", arguments: {} } },
      { session: id, vars, headers: nora.headers },
    );
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect(asked.method).toBe("elicitation/create");
    await post(
      "/mcp",
      { jsonrpc: "2.0", id: asked.id, result: { action: "accept" } },
      { session: id, vars, headers: nora.headers },
    );
    expect((await new Browser(vars).signIn(asked.params.url, "nora@idp")).status).toBe(200);
    expect(JSON.parse((await events.next()).value.data).method).toBe("notifications/elicitation/complete");
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final.id).toBe(43);
    expect(callerSeen(final).sub).toBe("nora@idp");
    expect(final.result.content[1].text).toHaveLength(300 * 1024);
  });

  it("a 2025 client with URL elicitation that declines gets a tool error, and is asked again next time", async () => {
    const bea = await caller();
    const id = await session(bea, "/mcp", URL_ELICITATION);
    const call = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 42, method: "tools/call", params: { name: "acme___whoami", arguments: {} } },
      { session: id, vars: VARS, headers: bea.headers },
    );
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect(
      (
        await post(
          "/mcp",
          { jsonrpc: "2.0", id: asked.id, result: { action: "decline" } },
          { session: id, vars: VARS, headers: bea.headers },
        )
      ).status,
    ).toBe(202);
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final.id).toBe(42);
    expect(final.result.isError).toBe(true);
    expect(final.result.content[0].text).toContain("declined");
  });

  it("without the rendezvous binding, a 2025 client with URL elicitation gets the -32042 error and retries", async () => {
    const cleo = await caller();
    const unbound = { ...VARS, INPUT_RENDEZVOUS: undefined };
    const id = (await initialize("/mcp", { capabilities: URL_ELICITATION, vars: unbound, headers: cleo.headers }))
      .session;
    const first = await request(
      "/mcp",
      id,
      "tools/call",
      { name: "acme___whoami", arguments: {} },
      { vars: unbound, headers: cleo.headers },
    );
    expect(first.error?.code).toBe(-32042);
    expect(first.error.message).toContain('Sign in to upstream "acme"');
    expect((await new Browser(VARS).signIn(linkOf(first), "cleo@idp")).status).toBe(200);
    expect(
      callerSeen(
        await request(
          "/mcp",
          id,
          "tools/call",
          { name: "acme___whoami", arguments: {} },
          { vars: unbound, headers: cleo.headers },
        ),
      ).sub,
    ).toBe("cleo@idp");
  });

  it("on /mcp/<upstream> too: initialize asks, and after the sign-in the client connects and calls", async () => {
    const carol = await caller();
    const refused = await answer(
      await post(
        "/mcp/acme",
        {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: URL_ELICITATION,
            clientInfo: { name: "t", version: "1" },
          },
        },
        { vars: VARS, headers: carol.headers },
      ),
    );
    expect((await new Browser(VARS).signIn(linkOf(refused), "carol@idp")).status).toBe(200);
    const id = await session(carol, "/mcp/acme");
    expect(callerSeen(await callTool(carol, id, "whoami", "/mcp/acme")).sub).toBe("carol@idp");
  });

  it("two principals get two different tokens, and each upstream call carries its caller's", async () => {
    const [alice, bob] = [await caller(), await caller()];
    const [aliceSession, bobSession] = [await signedIn(alice, "alice@idp"), await signedIn(bob, "bob@idp")];
    const seen = [
      callerSeen(await callTool(alice, aliceSession, "acme___whoami")),
      callerSeen(await callTool(bob, bobSession, "acme___whoami")),
      callerSeen(await callTool(alice, aliceSession, "acme___whoami")),
    ];
    expect(seen.map((s) => s.sub)).toEqual(["alice@idp", "bob@idp", "alice@idp"]);
    expect(seen[0]!.jti).not.toBe(seen[1]!.jti);
    expect(seen[0]!.jti).toBe(seen[2]!.jti); // alice's stored token, used again
  });

  it("a 2026-07-28 client gets input_required with a URL-mode elicitation; its retry runs the call", async () => {
    const dave = await caller();
    const call = (extra: Record<string, unknown> = {}) =>
      modern(
        "/mcp/acme",
        "tools/call",
        { name: "whoami", arguments: {}, ...extra },
        { vars: VARS, headers: dave.headers, capabilities: URL_ELICITATION },
      );
    // server/discover cannot answer input_required: it gets the -32042 error.
    const discover = await modern(
      "/mcp/acme",
      "server/discover",
      {},
      { vars: VARS, headers: dave.headers, capabilities: URL_ELICITATION },
    );
    expect(discover.error?.code, JSON.stringify(discover)).toBe(-32042);
    const asked = await call();
    expect(asked.result?.resultType, JSON.stringify(asked)).toBe("input_required");
    const question = asked.result.inputRequests["sign-in"];
    expect(question.method).toBe("elicitation/create");
    expect(question.params.mode).toBe("url");
    expect((await new Browser(VARS).signIn(question.params.url, "dave@idp")).status).toBe(200);
    const retried = await call({
      requestState: asked.result.requestState,
      inputResponses: { "sign-in": { action: "accept" } },
    });
    expect(callerSeen(retried).sub).toBe("dave@idp");
  });

  it("on /mcp too, a 2026-07-28 client's retry reaches the upstream it signed in to", async () => {
    const fay = await caller();
    const call = (extra: Record<string, unknown> = {}) =>
      modern(
        "/mcp",
        "tools/call",
        { name: "shorty___whoami", arguments: {}, ...extra },
        { vars: VARS, headers: fay.headers, capabilities: URL_ELICITATION },
      );
    const asked = await call();
    expect(asked.result?.resultType, JSON.stringify(asked)).toBe("input_required");
    expect((await new Browser(VARS).signIn(asked.result.inputRequests["sign-in"].params.url, "fay@idp")).status).toBe(
      200,
    );
    // A retry with another call's state is refused: the state is bound to this request.
    const foreign = await modern(
      "/mcp",
      "tools/call",
      { name: "acme___whoami", arguments: {}, requestState: asked.result.requestState, inputResponses: {} },
      { vars: VARS, headers: fay.headers, capabilities: URL_ELICITATION },
    );
    expect(foreign.error?.code, JSON.stringify(foreign)).toBe(-32602);
    expect(
      callerSeen(
        await call({ requestState: asked.result.requestState, inputResponses: { "sign-in": { action: "accept" } } }),
      ).sub,
    ).toBe("fay@idp");
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
  const upstreams = [
    {
      name: "byhand",
      url: `${origin}/byhand${label}/mcp`,
      auth: { type: "oauth", clientId: STATIC_CLIENT_ID, clientSecret: "BYHAND_CLIENT_SECRET" },
    },
  ];

  it.each([
    ["its secret", STATIC_CLIENT_SECRET, 200],
    ["a wrong secret", "not-the-secret-0123456789", 400],
  ])("is used with %s (client_secret_basic)", async (_label, secret, status) => {
    const vars: Vars = { ...VARS, UPSTREAMS: JSON.stringify(upstreams), BYHAND_CLIENT_SECRET: secret };
    expect(
      (await admin("PUT", "/personas/byhand-users", { roles: ["byhand-user"], allow: ["byhand___*"] }, vars)).status,
    ).toBe(200);
    const who = await caller(["byhand-user"]);
    const id = (await initialize("/mcp", { vars, headers: who.headers })).session;
    const call = () =>
      request("/mcp", id, "tools/call", { name: "byhand___whoami", arguments: {} }, { vars, headers: who.headers });
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
    expect(JSON.parse(document)).toMatchObject({
      client_id: documentUrl,
      redirect_uris: [`${gateway}/oauth/upstream/callback`],
      token_endpoint_auth_method: "none",
    });
    // The authorization server fetches the document at its URL: the fixture hands it over (gateway.test is not on the network).
    expect(
      (
        await fetch(`${origin}/client-documents`, {
          method: "POST",
          body: JSON.stringify({ url: documentUrl, document }),
        })
      ).status,
    ).toBe(204);
    expect(
      (await admin("PUT", "/personas/docs-users", { roles: ["docs-user"], allow: ["docs___*"] }, vars)).status,
    ).toBe(200);
    const who = await caller(["docs-user"]);
    const id = (await initialize(`${gateway}/mcp`, { vars, headers: who.headers })).session;
    const call = () =>
      request(
        `${gateway}/mcp`,
        id,
        "tools/call",
        { name: "docs___whoami", arguments: {} },
        { vars, headers: who.headers },
      );
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
