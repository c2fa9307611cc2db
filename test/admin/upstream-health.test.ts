/**
 * Upstream health: GET /health answers liveness without calling upstreams or saying
 * anything secret; GET /admin/upstreams reports each upstream's protocol revision, last
 * success and failure, error rate and latency percentiles measured on real calls, with
 * bounded KV writes; POST /admin/upstreams/<name>/probe initializes and pings now.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { describe, expect, inject, it } from "vitest";
import { ADMIN_VARS, admin } from "../helpers/admin";
import { gatewayFetch, initialize, request, type GatewayTarget, type Json } from "../helpers/gateway";

/** The Worker, answering only once the whole answer is read and its waitUntil work (health windows) is done. */
const settled: GatewayTarget = {
  fetch: async (req, bindings, ctx) => {
    const response = await worker.fetch(req, bindings as never, ctx);
    const body = await response.arrayBuffer();
    await waitOnExecutionContext(ctx);
    return new Response(body, response);
  },
};

const { alpha, beta } = inject("fixtureUrls");
const DOWN = "http://127.0.0.1:9/mcp";

function varsFor(names: { up: string; down: string; plain?: string }): Record<string, unknown> {
  return {
    ...ADMIN_VARS,
    UPSTREAMS: JSON.stringify([
      { name: names.up, url: alpha, headers: { authorization: "Bearer upstream-secret-xyz" } },
      { name: names.down, url: DOWN },
      ...(names.plain ? [{ name: names.plain, url: beta }] : []),
    ]),
  };
}

async function report(vars: Record<string, unknown>): Promise<Record<string, Json>> {
  const response = await admin("GET", "/upstreams", undefined, { vars });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { upstreams: Json[] };
  return Object.fromEntries(body.upstreams.map((u) => [u.name, u]));
}

describe("GET /health", () => {
  it("answers without upstreams, configuration details or secrets", async () => {
    for (const vars of [
      {},
      { UPSTREAMS: '[{"name":"x","url":"http://127.0.0.1:9/mcp","headers":{"authorization":"Bearer hidden-123"}}]' },
      { UPSTREAMS: "not json hidden-123" },
    ]) {
      const response = await gatewayFetch("/health", {}, vars);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ status: "ok", name: "mcp-edge-gateway", version: expect.any(String) });
      expect(text).not.toContain("hidden-123");
    }
  });
});

describe.each([
  ["/mcp", (name: string, tool: string) => ({ path: "/mcp", tool: `${name}___${tool}` })],
  ["/mcp/<upstream>", (name: string, tool: string) => ({ path: `/mcp/${name}`, tool })],
])("GET /admin/upstreams after calls on %s", (label, routeOf) => {
  const names = { up: `up${label === "/mcp" ? "a" : "b"}`, down: `down${label === "/mcp" ? "a" : "b"}` };
  const vars = varsFor(names);

  it("reports revision, last success, error rate and latency from real traffic", async () => {
    const up = routeOf(names.up, "echo");
    const { session } = await initialize(up.path, { vars, target: settled });
    for (let i = 0; i < 3; i++)
      expect(
        (
          await request(
            up.path,
            session,
            "tools/call",
            { name: up.tool, arguments: { text: `t${i}` } },
            { vars, target: settled },
          )
        ).result,
      ).toBeDefined();
    const down = routeOf(names.down, "x");
    if (label === "/mcp") {
      for (let i = 0; i < 2; i++)
        expect(
          (await request("/mcp", session, "tools/call", { name: down.tool, arguments: {} }, { vars, target: settled }))
            .error,
        ).toBeDefined();
    } else {
      for (let i = 0; i < 2; i++)
        expect(
          await (
            await settled.fetch(
              new Request(`http://gateway.test${down.path}`, {
                method: "POST",
                headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
                body: JSON.stringify({
                  jsonrpc: "2.0",
                  id: 0,
                  method: "initialize",
                  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
                }),
              }),
              { ...env, ...vars },
              createExecutionContext(),
            )
          ).json(),
        ).toMatchObject({ error: { data: { reason: "unreachable" } } });
    }
    const upstreams = await report(vars);
    const healthy = upstreams[names.up];
    expect(healthy).toMatchObject({
      protocolVersion: "2025-11-25",
      lastFailure: null,
      recent: { errors: 0, errorRate: 0 },
    });
    expect(healthy.recent.calls).toBe(label === "/mcp" ? 3 : 4); // on /mcp/<upstream> initialize is the upstream's own
    expect(Date.parse(healthy.lastSuccess)).toBeGreaterThan(Date.now() - 60_000);
    for (const p of ["p50", "p90", "p99"]) expect(healthy.recent.latencyMs[p]).toBeGreaterThanOrEqual(0);
    const failing = upstreams[names.down];
    expect(failing).toMatchObject({
      lastSuccess: null,
      lastFailure: { reason: "unreachable" },
      recent: { calls: 2, errors: 2, errorRate: 1 },
    });
    // Bounded writes: one window per upstream per isolate per flush interval, the rest waits in memory.
    const written = await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.list({
      prefix: `upstream-health/${names.up}/`,
    });
    expect(written.keys.length).toBe(1);
    expect(JSON.stringify(upstreams)).not.toContain("upstream-secret-xyz");
  });
});

describe("POST /admin/upstreams/<name>/probe", () => {
  const vars = varsFor({ up: "probed", down: "gone", plain: "plain" });

  it.each([
    [
      "an upstream with sessions",
      "probed",
      { ok: true, protocolVersion: "2025-11-25", serverInfo: { name: "alpha", version: "1.0.0" } },
    ],
    ["an upstream without sessions", "plain", { ok: true, serverInfo: { name: "beta", version: "1.0.0" } }],
    ["an upstream that is down", "gone", { ok: false, stage: "initialize" }],
  ])("reports %s", async (_label, name, expected) => {
    const response = await admin("POST", `/upstreams/${name}/probe`, undefined, { vars });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({ upstream: name, ...expected });
    expect(body.initializeMs).toBeGreaterThanOrEqual(0);
    if (body.ok) expect(body.pingMs).toBeGreaterThanOrEqual(0);
  });

  it("answers 404 for an upstream that is not configured, and needs the admin token", async () => {
    expect((await admin("POST", "/upstreams/nope/probe", undefined, { vars })).status).toBe(404);
    expect((await gatewayFetch("/admin/upstreams", {}, vars)).status).toBe(401);
  });
});
