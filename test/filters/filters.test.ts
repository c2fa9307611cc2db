/**
 * Output filters through the gateway, inside workerd with the real KV binding: sets
 * written through the admin API or straight into KV, applied to real upstream results
 * on both routes, changed while running, failing closed, in shadow mode.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { gatewayFetch, initialize, request, type Json } from "../helpers/gateway";

const ADMIN_TOKEN = "admin-token-for-tests-0123456789ab";
const VARS = { ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "30000" };

function admin(method: string, path: string, body?: string, contentType = "application/json"): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (body !== undefined) headers["content-type"] = contentType;
  return gatewayFetch(`/admin${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }, VARS);
}

async function callGetUser(path = "/mcp", kind = "person", vars: Record<string, unknown> = VARS): Promise<Json> {
  const { session } = await initialize(path, { vars });
  const name = path === "/mcp" ? "alpha___get_user" : "get_user";
  return (await request(path, session, "tools/call", { name, arguments: { login: "ada", kind } }, { vars })).result;
}

const PARTNER_YAML = `
description: what a partner may see
tools:
  alpha___get_user:
    retain: [/userInfo]
    patches:
      - { op: remove, path: /userInfo/bioHTML }
      - { op: replace, path: /userInfo/city, value: "Parigné-le-Pôlin" }
`;

afterEach(async () => {
  for (const name of ["default", "partner", "variants", "broken", "shadow", "strict"])
    await admin("DELETE", `/filter-sets/${name}`);
  await admin("DELETE", "/plan");
});

describe("the admin API", () => {
  it("does not exist without ADMIN_TOKEN, and wants the right bearer", async () => {
    expect((await gatewayFetch("/admin/filter-sets", { headers: { authorization: "Bearer x" } })).status).toBe(404);
    expect((await gatewayFetch("/admin/filter-sets", {}, VARS)).status).toBe(401);
    expect(
      (await gatewayFetch("/admin/filter-sets", { headers: { authorization: "Bearer wrong" } }, VARS)).status,
    ).toBe(401);
    expect((await admin("GET", "/filter-sets")).status).toBe(200);
  });

  it("stores YAML or JSON, lists, reads back and deletes", async () => {
    expect((await admin("PUT", "/filter-sets/partner", PARTNER_YAML, "application/yaml")).status).toBe(200);
    expect((await admin("PUT", "/filter-sets/default", '{"tools":{"beta___*":{"retain":[""]}}}')).status).toBe(200);
    expect(await (await admin("GET", "/filter-sets")).json()).toEqual({ filterSets: ["default", "partner"] });
    const stored = (await (await admin("GET", "/filter-sets/partner")).json()) as Json;
    expect(stored.tools.alpha___get_user.patches[1].value).toBe("Parigné-le-Pôlin");
    expect((await admin("DELETE", "/filter-sets/partner")).status).toBe(200);
    expect((await admin("GET", "/filter-sets/partner")).status).toBe(404);
  });

  it("rejects invalid documents with every error located, and stores nothing", async () => {
    const bad =
      '{"tools":{"alpha___get_user":{"retain":["userInfo"],"patches":[{"op":"remove"},{"op":"add","path":"/a"}]}},"mode":"maybe"}';
    const response = await admin("PUT", "/filter-sets/strict", bad);
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(body.problems.map((p: Json) => p.path)).toEqual([
      "/mode",
      "/tools/alpha___get_user/retain/0",
      "/tools/alpha___get_user/patches/0",
      "/tools/alpha___get_user/patches/1",
    ]);
    expect((await admin("GET", "/filter-sets/strict")).status).toBe(404);
    const unclosed = await admin("PUT", "/filter-sets/strict", "tools: [unclosed", "application/yaml");
    expect(unclosed.status).toBe(400);
    // The YAML parser's first line, as the admin API has always said it (docs/admin-api.md).
    expect(((await unclosed.json()) as Json).problems).toEqual([
      {
        path: "",
        message:
          "neither JSON nor YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 1, column 17:",
      },
    ]);
    expect((await admin("PUT", "/filter-sets/bad%20name", '{"tools":{}}')).status).toBe(400);
    expect((await admin("PUT", "/plan", '{"routes":{"/elsewhere":"x"}}')).status).toBe(400);
  });

  it("previews a set on a sample result, with the bytes saved", async () => {
    await admin("PUT", "/filter-sets/partner", PARTNER_YAML, "application/yaml");
    const sample = {
      content: [],
      structuredContent: { userInfo: { login: "ada", city: "Paris", bioHTML: "<p>long</p>" }, followers: [1, 2, 3] },
    };
    const response = await admin(
      "POST",
      "/filter-sets/partner/preview",
      JSON.stringify({ tool: "alpha___get_user", result: sample }),
    );
    const body = (await response.json()) as Json;
    expect(body.filtered.structuredContent).toEqual({ userInfo: { login: "ada", city: "Parigné-le-Pôlin" } });
    expect(body.bytesSaved).toBe(body.bytesBefore - body.bytesAfter);
    expect(body.bytesSaved).toBeGreaterThan(0);
    const failing = await admin(
      "POST",
      "/filter-sets/partner/preview",
      JSON.stringify({ tool: "alpha___get_user", result: { content: [], structuredContent: { other: 1 } } }),
    );
    expect(failing.status).toBe(422);
    expect(((await failing.json()) as Json).error).toMatch(
      /filter set "partner", rule "alpha___get_user".*retain failed/,
    );
  });
});

describe("filtering calls", () => {
  it("applies the default set on both routes, to structuredContent and JSON text", async () => {
    await admin("PUT", "/filter-sets/default", PARTNER_YAML, "application/yaml");
    for (const path of ["/mcp", "/mcp/alpha"]) {
      const result = await callGetUser(path);
      const expected = {
        userInfo: {
          login: "ada",
          type: "PhysicalPerson",
          person: { name: "Ada", age: 36 },
          city: "Parigné-le-Pôlin",
          companyHTML: "<b>co</b>",
        },
      };
      expect(result.structuredContent).toEqual(expected);
      expect(JSON.parse(result.content[0].text)).toEqual(expected);
    }
  });

  it("removes the outputSchema of filtered tools only, and says why", async () => {
    await admin("PUT", "/filter-sets/default", PARTNER_YAML, "application/yaml");
    const { session } = await initialize("/mcp", { vars: VARS });
    const tools = (await request("/mcp", session, "tools/list", undefined, { vars: VARS })).result.tools as Json[];
    const getUser = tools.find((t) => t.name === "alpha___get_user");
    expect(getUser.outputSchema).toBeUndefined();
    expect(getUser._meta["mcp-edge-gateway/output-filter"]).toMatchObject({ set: "default" });
    expect(tools.find((t) => t.name === "alpha___add").outputSchema).toBeDefined();
  });

  it("chooses variants by their test", async () => {
    await admin(
      "PUT",
      "/filter-sets/default",
      JSON.stringify({
        tools: {
          "alpha___get_*": [
            { test: { path: "/userInfo/type", value: "PhysicalPerson" }, retain: ["/userInfo/person"] },
            { test: { path: "/userInfo/type", value: "MoralPerson" }, retain: ["/userInfo/entity"] },
          ],
        },
      }),
    );
    expect((await callGetUser("/mcp", "person")).structuredContent).toEqual({
      userInfo: { person: { name: "Ada", age: 36 } },
    });
    expect((await callGetUser("/mcp", "org")).structuredContent).toEqual({
      userInfo: { entity: { name: "ada Inc.", registry: "RCS 123" } },
    });
  });

  it("follows the plan: route, then upstream, then default", async () => {
    await admin("PUT", "/filter-sets/partner", '{"tools":{"alpha___get_user":{"retain":["/userInfo/login"]}}}');
    await admin("PUT", "/filter-sets/default", '{"tools":{"alpha___get_user":{"retain":["/userInfo/type"]}}}');
    await admin("PUT", "/plan", JSON.stringify({ routes: { "/mcp/alpha": "partner" } }));
    expect((await callGetUser("/mcp/alpha")).structuredContent).toEqual({ userInfo: { login: "ada" } });
    expect((await callGetUser("/mcp")).structuredContent).toEqual({ userInfo: { type: "PhysicalPerson" } });
    await admin("PUT", "/plan", JSON.stringify({ upstreams: { alpha: null } }));
    expect((await callGetUser("/mcp")).structuredContent.followers).toHaveLength(2);
  });

  it("fails closed when a rule does not fit the result, naming the set and rule", async () => {
    await admin(
      "PUT",
      "/filter-sets/default",
      '{"tools":{"alpha___get_user":{"patches":[{"op":"test","path":"/userInfo/type","value":"Robot"},{"op":"remove","path":"/followers"}]}}}',
    );
    const result = await callGetUser();
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(
      /filter set "default", rule "alpha___get_user".*patch 0 \(test \/userInfo\/type\): test failed/,
    );
    expect(JSON.stringify(result)).not.toContain("followers");
    expect(result.structuredContent).toBeUndefined();
  });

  it("changes nothing in shadow mode", async () => {
    const { session } = await initialize("/mcp", { vars: VARS });
    const before = (
      await request(
        "/mcp",
        session,
        "tools/call",
        { name: "alpha___get_user", arguments: { login: "ada" } },
        { vars: VARS },
      )
    ).result;
    await admin(
      "PUT",
      "/filter-sets/default",
      '{"mode":"shadow","tools":{"alpha___get_user":{"retain":["/userInfo/login"]}}}',
    );
    const after = (
      await request(
        "/mcp",
        session,
        "tools/call",
        { name: "alpha___get_user", arguments: { login: "ada" } },
        { vars: VARS },
      )
    ).result;
    expect(after).toEqual(before);
    const tools = (await request("/mcp", session, "tools/list", undefined, { vars: VARS })).result.tools as Json[];
    expect(tools.find((t) => t.name === "alpha___get_user").outputSchema).toBeDefined();
  });
});

describe("editing KV directly", () => {
  it("takes effect after the cache TTL, with no restart", async () => {
    // The clock is the subject: the gateway's copies age by Date.now, moved here by hand, so
    // however slowly the calls run (a loaded machine) the copy is young, then just expired.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const vars = { ...VARS, FILTER_CACHE_TTL_MS: "200" };
      await env.GATEWAY_KV.put("filter-sets/default", '{"tools":{"alpha___get_user":{"retain":["/userInfo/login"]}}}');
      expect((await callGetUser("/mcp", "person", vars)).structuredContent).toEqual({ userInfo: { login: "ada" } });
      await env.GATEWAY_KV.put("filter-sets/default", "tools:\n  alpha___get_user:\n    retain: [/userInfo/type]\n");
      vi.advanceTimersByTime(199);
      expect((await callGetUser("/mcp", "person", vars)).structuredContent).toEqual({ userInfo: { login: "ada" } }); // cached
      vi.advanceTimersByTime(1); // the TTL under test
      expect((await callGetUser("/mcp", "person", vars)).structuredContent).toEqual({
        userInfo: { type: "PhysicalPerson" },
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it("reports an invalid document as a tool error for the tools it names, never half-applied", async () => {
    const vars = { ...VARS, FILTER_CACHE_TTL_MS: "0" };
    await env.GATEWAY_KV.put(
      "filter-sets/default",
      '{"tools":{"alpha___get_user":{"retain":["/userInfo"]},"alpha___whoami":{"retain":["nope"]}}}',
    );
    const result = await callGetUser("/mcp", "person", vars);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(
      /filter set "default" is invalid \(\/tools\/alpha___whoami\/retain\/0: .*\); fix it with PUT \/admin\/filter-sets\/default/,
    );
    const { session } = await initialize("/mcp", { vars });
    const echo = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "unaffected" } },
      { vars },
    );
    expect(echo.result.content[0].text).toBe("alpha: unaffected");
  });
});
