/**
 * End to end: a live filter edit and the SDK's Client, which caches each tool's
 * `outputSchema` when it lists tools and validates every result against it. A filter
 * added after the client listed must not make the client throw: it hears
 * `notifications/tools/list_changed` on its GET stream, a call it makes before listing
 * again is a tool error saying so, and after listing again the call returns the filtered
 * result.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

const ADMIN_TOKEN = "e2e-filter-edit-admin-token-0123456789";

describe("a filter edited while a client holds the tool list", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  const setDefault = (init: RequestInit) =>
    fetch(`${gateway.url}/admin/filter-sets/default`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/yaml" },
    });

  beforeAll(async () => {
    alpha = await startAlpha();
    const vars = { UPSTREAMS: [{ name: "alpha", url: alpha.url }], ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "1000" };
    gateway = await startGateway({ port: await freePort(), vars, persistTo: ".wrangler/e2e-filter-edit" });
    await setDefault({ method: "DELETE" }); // local state persists between runs
  });
  afterAll(async () => {
    if (gateway) await setDefault({ method: "DELETE" });
    await gateway?.stop();
    await alpha?.close();
  });

  it("never hands the SDK client a result that contradicts the schema it holds", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    const listChanged = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()),
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    const before = await client.listTools(); // the SDK caches alpha___get_user's outputSchema and validates against it
    expect(before.tools.find((t) => t.name === "alpha___get_user")?.outputSchema).toBeDefined();

    const put = await setDefault({
      method: "PUT",
      body: "tools:\n  alpha___get_user:\n    retain: [/userInfo/login]\n",
    });
    expect(put.status).toBe(200);

    // Before listing again: { userInfo: { login } } would fail the cached schema (type and followers are required).
    const withheld = await client.callTool({ name: "alpha___get_user", arguments: { login: "ada" } });
    expect(withheld.isError).toBe(true);
    expect((withheld.content as { text: string }[])[0]!.text).toMatch(/List tools again \(tools\/list\) and retry/);
    await listChanged; // on the GET stream the SDK client opened after initialize

    const after = await client.listTools();
    expect(after.tools.find((t) => t.name === "alpha___get_user")?.outputSchema).toBeUndefined();
    const filtered = await client.callTool({ name: "alpha___get_user", arguments: { login: "ada" } });
    expect(filtered.isError).toBeFalsy();
    expect(filtered.structuredContent).toEqual({ userInfo: { login: "ada" } });
    await client.close();
  });
});
