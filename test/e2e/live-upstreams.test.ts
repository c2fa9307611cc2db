/**
 * End to end: an upstream added through the admin API of a gateway started the way README
 * says (`npm start`), then listed by the SDK's Client with nothing restarted. The admin
 * call is a plain HTTP request, as `curl` would send it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha, startBeta } from "../fixtures/sdk-upstream.ts";

const ADMIN_TOKEN = "e2e-live-upstreams-admin-token-0123456789";

describe("an upstream added while the gateway runs", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let beta: Awaited<ReturnType<typeof startBeta>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;

  const upstreamAdmin = (init: RequestInit) =>
    fetch(`${gateway.url}/admin/upstreams/team`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    });

  beforeAll(async () => {
    [alpha, beta] = await Promise.all([startAlpha(), startBeta()]);
    const vars = { UPSTREAMS: [{ name: "alpha", url: alpha.url }], ADMIN_TOKEN };
    gateway = await startGateway({ port: await freePort(), vars, persistTo: ".wrangler/e2e-live-upstreams" });
    await upstreamAdmin({ method: "DELETE" }); // local state persists between runs
  });
  afterAll(async () => {
    if (gateway) await upstreamAdmin({ method: "DELETE" });
    await gateway?.stop();
    await Promise.all([alpha?.close(), beta?.close()]);
  });

  it("lists the new upstream's tools to an SDK client without a restart", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    const before = (await client.listTools()).tools.map((t) => t.name);
    expect(before).toContain("alpha___echo");
    expect(before.some((name) => name.startsWith("team___"))).toBe(false);

    const put = await upstreamAdmin({ method: "PUT", body: JSON.stringify({ url: beta.url }) });
    const answer = (await put.json()) as { probe: { ok: boolean; toolNames: string[] } };
    expect(put.status).toBe(201);
    expect(answer.probe.ok).toBe(true);
    expect(answer.probe.toolNames).toContain("echo");

    // The client connected before lists it too, and a new one, and the per-upstream endpoint.
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("team___echo");
    const fresh = new Client({ name: "e2e-after", version: "1.0.0" });
    await fresh.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    expect((await fresh.listTools()).tools.map((t) => t.name)).toContain("team___echo");
    const called = await fresh.callTool({ name: "team___echo", arguments: { text: "added live" } });
    expect(JSON.stringify(called.content)).toContain("added live");
    const direct = new Client({ name: "e2e-direct", version: "1.0.0" });
    await direct.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/team`)));
    expect((await direct.listTools()).tools.map((t) => t.name)).toContain("echo");
    await Promise.all([client.close(), fresh.close(), direct.close()]);
  });
});
