/**
 * End to end, the clients people use sign in to the gateway started the way README says
 * (`npm start`, AUTH.signIn on), their users logging in at a real oidc-provider on loopback
 * (test/fixtures/operator-idp.ts) through a scripted browser that follows redirects and
 * submits the provider's login form and the gateway's consent form:
 *
 * - the SDK v1 Client with an `OAuthClientProvider` whose client id is a Client ID Metadata
 *   Document served over http on loopback (taken because the gateway runs locally);
 * - the SDK v2 client (`@modelcontextprotocol/client`), registering itself (RFC 7591);
 * - `mcp-remote` over stdio, as Claude Desktop runs it: the authorization URL it prints is
 *   opened by the scripted browser, which ends at mcp-remote's own callback server.
 *
 * (test/e2e/client-sign-in.test.ts signs the SDK v1 client in with dynamic registration.)
 * Each ends with tools/list and a call as the signed-in user: their persona hides
 * `demo___add`, which is absent from the list and refused when called, and the gateway's
 * `/oauth/grants` answers the client's token with that user's grant.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  UnauthorizedError as ModernUnauthorizedError,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../scripts/lib/gateway-process.mjs";
import { startClientMetadataServer } from "../fixtures/client-metadata-server.ts";
import { ClientSignInBrowser } from "../helpers/node/client-sign-in-browser.ts";
import { ScriptedProvider, startSignInGateway, type SignInGateway } from "../helpers/node/sign-in-gateway.ts";
import { textOf } from "./tool-result.ts";

const ADMIN_TOKEN = "e2e-client-sign-in-clients-admin-0123456789";
/** A native client's redirect URI: nothing listens there, the scripted browser stops at it. */
const REDIRECT = "http://127.0.0.1:33421/callback";
const HIDDEN = "demo___add";
const MCP_REMOTE = createRequire(import.meta.url).resolve("mcp-remote/dist/proxy.js");
const AUTHORIZE_PROMPT = /Please authorize this client by visiting:\s+(\S+)/;

type Lister = {
  listTools: () => Promise<{ tools: { name: string }[] }>;
  callTool: (call: { name: string; arguments: Record<string, unknown> }) => Promise<unknown>;
};

/** What a call answered, or the message of the error it was refused with. */
async function answerOf(client: Lister, name: string, args: Record<string, unknown>): Promise<string> {
  try {
    return textOf((await client.callTool({ name, arguments: args })) as Parameters<typeof textOf>[0]);
  } catch (error) {
    return (error as Error).message;
  }
}

