/**
 * Named servers through the Worker (src/features/named-servers/): a server's URL lists
 * exactly its picks under their aliases, calls them by alias in both eras, refuses every
 * other name with an error that says why, and follows an edit of its document on the next
 * request. Real SDK upstreams (alpha, beta) on loopback, the real KV.
 */
import { describe, expect, it } from "vitest";
import { gatewayFetch, initialize, post, request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const TOKEN = "named-servers-admin-token-0123456789";
const VARS: Vars = { ADMIN_TOKEN: TOKEN, FILTER_CACHE_TTL_MS: "0" };

async function putServer(name: string, document: unknown, vars: Vars = VARS): Promise<Response> {
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  return gatewayFetch(`/admin/servers/${name}`, { method: "PUT", headers, body: JSON.stringify(document) }, vars);
}

const fresh = (base: string) => `${base}-${crypto.randomUUID().slice(0, 8)}`;

const SUPPORT = {
  title: "Support",
  instructions: "Say things with say; add with sum.",
  tools: [
    { pick: "alpha___echo", alias: "say", description: "Says the text back." },
    { pick: "alpha___add", alias: "sum", title: "Sum" },
    "beta___*",
  ],
  prompts: [{ pick: "alpha___greet", alias: "hello" }],
  resources: ["alpha___alpha://info"],
};

async function session(path: string): Promise<{ session: string; result: Json }> {
  return initialize(path, { vars: VARS });
}

describe("a named server", () => {
  it("lists exactly its picks under their aliases, with the server's title and instructions", async () => {
    const name = fresh("support");
    expect((await putServer(name, SUPPORT)).status).toBe(201);
    const path = `/mcp/servers/${name}`;
    const opened = await session(path);
    expect(opened.result.instructions).toBe(SUPPORT.instructions);
    expect(opened.result.serverInfo.title).toBe("Support");
    const listed = await request(path, opened.session, "tools/list", {}, { vars: VARS });
    const tools = listed.result.tools as Json[];
    const names = tools.map((t) => t.name).filter((n: string) => !n.startsWith("sys___"));
    // beta serves echo and a long-named tool: the glob picks both, under their /mcp names.
    expect(names.sort()).toEqual(
      [
        "say",
        "sum",
        "beta___echo",
        ...names.filter((n: string) => n.startsWith("beta___") && n !== "beta___echo"),
      ].sort(),
    );
    expect(names.some((n: string) => n.startsWith("alpha___"))).toBe(false);
    const say = tools.find((t) => t.name === "say");
    expect(say.description).toBe("Says the text back.");
    expect(say.inputSchema.properties.text).toBeDefined(); // the upstream's schema, as /mcp lists it
    expect(tools.find((t) => t.name === "sum").title).toBe("Sum");

    const prompts = await request(path, opened.session, "prompts/list", {}, { vars: VARS });
    expect(prompts.result.prompts.map((p: Json) => p.name)).toEqual(["hello"]);
    const resources = await request(path, opened.session, "resources/list", {}, { vars: VARS });
    expect(resources.result.resources.map((r: Json) => r.uri)).toEqual(["alpha://info"]);
  });

  it("calls a tool and a prompt by alias, in a 2025 session and stateless 2026-07-28", async () => {
    const name = fresh("calls");
    expect((await putServer(name, SUPPORT)).status).toBe(201);
    const path = `/mcp/servers/${name}`;
    const { session: sid } = await session(path);
    const said = await request(path, sid, "tools/call", { name: "say", arguments: { text: "hi" } }, { vars: VARS });
    expect(said.result.content[0].text).toBe("alpha: hi");
    const greeted = await request(
      path,
      sid,
      "prompts/get",
      { name: "hello", arguments: { name: "Ada" } },
      { vars: VARS },
    );
    expect(greeted.result.messages[0].content.text).toBe("Hello, Ada!");
    const read = await request(path, sid, "resources/read", { uri: "alpha://info" }, { vars: VARS });
    expect(read.result.contents[0].text).toBe("alpha info");

    const sum = await modern(path, "tools/call", { name: "sum", arguments: { a: 2, b: 3 } }, { vars: VARS });
    expect(sum.result.structuredContent).toEqual({ sum: 5 });
    const listed = await modern(path, "tools/list", {}, { vars: VARS });
    expect(listed.result.tools.map((t: Json) => t.name)).toContain("say");
  });

  it("refuses every name it does not serve, saying why, and keeps serving", async () => {
    const name = fresh("refuse");
    expect((await putServer(name, SUPPORT)).status).toBe(201);
    const path = `/mcp/servers/${name}`;
    const { session: sid } = await session(path);
    const call = (tool: string) =>
      request(path, sid, "tools/call", { name: tool, arguments: { text: "x" } }, { vars: VARS });
    const original = await call("alpha___echo");
    expect(original.error.code).toBe(-32602);
    expect(original.error.message).toBe(
      `Unknown tool: alpha___echo (not served by "${name}"; here it is called "say")`,
    );
    const other = await call("alpha___whoami");
    expect(other.error.message).toContain(`Unknown tool: alpha___whoami (not served by "${name}"`);
    const stateless = await modern(path, "tools/call", { name: "whoami", arguments: {} }, { vars: VARS });
    expect(stateless.error.code).toBe(-32602);
    const prompt = await request(path, sid, "prompts/get", { name: "beta___haiku" }, { vars: VARS });
    expect(prompt.error.message).toContain("Unknown prompt: beta___haiku");
    const read = await request(path, sid, "resources/read", { uri: "beta://readme" }, { vars: VARS });
    expect(read.error.code).toBe(-32002);
    // The session still serves.
    expect((await call("say")).result.content[0].text).toBe("alpha: x");
    // /mcp is untouched: the original name works there and the alias does not exist.
    const { session: all } = await session("/mcp");
    const onMcp = await request(
      "/mcp",
      all,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "y" } },
      { vars: VARS },
    );
    expect(onMcp.result.content[0].text).toBe("alpha: y");
  });

  it("has its own catalog mode: search finds and calls its aliases only", async () => {
    const name = fresh("search");
    expect((await putServer(name, { ...SUPPORT, catalog: "search" })).status).toBe(201);
    const path = `/mcp/servers/${name}`;
    const listed = await modern(path, "tools/list", {}, { vars: VARS });
    expect(listed.result.tools.every((t: Json) => t.name.startsWith("sys___"))).toBe(true);
    const search = (query: string) =>
      modern(path, "tools/call", { name: "sys___search_tools", arguments: { query, limit: 5 } }, { vars: VARS });
    const found = JSON.parse((await search("sum of two numbers")).result.content[0].text);
    expect(found.tools[0].name).toBe("sum");
    const names = found.tools.map((t: Json) => t.name);
    expect(names.some((n: string) => n.startsWith("alpha___"))).toBe(false);
    const args = { name: "sum", arguments: { a: 4, b: 5 } };
    const called = await modern(path, "tools/call", { name: "sys___call_tool", arguments: args }, { vars: VARS });
    expect(called.result.structuredContent).toEqual({ sum: 9 });
    // The URL's ?catalog= still wins over the server's mode.
    const full = await modern(`${path}?catalog=full`, "tools/list", {}, { vars: VARS });
    expect(full.result.tools.map((t: Json) => t.name)).toContain("say");
  });

  it("follows an edit on the next request and answers 404 once removed", async () => {
    const name = fresh("live");
    expect((await putServer(name, { tools: ["alpha___echo"] })).status).toBe(201);
    const path = `/mcp/servers/${name}`;
    const { session: sid } = await session(path);
    const names = async () =>
      ((await request(path, sid, "tools/list", {}, { vars: VARS })).result.tools as Json[])
        .map((t) => t.name)
        .filter((n: string) => !n.startsWith("sys___"));
    expect(await names()).toEqual(["alpha___echo"]);
    const changed = await putServer(name, { tools: [{ pick: "alpha___add", alias: "plus" }] });
    expect(changed.status).toBe(200);
    expect(await names()).toEqual(["plus"]);
    const headers = { authorization: `Bearer ${TOKEN}` };
    expect((await gatewayFetch(`/admin/servers/${name}`, { method: "DELETE", headers }, VARS)).status).toBe(200);
    const gone = await modern(path, "tools/list", {}, { vars: VARS });
    expect(gone.error.message).toBe(`Not Found: no server named "${name}"`);
  });

  it("answers an unknown server's URL with 404, and a session of another route is refused", async () => {
    const unknown = await modern("/mcp/servers/nobody-here", "tools/list", {}, { vars: VARS });
    expect(unknown.error.message).toBe('Not Found: no server named "nobody-here"');
    const name = fresh("bound");
    expect((await putServer(name, SUPPORT)).status).toBe(201);
    const { session: onMcp } = await session("/mcp");
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const response = await post(`/mcp/servers/${name}`, body, { session: onMcp, vars: VARS });
    expect(response.status).toBe(404);
  });
});
