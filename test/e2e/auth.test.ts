/**
 * End to end with authentication on: the SDK's Client over real HTTP against the gateway
 * started the way README says (`npm start -- --var AUTH:...`), once with an API key made
 * through the admin API and once with a JWT from an issuer whose JWKS is served on
 * loopback. Without credentials the gateway answers 401 with its metadata URL.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startJwksServer } from "../fixtures/jwks-server.ts";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

const ADMIN_TOKEN = "e2e-auth-admin-token-0123456789abcd";
const ISSUER = "https://idp.e2e.test";

describe("the SDK client with credentials", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let jwks: Awaited<ReturnType<typeof startJwksServer>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  async function connect(authorization: string): Promise<Client> {
    const client = new Client({ name: "e2e-auth", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization } } }),
    );
    return client;
  }

  beforeAll(async () => {
    [alpha, jwks] = await Promise.all([startAlpha(), startJwksServer()]);
    const port = await freePort();
    const auth = {
      apiKeys: true,
      jwt: { issuer: ISSUER, audience: `http://127.0.0.1:${port}/mcp`, jwksUrl: jwks.url, rolesClaim: "groups" },
    };
    gateway = await startGateway({
      port,
      vars: { UPSTREAMS: [{ name: "alpha", url: alpha.url }], ADMIN_TOKEN, AUTH: auth },
      persistTo: ".wrangler/e2e-auth",
    });
    expect(
      (await admin("PUT", "/personas/e2e", { roles: ["e2e"], allow: ["alpha___echo", "alpha___whoami"] })).status,
    ).toBe(200);
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([alpha?.close(), jwks?.close()]);
  });

  it("refuses a client without credentials, naming the metadata", async () => {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    });
    expect(response.status).toBe(401);
    // API keys and an issuer's tokens: the client is told both, and the header.
    const hint =
      "this gateway takes API keys or access tokens of the authorization server its metadata names: " +
      "send the header Authorization: Bearer <API key or access token>";
    const metadata = `${gateway.url}/.well-known/oauth-protected-resource/mcp`;
    const challenge = response.headers.get("www-authenticate");
    expect(challenge).toBe(`Bearer resource_metadata="${metadata}", error_description="${hint}"`);
    expect(gateway.logs()).not.toContain("Authentication is OFF");
  });

  it("lists and calls with an API key, never forwarding it", async () => {
    const made = await admin("POST", "/api-keys", { principal: "e2e-user", roles: ["e2e"] });
    expect(made.status).toBe(201);
    const { key } = (await made.json()) as { key: string };
    const client = await connect(`Bearer ${key}`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["alpha___echo", "alpha___whoami", "sys___read_payload"]);
    const echoed = await client.callTool({ name: "alpha___echo", arguments: { text: "with a key" } });
    expect((echoed.content as { text: string }[])[0]!.text).toBe("alpha: with a key");
    const seen = await client.callTool({ name: "alpha___whoami", arguments: {} });
    expect((seen.content as { text: string }[])[0]!.text).not.toContain(key);
    await expect(client.callTool({ name: "alpha___add", arguments: { a: 1, b: 2 } })).rejects.toThrow(
      /Unknown tool: alpha___add/,
    );
    await client.close();
  });

  it("lists and calls with a JWT", async () => {
    const key = jwks.keys.ec;
    const token = await new SignJWT({ groups: ["e2e"], email: "jwt@example.com" })
      .setProtectedHeader({ alg: "ES256", kid: key.kid! })
      .setIssuer(ISSUER)
      .setAudience(`${gateway.url}/mcp`)
      .setSubject("jwt-user")
      .setExpirationTime("5m")
      .sign(await importJWK(key, "ES256"));
    const client = await connect(`Bearer ${token}`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("alpha___echo");
    const echoed = await client.callTool({ name: "alpha___echo", arguments: { text: "with a token" } });
    expect((echoed.content as { text: string }[])[0]!.text).toBe("alpha: with a token");
    await client.close();
  });
});