describe("real clients signing in to npm start", () => {
  let gateway: SignInGateway;
  let documents: Awaited<ReturnType<typeof startClientMetadataServer>>;

  /** tools/list and calls as the person: the persona applied, the grant theirs. */
  async function expectSignedInAs(client: Lister, token: string, user: string, clientName: string) {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("demo___echo");
    expect(names).not.toContain(HIDDEN);
    expect(await answerOf(client, "demo___echo", { text: `hello ${user}` })).toBe(`hello ${user}`);
    expect(await answerOf(client, HIDDEN, { a: 1, b: 2 })).toContain(`Unknown tool: ${HIDDEN}`);
    const grants = await fetch(`${gateway.url}/oauth/grants`, { headers: { authorization: `Bearer ${token}` } });
    expect(grants.status).toBe(200);
    const { grants: listed } = (await grants.json()) as { grants: { email: string; clientName: string }[] };
    expect(listed.map((grant) => [grant.email, grant.clientName])).toEqual([[`${user}@example.test`, clientName]]);
  }

  beforeAll(async () => {
    documents = await startClientMetadataServer();
    const persona = { roles: ["gateway-users"], allow: ["demo___*"], deny: [HIDDEN] };
    gateway = await startSignInGateway({
      adminToken: ADMIN_TOKEN,
      persistTo: ".wrangler/e2e-sign-in-clients",
      persona,
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await documents?.close();
  });

  it("the SDK v1 client with a metadata document served over http on loopback", async () => {
    const clientId = documents.documentUrl("sdk-v1");
    const document = { client_id: clientId, client_name: "e2e CIMD client", redirect_uris: [REDIRECT] };
    expect((await fetch(clientId, { method: "PUT", body: JSON.stringify(document) })).ok).toBe(true);
    const provider = new ScriptedProvider("e2e-cimd", REDIRECT, "e2e CIMD client", clientId);
    const url = new URL(`${gateway.url}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client({ name: "e2e-cimd", version: "1.0.0" });
    await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toBe(clientId);
    await first.finishAuth(provider.code!);
    const signedIn = new Client({ name: "e2e-cimd", version: "1.0.0" });
    await signedIn.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    await expectSignedInAs(signedIn, provider.saved!.access_token, "e2e-cimd", "e2e CIMD client");
    await signedIn.close();
  });

  it("the SDK v2 client, registering itself", async () => {
    const provider = new ScriptedProvider("e2e-modern", REDIRECT, "e2e SDK v2 client");
    const url = new URL(`${gateway.url}/mcp`);
    const first = new ModernTransport(url, { authProvider: provider });
    const client = new ModernClient({ name: "e2e-modern", version: "1.0.0" });
    await expect(client.connect(first)).rejects.toBeInstanceOf(ModernUnauthorizedError);
    expect(provider.client?.client_id).toBeTruthy();
    await first.finishAuth(provider.callback!.searchParams);
    const signedIn = new ModernClient({ name: "e2e-modern", version: "1.0.0" });
    await signedIn.connect(new ModernTransport(url, { authProvider: provider }));
    await expectSignedInAs(signedIn, provider.saved!.access_token, "e2e-modern", "e2e SDK v2 client");
    await signedIn.close();
  });

  it("mcp-remote over stdio, its browser step done by the scripted browser", async () => {
    const config = await mkdtemp(path.join(tmpdir(), "mcp-remote-"));
    const callbackPort = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, `${gateway.url}/mcp`, String(callbackPort)],
      // Its config (tokens) in a fresh folder; `BROWSER=true`: the opener it tries does nothing.
      env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: config, BROWSER: "true" },
      stderr: "pipe",
    });
    let printed = "";
    const prompt = new Promise<string>((resolve) => {
      transport.stderr!.on("data", (chunk: Buffer) => {
        printed += chunk.toString("utf8");
        const match = AUTHORIZE_PROMPT.exec(printed);
        if (match) resolve(match[1]!);
      });
    });
    const client = new Client({ name: "e2e-mcp-remote", version: "1.0.0" });
    try {
      const connected = client.connect(transport);
      const authorizeUrl = await prompt;
      const callback = `http://localhost:${callbackPort}/oauth/callback`;
      const end = await new ClientSignInBrowser("e2e-remote").walk(authorizeUrl, callback);
      expect(end.redirect?.searchParams.get("code"), JSON.stringify(end.page)).toBeTruthy();
      // The browser arrives at mcp-remote's callback server, which exchanges the code.
      expect((await fetch(end.redirect!)).status).toBe(200);
      await connected;
      const tokens = await findTokens(config);
      await expectSignedInAs(client, tokens.access_token, "e2e-remote", "MCP CLI Proxy");
    } finally {
      await client.close();
      await rm(config, { recursive: true, force: true });
    }
  });
});

/** The tokens mcp-remote saved in its config folder (`<hash>_tokens.json`). */
async function findTokens(config: string): Promise<{ access_token: string }> {
  const { readdir, readFile } = await import("node:fs/promises");
  for (const entry of await readdir(config, { recursive: true })) {
    if (entry.endsWith("_tokens.json")) return JSON.parse(await readFile(path.join(config, entry), "utf8"));
  }
  throw new Error(`mcp-remote saved no tokens in ${config}`);
}
