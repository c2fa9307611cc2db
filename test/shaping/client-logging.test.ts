/**
 * Client logging: a client that asked for log messages (logging/setLevel) hears of the
 * gateway's own decisions on its calls (filter applied and bytes saved, payload
 * offloaded, rule fired, upstream failed) as notifications/message from the logger
 * "mcp-edge-gateway", at or above its level, on /mcp and /mcp/<upstream>; a client that
 * never asked gets none, and its answers stay plain JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_VARS, admin, putDocument } from "../helpers/admin";
import { initialize, messages, post, request, type Json } from "../helpers/gateway";
import { upstreamsVar } from "../helpers/upstreams";
import type { CallContext } from "../../src/context/call-context";
import { requestLevel } from "../../src/features/shaping/client-logging";

const OFFLOAD = JSON.stringify({ thresholdBytes: 2000, include: ["alpha___big_list"] });

beforeAll(async () => {
  const put = await admin(
    "PUT",
    "/filter-sets/default",
    "tools:\n  alpha___get_user:\n    retain: [/userInfo/login]\n",
    { contentType: "application/yaml" },
  );
  expect(put.status).toBe(200);
  await putDocument("/rules", {
    rules: [{ name: "users-hint", tool: "alpha___get_user", message: "Logins are case-sensitive." }],
  });
});
// The suite shares one KV: the filter set left here took alpha___get_user's outputSchema out of
// every later file's tools/list (guardrails-schemas failed after this file in two whole runs).
afterAll(async () => {
  await admin("DELETE", "/filter-sets/default");
  await admin("DELETE", "/rules");
});

function gatewayLogs(all: Json[]): Json[] {
  return all
    .filter((m) => m.method === "notifications/message" && m.params?.logger === "mcp-edge-gateway")
    .map((m) => m.params);
}

async function callAll(
  path: string,
  prefix: string,
  level: string | undefined,
  vars: Record<string, unknown>,
): Promise<{ logs: Json[]; types: string[] }> {
  const { session } = await initialize(path, { vars });
  if (level) expect((await request(path, session, "logging/setLevel", { level }, { vars })).result).toEqual({});
  const logs: Json[] = [];
  const types: string[] = [];
  for (const [name, args] of [
    ["get_user", { login: "ada" }],
    ["big_list", { count: 100 }],
  ] as const) {
    const response = await post(
      path,
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: `${prefix}${name}`, arguments: args } },
      { session, vars },
    );
    types.push(response.headers.get("content-type") ?? "");
    const all = await messages(response);
    expect(all[all.length - 1].result).toBeDefined();
    logs.push(...gatewayLogs(all));
  }
  return { logs, types };
}

describe.each([
  ["/mcp", "alpha___"],
  ["/mcp/alpha", ""],
])("gateway log messages on %s", (path, prefix) => {
  const vars = { ...ADMIN_VARS, OFFLOAD };

  it("never reach a client that did not ask, and its answers stay JSON", async () => {
    const { logs, types } = await callAll(path, prefix, undefined, vars);
    expect(logs).toEqual([]);
    // On /mcp the gateway frames the answer: nothing went ahead of it (alpha itself answers SSE on /mcp/alpha).
    if (path === "/mcp") expect(types).toEqual(["application/json", "application/json"]);
  });

  it("tell a client that asked at info of filters, rules and offloads", async () => {
    const { logs } = await callAll(path, prefix, "info", vars);
    expect(logs.map((l) => [l.level, l.data.event])).toEqual([
      ["info", "output-filter"],
      ["info", "rule"],
      ["info", "offload"],
    ]);
    expect(logs[0].data).toMatchObject({ filterSet: "default", rule: "alpha___get_user", tool: `${prefix}get_user` });
    expect(logs[0].data.bytesSaved).toBeGreaterThan(0);
    expect(logs[1].data.rule).toBe("users-hint");
    expect(logs[2].data.payloadId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("hold back what is below the client's level", async () => {
    const { logs } = await callAll(path, prefix, "warning", vars);
    expect(logs).toEqual([]);
  });
});

describe("a failed call", () => {
  it("is reported at error to a client that asked", async () => {
    const vars = { ...ADMIN_VARS, UPSTREAMS: upstreamsVar({ down: "http://127.0.0.1:9/mcp" }) };
    const { session } = await initialize("/mcp", { vars });
    await request("/mcp", session, "logging/setLevel", { level: "error" }, { vars });
    const all = await messages(
      await post(
        "/mcp",
        { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "down___x", arguments: {} } },
        { session, vars },
      ),
    );
    expect(all[all.length - 1].error).toBeDefined();
    expect(gatewayLogs(all)).toEqual([
      expect.objectContaining({
        level: "error",
        data: expect.objectContaining({ event: "failure", failure: "unreachable", upstream: "down" }),
      }),
    ]);
  });
});

describe("the 2026 hook", () => {
  it.each([
    ["2026-07-28", "modern", { _meta: { "io.modelcontextprotocol/logLevel": "debug" } }, "debug"],
    ["2026-07-28", "modern", { _meta: { "io.modelcontextprotocol/logLevel": "loud" } }, undefined],
    ["2026-07-28", "modern", {}, undefined],
    ["2025-11-25", "legacy", { _meta: { "io.modelcontextprotocol/logLevel": "debug" } }, undefined],
  ])("reads the level a %s (%s era) request carries in _meta (%j)", (protocolVersion, era, params, expected) => {
    const ctx = { identity: { protocolVersion, era } } as unknown as CallContext;
    expect(requestLevel(ctx, { jsonrpc: "2.0", id: 1, method: "tools/call", params })).toBe(expected);
  });
});
