/**
 * End to end, per-user sign-in to an upstream: the SDK v1 Client, declaring URL-mode
 * elicitation, over real HTTP against the gateway started the way README says
 * (`npm start`), with an upstream that checks each user's token and a real authorization
 * server (oidc-provider) on loopback (test/fixtures/oauth-upstream.ts). The first call
 * is refused with the URL-elicitation-required error; a scripted browser opens the link
 * and signs in; the client's retry runs as that user.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startOAuthUpstream } from "../fixtures/oauth-upstream.ts";
import { SignInBrowser } from "../helpers/node/sign-in-browser.ts";
import { textOf } from "./tool-result.ts";

const ADMIN_TOKEN = "e2e-sign-in-admin-token";

describe("the SDK client with an upstream each user signs in to", () => {
  let fixture: Awaited<ReturnType<typeof startOAuthUpstream>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/admin${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });

  async function keyFor(principal: string): Promise<string> {
    const made = await admin("POST", "/api-keys", { principal, roles: ["e2e"] });
    expect(made.status).toBe(201);
    return ((await made.json()) as { key: string }).key;
  }

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: "e2e-sign-in", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  }

  beforeAll(async () => {
    fixture = await startOAuthUpstream();
    const port = await freePort();
    const upstreams = [{ name: "acme", url: `${fixture.upstreamOrigin}/e2e/mcp`, auth: { type: "oauth" } }];
    gateway = await startGateway({ port, vars: { UPSTREAMS: upstreams, ADMIN_TOKEN, AUTH: { apiKeys: true } }, persistTo: ".wrangler/e2e-sign-in" });
    expect((await admin("PUT", "/personas/e2e", { roles: ["e2e"], allow: ["acme___*"] })).status).toBe(200);
  });
  afterAll(async () => {
    await gateway?.stop();
    await fixture?.close();
  });

  it("is asked by URL elicitation, the user signs in, and the retried call runs as that user", async () => {
    const client = await connect(await keyFor(`e2e-${crypto.randomUUID().slice(0, 8)}`));
    try {
      const refused = await client.callTool({ name: "acme___whoami", arguments: {} }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError).code).toBe(ErrorCode.UrlElicitationRequired);
      const [elicitation] = (refused as UrlElicitationRequiredError).elicitations;
      expect(elicitation!.mode).toBe("url");
      expect(elicitation!.url.startsWith(`${gateway.url}/oauth/upstream/acme/start?link=`)).toBe(true);

      const done = await new SignInBrowser().signIn(elicitation!.url, "e2e-user@idp");
      expect(done.status).toBe(200);

      const result = await client.callTool({ name: "acme___whoami", arguments: {} });
      expect(JSON.parse(textOf(result)).sub).toBe("e2e-user@idp");
      // Signed in, the upstream's tools are listed too.
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("acme___whoami");
    } finally {
      await client.close();
    }
    expect(gateway.logs()).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/); // no token in the gateway's log
  });
});
