/**
 * End to end: a validating SDK Client (it caches each tool's outputSchema from
 * tools/list and checks structuredContent against it) against the gateway started the
 * way README says, with rules, hints and a text override on a tool that has an
 * outputSchema. The guidance arrives as extra text blocks; validation still passes.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

const ADMIN_TOKEN = "e2e-rules-admin-token-0123456789ab";

describe("rules on a tool with an outputSchema", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    alpha = await startAlpha();
    gateway = await startGateway({
      port: await freePort(),
      vars: { UPSTREAMS: [{ name: "alpha", url: alpha.url }], ADMIN_TOKEN },
      persistTo: ".wrangler/e2e-rules",
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await alpha?.close();
  });

  async function put(path: string, body: string): Promise<void> {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/yaml" },
      body,
    });
    expect(response.status, await response.clone().text()).toBe(200);
  }

  it.each(["/mcp", "/mcp/alpha"])("keeps the client's validation happy on %s", async (path) => {
    await put(
      "/rules",
      'rules:\n  - tool: "alpha___add"\n    when: { result: /structuredContent/sum, equals: 5 }\n    message: Five is a lucky sum.\nhints:\n  alpha___add: Sums are exact for integers.\n',
    );
    await put("/overrides", "tools:\n  alpha___add:\n    title: Addition\n");
    const client = new Client({ name: "e2e-rules", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`)));
    const name = path === "/mcp" ? "alpha___add" : "add";
    const { tools } = await client.listTools();
    const add = tools.find((t) => t.name === name)!;
    expect(add.outputSchema).toBeDefined();
    expect(add.title).toBe("Addition");
    const result = await client.callTool({ name, arguments: { a: 2, b: 3 } });
    expect(result.structuredContent).toEqual({ sum: 5 });
    expect((result.content as { text: string }[]).map((block) => block.text)).toEqual([
      "5",
      "Five is a lucky sum.",
      "Sums are exact for integers.",
    ]);
    await client.close();
  });
});
