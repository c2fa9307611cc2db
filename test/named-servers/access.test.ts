/**
 * Who may use a named server, with authentication on (API keys): a server never widens what
 * the caller's persona allows (its list and calls are the intersection), and a server for
 * some roles answers anyone else exactly as a server that does not exist.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { admin, authVars, makeKey } from "../helpers/auth";
import { initialize, post, request, type Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const VARS = authVars({ apiKeys: true }, { FILTER_CACHE_TTL_MS: "0" });
const tag = () => crypto.randomUUID().slice(0, 8);
const SERVER = {
  tools: [{ pick: "alpha___echo", alias: "say" }, "beta___echo"],
  prompts: ["beta___haiku"],
};

async function keyFor(roles: string[]): Promise<Record<string, string>> {
  return (await makeKey({ principal: `ns-${roles.join("-")}-${tag()}`, roles }, VARS)).headers;
}

async function names(path: string, headers: Record<string, string>): Promise<string[]> {
  const { session } = await initialize(path, { vars: VARS, headers });
  const listed = await request(path, session, "tools/list", {}, { vars: VARS, headers });
  return (listed.result.tools as Json[]).map((t) => t.name).filter((n: string) => !n.startsWith("sys___"));
}

beforeAll(async () => {
  const personas = {
    "ns-beta": { roles: ["ns-beta"], allow: ["beta___*"] },
    "ns-all": { roles: ["ns-all"], allow: ["*"] },
  };
  for (const [name, persona] of Object.entries(personas))
    expect((await admin("PUT", `/personas/${name}`, persona, VARS)).status).toBe(200);
});

describe("a named server with authentication on", () => {
  it("lists and calls only what both the server and the caller's persona allow", async () => {
    const name = `intersect-${tag()}`;
    expect((await admin("PUT", `/servers/${name}`, SERVER, VARS)).status).toBe(201);
    const path = `/mcp/servers/${name}`;
    const wide = await keyFor(["ns-all"]);
    expect((await names(path, wide)).sort()).toEqual(["beta___echo", "say"]);
    const narrow = await keyFor(["ns-beta"]);
    expect(await names(path, narrow)).toEqual(["beta___echo"]);
    // The alias of a tool the persona does not allow is refused as that tool is on /mcp.
    const call = (route: string, tool: string, headers: Record<string, string>) =>
      modern(route, "tools/call", { name: tool, arguments: { text: "x" } }, { vars: VARS, headers });
    const refused = await call(path, "say", narrow);
    const onMcp = await call("/mcp", "alpha___echo", narrow);
    expect(refused.error.code).toBe(onMcp.error.code);
    expect(refused.result).toBeUndefined();
    const allowed = await call(path, "say", wide);
    expect(allowed.result.content[0].text).toBe("alpha: x");
  });

  it("is, for a caller without its roles, exactly a server that does not exist", async () => {
    const name = `team-${tag()}`;
    expect((await admin("PUT", `/servers/${name}`, { ...SERVER, roles: ["ns-team"] }, VARS)).status).toBe(201);
    const outsider = await keyFor(["ns-all"]);
    const body = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    };
    const hidden = await post(`/mcp/servers/${name}`, body, { vars: VARS, headers: outsider });
    const ghost = `ghost-${tag()}`;
    const missing = await post(`/mcp/servers/${ghost}`, body, { vars: VARS, headers: outsider });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect((await hidden.text()).replace(name, ghost)).toBe(await missing.text());
    const member = await keyFor(["ns-team", "ns-all"]);
    expect((await names(`/mcp/servers/${name}`, member)).sort()).toEqual(["beta___echo", "say"]);
  });

  it("asks an unauthenticated caller to authenticate before saying anything about servers", async () => {
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const response = await post(`/mcp/servers/anything-${tag()}`, body, { vars: VARS });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata");
  });
});
