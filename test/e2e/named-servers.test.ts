/**
 * End to end: a named server stored through the admin API of a gateway started the way README
 * says (`npm start`), then used by the SDK's Client on its own URL, /mcp/servers/<name>: its
 * picks listed under their aliases, a call by alias answered, any other tool refused, an edit
 * seen with nothing restarted. The admin calls are plain HTTP requests, as `curl` sends them.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha, startBeta } from "../fixtures/sdk-upstream.ts";

const ADMIN_TOKEN = "e2e-named-servers-admin-token-0123456789";

describe("a named server on its own URL", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let beta: Awaited<ReturnType<typeof startBeta>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  const serverAdmin = (init: RequestInit) =>
    fetch(`${gateway.url}/admin/servers/support`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    });

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([startAlpha(), startBeta()]);
    const upstreams = [
      { name: "alpha", url: alpha.url },
      { name: "beta", url: beta.url },
    ];
    const vars = { UPSTREAMS: upstreams, ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "0" };
    gateway = await startGateway({ port: await freePort(), vars, persistTo: ".wrangler/e2e-named-servers" });
    await serverAdmin({ method: "DELETE" }); // local state persists between runs
  });
  afterAll(async () => {
    if (gateway) await serverAdmin({ method: "DELETE" });
    await gateway?.stop();
    await Promise.all([alpha?.close(), beta?.close()]);
  });

  it("serves its picks under their aliases to an SDK client, and follows an edit", async () => {
    const document = {
      title: "Support",
      instructions: "Use say to repeat a customer's words.",
      tools: [{ pick: "alpha___echo", alias: "say" }, "beta___echo"],
    };
    expect((await serverAdmin({ method: "PUT", body: JSON.stringify(document) })).status).toBe(201);
    const client = new Client({ name: "e2e-named", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/servers/support`)));
    expect(client.getInstructions()).toBe(document.instructions);
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith("sys___"));
    expect(names.sort()).toEqual(["beta___echo", "say"]);
    const said = await client.callTool({ name: "say", arguments: { text: "hello there" } });
    expect(JSON.stringify(said.content)).toContain("alpha: hello there");
    await expect(client.callTool({ name: "alpha___add", arguments: { a: 1, b: 2 } })).rejects.toThrow(
      /Unknown tool: alpha___add \(not served by "support"/,
    );

    const edited = { tools: [{ pick: "alpha___add", alias: "plus" }] };
    expect((await serverAdmin({ method: "PUT", body: JSON.stringify(edited) })).status).toBe(200);
    const after = (await client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith("sys___"));
    expect(after).toEqual(["plus"]);
    const sum = await client.callTool({ name: "plus", arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(sum.content)).toContain("5");
    await client.close();
  });
});
