/**
 * End to end: an SDK client configured with `/mcp?catalog=search` against the gateway
 * started as README says (`npm start`, the demo upstream beside it) sees only the
 * gateway's tools, finds a tool by describing a task, and calls it through
 * sys___call_tool.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { textOf } from "./tool-result.ts";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

describe("search mode with a real client", () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway({ port: await freePort() });
  });
  afterAll(async () => gateway?.stop());

  it("finds the forecast tool by a task and calls it", async () => {
    const client = new Client({ name: "e2e-search", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp?catalog=search`)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["sys___call_tool", "sys___read_payload", "sys___search_tools"]);
    const found = JSON.parse(
      textOf(
        await client.callTool({
          name: "sys___search_tools",
          arguments: { query: "will it rain in Lisbon tomorrow?", limit: 3 },
        }),
      ),
    );
    expect(found.tools[0].name).toBe("demo___get_forecast");
    expect(found.tools[0].inputSchema.properties.city.description).toContain("City name");
    const forecast = await client.callTool({
      name: "sys___call_tool",
      arguments: { name: found.tools[0].name, arguments: { city: "Lisbon", days: 1 } },
    });
    expect(textOf(forecast)).toContain("Lisbon");
    await client.close();
  });
});
