/**
 * End to end, a client that speaks OAuth only signs in to the gateway (AUTH.signIn): the
 * SDK v1 Client with an `OAuthClientProvider`, over real HTTP against the gateway started
 * the way README says (`npm start`), with the operator's OpenID Connect provider a real
 * oidc-provider on loopback (test/fixtures/operator-idp.ts). The client finds the gateway
 * as its authorization server from the 401, registers itself (RFC 7591), sends the person's
 * browser (scripted: it logs in at the provider and allows on the consent page) and ends
 * with a token that lists and calls tools as that person, with their persona; the person
 * then lists the client they allowed and revokes it, which ends its tokens at once. A person
 * in a real Chromium (the @sparticuz/chromium build the console tests use) logs in, reads
 * the consent page (no serious accessibility violation, fits 375 px; its screenshot in
 * docs/client-sign-in/ is rewritten with UPDATE_SIGN_IN_SCREENSHOTS=1) and allows.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptedProvider, startSignInGateway, type SignInGateway } from "../helpers/node/sign-in-gateway.ts";
import { textOf } from "./tool-result.ts";
import { launchChromium, seriousViolations } from "./console-browser.ts";
import { createHash } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ADMIN_TOKEN = "e2e-client-sign-in-admin-token-0123456789";
const REDIRECT = "http://127.0.0.1:33419/callback";
/** The consent page's screenshot in docs is rewritten only when asked (UPDATE_SIGN_IN_SCREENSHOTS=1). */
const DOCS_SCREENSHOTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "docs",
  "client-sign-in",
);

describe("an OAuth-only client signing in to the gateway", () => {
  let gateway: SignInGateway;

  beforeAll(async () => {
    const persona = { roles: ["gateway-users"], allow: ["demo___*"], deny: ["demo___add"] };
    gateway = await startSignInGateway({ adminToken: ADMIN_TOKEN, persistTo: ".wrangler/e2e-client-sign-in", persona });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it("registers, signs the person in, and calls a tool as them", async () => {
    const provider = new ScriptedProvider("e2e-ada", REDIRECT, "e2e SDK client");
    const url = new URL(`${gateway.url}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: "e2e-client-sign-in", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.client?.client_id).toBeTruthy();
    await first.finishAuth(provider.code!);
    expect(provider.saved?.access_token).toBeTruthy();

    const client = new Client({ name: "e2e-client-sign-in", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name).filter((name) => !name.startsWith("sys___"));
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => name.startsWith("demo___"))).toBe(true);
    expect(names, "the persona hides it").not.toContain("demo___add");
    const echo = names.find((name) => name.endsWith("echo")) ?? names[0]!;
    const result = await client.callTool({ name: echo, arguments: { text: "signed in" } });
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(textOf(result)).toBe("signed in");
    await client.close();
  });

  it("works for a person in Chromium: the provider's login, a readable consent page, Allow", async () => {
    const registration = {
      client_name: "Chromium test app",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"],
      response_types: ["code"],
    };
    const registered = await fetch(`${gateway.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(registration),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const authorize = new URL(`${gateway.url}/oauth/authorize`);
    const challenge = createHash("sha256")
      .update("chromium-verifier-0123456789-0123456789-0123456789")
      .digest("base64url");
    for (const [key, value] of Object.entries({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: "s1",
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${gateway.url}/mcp`,
    }))
      authorize.searchParams.set(key, value);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 375, height: 700 } });
      await page.goto(authorize.href);
      await page.locator('input[name="login"]').fill("e2e-cy");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page
        .getByRole("heading", { level: 1, name: /Allow Chromium test app to use the MCP gateway as you/ })
        .waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      expect(await seriousViolations(page)).toEqual([]);
      const screenshots = process.env["UPDATE_SIGN_IN_SCREENSHOTS"]
        ? DOCS_SCREENSHOTS
        : await mkdtemp(path.join(tmpdir(), "sign-in-shots-"));
      await page.setViewportSize({ width: 960, height: 540 });
      expect((await page.screenshot({ path: path.join(screenshots, "consent.png") })).length).toBeGreaterThan(0);
      // The browser is sent back to the app's redirect URI (nothing listens there in the test: the request is enough).
      const back = page.waitForRequest((request) => request.url().startsWith(REDIRECT));
      await page.getByRole("button", { name: "Allow" }).click();
      const redirected = new URL((await back).url());
      expect(redirected.searchParams.get("code")).toBeTruthy();
      expect(redirected.searchParams.get("state")).toBe("s1");
    } finally {
      await browser.close();
    }
  });

  it("lets the person list the client they allowed and revoke it, which ends its tokens at once", async () => {
    const provider = new ScriptedProvider("e2e-bea", REDIRECT, "e2e SDK client");
    const url = new URL(`${gateway.url}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: "e2e-client-sign-in", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await first.finishAuth(provider.code!);
    const { access_token: token, refresh_token: refresh } = provider.saved!;
    const bearer = { authorization: `Bearer ${token}` };
    const listed = (await (await fetch(`${gateway.url}/oauth/grants`, { headers: bearer })).json()) as {
      grants: { id: string; clientName: string }[];
    };
    expect(listed.grants.map((grant) => grant.clientName)).toEqual(["e2e SDK client"]);
    const revoked = await fetch(`${gateway.url}/oauth/grants?grant=${listed.grants[0]!.id}`, {
      method: "DELETE",
      headers: bearer,
    });
    expect(revoked.status).toBe(200);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "e2e", version: "1" } },
    };
    const refused = await fetch(url, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initialize),
    });
    expect(refused.status).toBe(401);
    const form = new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refresh!,
      client_id: provider.client!.client_id,
    });
    const refreshed = await fetch(`${gateway.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
  });
});
