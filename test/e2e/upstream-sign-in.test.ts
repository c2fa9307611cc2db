/**
 * End to end, per-user sign-in to an upstream: the SDK v1 Client, declaring URL-mode
 * elicitation, over real HTTP against the gateway started the way README says
 * (`npm start`), with an upstream that checks each user's token and a real authorization
 * server (oidc-provider) on loopback (test/fixtures/oauth-upstream.ts). The first call
 * asks the client with a URL-mode `elicitation/create`; the client's handler accepts and
 * "opens" the link in a scripted browser, which signs in; the call then completes as that user.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startOAuthUpstream } from "../fixtures/oauth-upstream.ts";
import { SignInBrowser } from "../helpers/node/sign-in-browser.ts";
import { textOf } from "./tool-result.ts";

const ADMIN_TOKEN = "e2e-sign-in-admin-token-0123456789";

describe("the SDK client with an upstream each user signs in to", () => {
  let fixture: Awaited<ReturnType<typeof startOAuthUpstream>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  async function keyFor(principal: string): Promise<string> {
    const made = await admin("POST", "/api-keys", { principal, roles: ["e2e"] });
    expect(made.status).toBe(201);
    return ((await made.json()) as { key: string }).key;
  }

  /** A client declaring URL elicitation whose handler accepts and opens each link in a browser signing in as `user`. */
  async function connect(
    key: string,
    user: string,
    opened: { url: string; signedIn: Promise<Response> }[],
  ): Promise<Client> {
    const client = new Client(
      { name: "e2e-sign-in", version: "1.0.0" },
      { capabilities: { elicitation: { url: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      if (request.params.mode !== "url") return { action: "decline" };
      // What a real client does after the user consents: open the URL in a browser, and accept.
      opened.push({ url: request.params.url, signedIn: new SignInBrowser().signIn(request.params.url, user) });
      return { action: "accept" };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  }

  beforeAll(async () => {
    fixture = await startOAuthUpstream();
    const port = await freePort();
    const upstreams = [{ name: "acme", url: `${fixture.upstreamOrigin}/e2e/mcp`, auth: { type: "oauth" } }];
    gateway = await startGateway({
      port,
      vars: { UPSTREAMS: upstreams, ADMIN_TOKEN, AUTH: { apiKeys: true } },
      persistTo: ".wrangler/e2e-sign-in",
    });
    expect((await admin("PUT", "/personas/e2e", { roles: ["e2e"], allow: ["acme___*"] })).status).toBe(200);
  });
  afterAll(async () => {
    await gateway?.stop();
    await fixture?.close();
  });

  it("is asked by URL elicitation, the user signs in, and the same call completes as that user", async () => {
    const opened: { url: string; signedIn: Promise<Response> }[] = [];
    const client = await connect(await keyFor(`e2e-${crypto.randomUUID().slice(0, 8)}`), "e2e-user@idp", opened);
    try {
      const result = await client.callTool({ name: "acme___whoami", arguments: {} });
      expect(opened).toHaveLength(1);
      expect(opened[0]!.url.startsWith(`${gateway.url}/oauth/upstream/acme/start?link=`)).toBe(true);
      expect((await opened[0]!.signedIn).status).toBe(200);
      expect(JSON.parse(textOf(result)).sub).toBe("e2e-user@idp");
      // Signed in: the next call asks nothing, and the upstream's tools are listed too.
      expect(JSON.parse(textOf(await client.callTool({ name: "acme___whoami", arguments: {} }))).sub).toBe(
        "e2e-user@idp",
      );
      expect(opened).toHaveLength(1);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("acme___whoami");
    } finally {
      await client.close();
    }
    expect(gateway.logs()).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/); // no token in the gateway's log
  });
});
