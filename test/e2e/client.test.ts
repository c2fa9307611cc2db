/**
 * End to end: the SDK's Client over real HTTP against the gateway started the way
 * README says (`npm start`, i.e. wrangler dev with the demo upstream beside it).
 *
 * Statelessness is shown with real processes: one client's requests alternate between
 * two separate gateways, so a sampling request from one is answered through the other;
 * and a session outlives a restart of its gateway.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";
import { textOf } from "./tool-result.ts";

const ADMIN_TOKEN = "e2e-admin-token-0123456789abcdefgh";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

describe("the demo upstream, with no configuration", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway({ port: await freePort() });
  });
  afterAll(async () => gateway?.stop());

  it("shows the demo's tools at /mcp and calls them", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["demo___echo", "demo___add", "demo___get_forecast"]),
    );
    expect(textOf(await client.callTool({ name: "demo___echo", arguments: { text: "hello" } }))).toContain("hello");
    const sum = await client.callTool({ name: "demo___add", arguments: { a: 2, b: 3 } });
    expect(sum.structuredContent).toEqual({ sum: 5 });
    await client.close();
  });

  it("runs open, and says so, when AUTH is not set", () => {
    expect(gateway.logs()).toContain('Authentication is OFF (AUTH={"mode":"off"})');
  });
});

describe("a session across gateway processes", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let first: Gateway;
  let second: Gateway;
  let vars: Record<string, unknown>;

  beforeAll(async () => {
    alpha = await startAlpha();
    vars = { UPSTREAMS: [{ name: "alpha", url: alpha.url }], ADMIN_TOKEN };
    // No SESSION_SECRET: `npm start` supplies the same stable development key to both.
    first = await startGateway({ port: await freePort(), vars, persistTo: ".wrangler/e2e-first" });
    second = await startGateway({ port: await freePort(), vars, persistTo: ".wrangler/e2e-second" });
  });
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await alpha?.close();
  });

  it("answers a sampling request through the other gateway", async () => {
    const bases = [first.url, second.url];
    const posts: { gateway: number; kind: string }[] = [];
    let turn = 0;
    const alternate: typeof fetch = async (input, init) => {
      const gateway = turn++ % 2;
      const url = new URL(input instanceof Request ? input.url : String(input));
      const target = new URL(bases[gateway]!);
      url.host = target.host;
      if (init?.method === "POST" && typeof init.body === "string") {
        const message = JSON.parse(init.body) as { method?: string; result?: unknown };
        posts.push({ gateway, kind: message.method ?? (message.result ? "answer" : "other") });
      }
      return fetch(url, init);
    };
    const client = new Client({ name: "e2e", version: "1.0.0" }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "forty-two" },
      model: "e2e-model",
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), { fetch: alternate }));

    const result = await client.callTool({ name: "alpha___ask_llm", arguments: { question: "meaning?" } });
    expect(textOf(result)).toBe("model said: forty-two");
    const call = posts.find((p) => p.kind === "tools/call")!;
    const answer = posts.find((p) => p.kind === "answer")!;
    expect(answer.gateway).not.toBe(call.gateway);
    await client.close();
  });

  it("continues a session after its gateway restarts", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`));
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: "alpha___echo", arguments: { text: "before" } }))).toBe(
      "alpha: before",
    );
    const sessionId = transport.sessionId;

    const port = first.port;
    await first.stop();
    first = await startGateway({ port, vars, persistTo: ".wrangler/e2e-first" });

    expect(textOf(await client.callTool({ name: "alpha___echo", arguments: { text: "after" } }))).toBe("alpha: after");
    expect(transport.sessionId).toBe(sessionId);
    await client.close();
  });

  it("keeps a client that validates structuredContent working when a filter reshapes it", async () => {
    const put = await fetch(`${first.url}/admin/filter-sets/default`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/yaml" },
      body: "tools:\n  alpha___get_user:\n    retain: [/userInfo/login]\n",
    });
    expect(put.status).toBe(200);
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`)));
    const { tools } = await client.listTools(); // the SDK caches output schemas from here and validates against them
    expect(tools.find((t) => t.name === "alpha___get_user")?.outputSchema).toBeUndefined();
    const result = await client.callTool({ name: "alpha___get_user", arguments: { login: "ada" } });
    expect(result.structuredContent).toEqual({ userInfo: { login: "ada" } });
    await client.close();
    await fetch(`${first.url}/admin/filter-sets/default`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
  });
});
