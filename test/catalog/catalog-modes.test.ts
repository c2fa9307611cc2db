/**
 * Catalog modes through the Worker (docs/tool-search.md): `?catalog=` on both routes and
 * in both eras (2025 sessions, 2026-07-28 requests), the persona's choice, compact lists
 * and sys___describe_tools, search mode's list, sys___search_tools and sys___call_tool —
 * whose call is the direct call itself: personas, filters, offload, audit and
 * elicitation apply to it as to a direct one — and the index following a list_changed.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import { compactTool, firstSentence } from "../../src/features/catalog/compact";
import { catalogsParsed } from "../../src/features/catalog/catalog-cache";
import { loadSearch } from "../../src/features/catalog/search";
import { elements, parseSpan, member, pathSpan } from "../../src/core/raw-json";
import { admin as shapingAdmin, ADMIN_VARS } from "../helpers/admin";
import { admin as authAdmin, authVars, makeKey } from "../helpers/auth";
import { eventsOnceWritten, readAudit, upstreamVars } from "../helpers/audit";
import { initialize, messageTexts, post, request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

/** The raw text of each listed tool of a tools/list answer, by name. */
function rawTools(text: string): Map<string, string> {
  const list = pathSpan(text, ["result", "tools"])!;
  return new Map(
    elements(text, list).map((item) => [
      parseSpan(text, member(text, item, "name")!) as string,
      text.slice(item.start, item.end),
    ]),
  );
}

/** The text of a tools/list answer (the last message, whether JSON or SSE). */
async function listText(
  path: string,
  vars: Vars = {},
  headers: Record<string, string> = {},
  session?: string,
): Promise<string> {
  const id = session ?? (await initialize(path, { vars, headers })).session;
  return (
    await messageTexts(
      await post(path, { jsonrpc: "2.0", id: 7, method: "tools/list" }, { session: id, vars, headers }),
    )
  ).at(-1)!;
}

/** The raw text of the list of tools of a tools/list answer (its signed cursor differs per answer). */
function toolsSpanText(text: string): string {
  const span = pathSpan(text, ["result", "tools"])!;
  return text.slice(span.start, span.end);
}

/** A 2025 session on `path` and a function calling tools in it. */
async function session2025(
  path: string,
  vars: Vars = {},
  headers: Record<string, string> = {},
  capabilities: Record<string, unknown> = {},
) {
  const { session } = await initialize(path, { vars, headers, capabilities });
  return {
    session,
    call: (name: string, args: unknown) =>
      request(path, session, "tools/call", { name, arguments: args }, { vars, headers }),
    list: () => request(path, session, "tools/list", undefined, { vars, headers }),
  };
}

/** The JSON body a catalog tool answered with. */
function bodyOf(result: Json): Json {
  expect(result.isError).toBeUndefined();
  return JSON.parse(result.content[0].text);
}

describe("choosing a mode", () => {
  it.each(["/mcp?catalog=everything", "/mcp/alpha?catalog=", "/mcp?catalog=search&catalog=full"])(
    "refuses %s with 400 and the modes it takes",
    async (path) => {
      const response = await post(path, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error.message).toMatch(/full, compact, search/);
    },
  );

  it.each(["/mcp", "/mcp/alpha"])("full on %s is today's list byte for byte", async (path) => {
    const plain = await listText(path);
    const full = await listText(`${path}?catalog=full`);
    expect(toolsSpanText(full)).toBe(toolsSpanText(plain));
    expect(full.replace(/"nextCursor":"[^"]*"/, "")).toBe(plain.replace(/"nextCursor":"[^"]*"/, ""));
  });

  it("takes the persona's mode when the URL names none, and the URL's over it", async () => {
    const vars = authVars({ apiKeys: true });
    expect(
      (
        await authAdmin(
          "PUT",
          "/personas/searcher",
          { roles: ["r-search"], allow: ["alpha___*"], catalog: "search" },
          vars,
        )
      ).status,
    ).toBe(200);
    const refused = await authAdmin("PUT", "/personas/bad", { roles: ["r-bad"], allow: ["*"], catalog: "tiny" }, vars);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("/catalog");
    const { headers } = await makeKey({ principal: "searcher-1", roles: ["r-search"] }, vars);
    const own = await session2025("/mcp", vars, headers);
    expect((await own.list()).result.tools.map((t: Json) => t.name).sort()).toEqual([
      "sys___call_tool",
      "sys___read_payload",
      "sys___search_tools",
    ]);
    const full = await session2025("/mcp?catalog=full", vars, headers);
    expect((await full.list()).result.tools.map((t: Json) => t.name)).toContain("alpha___echo");
  });
});

describe("every mode on both routes in both eras", () => {
  /** What each mode lists beside or instead of the upstream's tools. */
  const GATEWAY_TOOLS = {
    full: [],
    compact: ["sys___describe_tools"],
    search: ["sys___search_tools", "sys___call_tool"],
  } as const;
  const cases = (["full", "compact", "search"] as const).flatMap((mode) =>
    ["/mcp", "/mcp/alpha"].flatMap((path) => ["2025-11-25", "2026-07-28"].map((era) => [mode, path, era] as const)),
  );
  it.each(cases)("%s on %s for a %s client", async (mode, path, era) => {
    const url = `${path}?catalog=${mode}`;
    const listed: Json[] =
      era === "2026-07-28"
        ? (await modern(url, "tools/list")).result.tools
        : (await (await session2025(url)).list()).result.tools;
    const names = listed.map((t) => t.name);
    const echo = path === "/mcp" ? "alpha___echo" : "echo";
    for (const name of GATEWAY_TOOLS[mode]) expect(names).toContain(name);
    if (mode === "search") expect(names.every((name) => name.startsWith("sys___"))).toBe(true);
    else expect(names).toContain(echo);
    if (mode === "full")
      expect(names.filter((name) => name.startsWith("sys___") && name !== "sys___read_payload")).toEqual([]);
  });
});

describe("compact", () => {
  it.each(["/mcp", "/mcp/alpha"])(
    "on %s shortens descriptions, drops schema descriptions, and describes tools verbatim (2025)",
    async (path) => {
      const full = rawTools(await listText(path));
      const compact = await session2025(`${path}?catalog=compact`);
      const listed: Json[] = (await compact.list()).result.tools;
      const prefix = path === "/mcp" ? "alpha___" : "";
      const readPayload = listed.find((t) => t.name === "sys___read_payload");
      // The read tool's long description is cut to its first sentence; its property descriptions go.
      if (readPayload) {
        expect(readPayload.description).toBe(
          "Reads a slice of a tool result that was too large to return and was stored by the gateway (see payloadId in that result).",
        );
        expect(JSON.stringify(readPayload.inputSchema)).not.toContain("description");
      }
      expect(listed.map((t) => t.name)).toContain("sys___describe_tools");
      // A tool compacting does not change keeps its bytes; one it changes loses its schema's `$schema`.
      const whoami = `${prefix}whoami`;
      const echo = `${prefix}echo`;
      expect(listed.find((t) => t.name === echo).inputSchema).toEqual({
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      });
      const compactText = await listText(`${path}?catalog=compact`, {}, {}, compact.session);
      expect(rawTools(compactText).get(whoami)).toBe(full.get(whoami));
      const described = bodyOf((await compact.call("sys___describe_tools", { names: [echo, "nope"] })).result);
      expect(described.unknown).toEqual(["nope"]);
      expect(described.tools.map((t: Json) => t.name)).toEqual([echo]);
      const describedText = JSON.parse(
        (await compact.call("sys___describe_tools", { names: [echo] })).result.content[0].text as string,
      ) as Json;
      expect(JSON.stringify(describedText.tools[0])).toBe(JSON.stringify(JSON.parse(full.get(echo)!)));
    },
  );

  it("on /mcp for a 2026-07-28 client", async () => {
    const listed = await modern("/mcp?catalog=compact", "tools/list");
    const names = listed.result.tools.map((t: Json) => t.name);
    expect(names).toEqual(expect.arrayContaining(["alpha___echo", "sys___describe_tools"]));
    const described = await modern("/mcp?catalog=compact", "tools/call", {
      name: "sys___describe_tools",
      arguments: { names: ["alpha___get_user"] },
    });
    expect(bodyOf(described.result).tools[0].outputSchema.properties.userInfo).toBeDefined();
  });
});

describe("search", () => {
  it.each([
    ["/mcp", "alpha___add"],
    ["/mcp/alpha", "add"],
  ])("on %s lists only the gateway's tools, finds %s by a task and calls it (2025)", async (path, name) => {
    const client = await session2025(`${path}?catalog=search`);
    const names = (await client.list()).result.tools.map((t: Json) => t.name);
    expect(names).toEqual(expect.arrayContaining(["sys___search_tools", "sys___call_tool"]));
    expect(names.every((n: string) => n.startsWith("sys___"))).toBe(true);
    const found = bodyOf(
      (await client.call("sys___search_tools", { query: "what is the sum of two numbers", limit: 3 })).result,
    );
    expect(found.tools[0].name).toBe(name);
    expect(found.tools[0].outputSchema.properties.sum).toBeDefined();
    expect(found.matched).toBeGreaterThanOrEqual(1);
    const called = await client.call("sys___call_tool", { name, arguments: { a: 2, b: 3 } });
    expect(called.result.structuredContent).toEqual({ sum: 5 });
  });

  it.each(["/mcp", "/mcp/alpha"])("on %s for a 2026-07-28 client", async (path) => {
    const listed = await modern(`${path}?catalog=search`, "tools/list");
    expect(listed.result.tools.every((t: Json) => t.name.startsWith("sys___"))).toBe(true);
    const found = await modern(`${path}?catalog=search`, "tools/call", {
      name: "sys___search_tools",
      arguments: { query: "echo my text back" },
    });
    const echo = bodyOf(found.result).tools[0].name;
    expect(echo).toBe(path === "/mcp" ? "alpha___echo" : "echo");
    const called = await modern(`${path}?catalog=search`, "tools/call", {
      name: "sys___call_tool",
      arguments: { name: echo, arguments: { text: "hi" } },
    });
    expect(called.result.content[0].text).toBe("alpha: hi");
  });

  it("still takes a direct call of a tool it does not list", async () => {
    const client = await session2025("/mcp?catalog=search");
    expect((await client.call("alpha___add", { a: 1, b: 1 })).result.structuredContent).toEqual({ sum: 2 });
  });

  it("answers an empty query with the first tools and a note, nonsense (or no words at all) with none and a note naming the upstreams", async () => {
    const client = await session2025("/mcp?catalog=search");
    const empty = bodyOf((await client.call("sys___search_tools", { query: "" })).result);
    expect(empty.tools).toHaveLength(5);
    expect(empty.note).toMatch(/Describe the task/);
    expect(empty.matched).toBe(0);
    expect(empty.total).toBeGreaterThan(5);
    for (const query of ["qqzx vvbnm", "?!", "the of and"]) {
      const nonsense = bodyOf((await client.call("sys___search_tools", { query })).result);
      expect(nonsense).toMatchObject({ matched: 0, tools: [], total: empty.total });
      expect(nonsense.note).toMatch(/No tool matched.*Upstreams: alpha \(\d+\)/);
    }
    const bad = (await client.call("sys___search_tools", { query: "x", limit: 500 })).result;
    expect(bad.isError).toBe(true);
  });

  it("names the search tool when a name is stale, counts matches beyond the limit, and keeps upstream= to one upstream", async () => {
    const client = await session2025("/mcp?catalog=search");
    // A name no upstream serves; an upstream's own answer to a name it does not know passes as it would to a direct call.
    const stale = await client.call("sys___call_tool", { name: "gone___tool", arguments: {} });
    expect(stale.error.message).toMatch(/Unknown tool: gone___tool.*sys___search_tools/);
    const both = bodyOf((await client.call("sys___search_tools", { query: "echo", limit: 1 })).result);
    expect(both.tools).toHaveLength(1);
    expect(both.matched).toBeGreaterThanOrEqual(2);
    const onlyBeta = bodyOf((await client.call("sys___search_tools", { query: "echo", upstream: "beta" })).result);
    expect(onlyBeta.tools.map((t: Json) => t.name)).toEqual(["beta___echo"]);
  });

  it.each(["/mcp", "/mcp/alpha"])(
    "on %s searches tools only: prompts and resource templates are listed as in full mode, and never found",
    async (path) => {
      const search = await session2025(`${path}?catalog=search`);
      const full = await session2025(path);
      for (const [method, key] of [
        ["prompts/list", "prompts"],
        ["resources/templates/list", "resourceTemplates"],
      ] as const) {
        const inSearch = (await request(`${path}?catalog=search`, search.session, method)).result[key];
        expect(inSearch.length).toBeGreaterThan(0);
        expect(inSearch).toEqual((await request(path, full.session, method)).result[key]);
      }
      const found = bodyOf(
        (await search.call("sys___search_tools", { query: "greet someone by name", limit: 20 })).result,
      );
      expect(found.tools.map((t: Json) => t.name)).not.toContain(path === "/mcp" ? "alpha___greet" : "greet");
      expect(found.tools.every((t: Json) => t.inputSchema !== undefined)).toBe(true);
    },
  );

  it("follows a list_changed: a tool added at run time is found at the next search", async () => {
    const client = await session2025("/mcp/alpha?catalog=search");
    const before = bodyOf((await client.call("sys___search_tools", { query: "frobnicate gizmos" })).result);
    expect(before.matched).toBe(0);
    await client.call("sys___call_tool", { name: "add_tool", arguments: { name: "frobnicate_gizmos" } });
    const after = bodyOf((await client.call("sys___search_tools", { query: "frobnicate gizmos" })).result);
    expect(after.tools[0].name).toBe("frobnicate_gizmos");
    expect((await client.call("sys___call_tool", { name: "frobnicate_gizmos" })).result.content[0].text).toBe(
      "frobnicate_gizmos ran",
    );
  });

  it("reuses the parsed catalog and its index while the list is unchanged, and builds both anew after a list_changed", async () => {
    const client = await session2025("/mcp/alpha?catalog=search");
    await client.call("sys___search_tools", { query: "echo my text" });
    // The gateway's search is the module loaded on demand: its count, not the source's.
    const { indexesBuilt } = await loadSearch();
    const before = [catalogsParsed(), indexesBuilt()];
    bodyOf((await client.call("sys___search_tools", { query: "add two numbers" })).result);
    expect([catalogsParsed(), indexesBuilt()]).toEqual(before);
    await client.call("sys___call_tool", { name: "add_tool", arguments: { name: "reindex_me" } });
    const after = bodyOf((await client.call("sys___search_tools", { query: "reindex me" })).result);
    expect(after.tools[0].name).toBe("reindex_me");
    expect([catalogsParsed(), indexesBuilt()]).toEqual([before[0]! + 1, before[1]! + 1]);
  });
});

describe("a call through sys___call_tool is the direct call", () => {
  const VARS = authVars({ apiKeys: true });
  beforeAll(async () => {
    expect(
      (
        await authAdmin(
          "PUT",
          "/personas/noadd",
          { roles: ["r-noadd"], allow: ["alpha___*"], deny: ["alpha___add"] },
          VARS,
        )
      ).status,
    ).toBe(200);
  });
  afterEach(async () => {
    await shapingAdmin("DELETE", "/filter-sets/default");
  });

  it("never finds nor calls a tool the persona hides", async () => {
    const { headers } = await makeKey({ principal: "noadd-1", roles: ["r-noadd"] }, VARS);
    for (const path of ["/mcp?catalog=search", "/mcp/alpha?catalog=search"]) {
      const client = await session2025(path, VARS, headers);
      const found = bodyOf((await client.call("sys___search_tools", { query: "add two numbers", limit: 20 })).result);
      expect(found.tools.map((t: Json) => t.name)).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/(^|_)add$/)]),
      );
      expect(found.tools.some((t: Json) => t.name.startsWith("beta___"))).toBe(false);
      const refused = await client.call("sys___call_tool", {
        name: path.startsWith("/mcp?") ? "alpha___add" : "add",
        arguments: { a: 1, b: 2 },
      });
      expect(refused.error.message).toMatch(/Unknown tool.*sys___search_tools/);
    }
  });

  it("gets the filter a direct call gets", async () => {
    await shapingAdmin("PUT", "/filter-sets/default", { tools: { alpha___get_user: { retain: ["/userInfo/login"] } } });
    const direct = await session2025("/mcp", ADMIN_VARS);
    const viaSearch = await session2025("/mcp?catalog=search", ADMIN_VARS);
    const directResult = (await direct.call("alpha___get_user", { login: "ada" })).result;
    const searchResult = (
      await viaSearch.call("sys___call_tool", { name: "alpha___get_user", arguments: { login: "ada" } })
    ).result;
    expect(directResult.structuredContent).toEqual({ userInfo: { login: "ada" } });
    expect(searchResult).toEqual(directResult);
  });

  it("is offloaded as a direct call is", async () => {
    const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }) };
    const client = await session2025("/mcp?catalog=search", vars);
    const result = (await client.call("sys___call_tool", { name: "alpha___big_list", arguments: { count: 200 } }))
      .result;
    const envelope = JSON.parse(result.content[0].text);
    expect(envelope.truncated).toBe(true);
    const slice = (
      await client.call("sys___call_tool", {
        name: "sys___read_payload",
        arguments: { id: envelope.payloadId, pointer: "/items", limit: 2 },
      })
    ).result;
    expect(slice.structuredContent.count).toBe(2);
  });

  it("is audited under the inner tool's name", async () => {
    const { name, vars } = upstreamVars();
    const client = await session2025(`/mcp/${name}?catalog=search`, vars);
    await client.call("sys___call_tool", { name: "whoami", arguments: { q: 2 } });
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(event).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "whoami",
      "gen_ai.tool.call.arguments": { q: 2 },
    });
  });

  it("gives a 2026-07-28 client input_required during the call, and its retry completes it", async () => {
    const capabilities = { elicitation: {} };
    const path = "/mcp?catalog=search";
    const inner = { name: "sys___call_tool", arguments: { name: "alpha___ask_user", arguments: {} } };
    const first = await modern(path, "tools/call", inner, { capabilities });
    expect(first.result.resultType).toBe("input_required");
    expect(first.result.inputRequests["elicitation-1"].method).toBe("elicitation/create");
    const retry = await modern(
      path,
      "tools/call",
      {
        ...inner,
        inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
        requestState: first.result.requestState,
      },
      { capabilities },
    );
    expect(retry.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: 'accept: {"name":"Ada"}' }],
    });
  });

  it("reports the inner tool's progress under the caller's token", async () => {
    const { session } = await initialize("/mcp?catalog=search");
    const response = await post(
      "/mcp?catalog=search",
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: {
          name: "sys___call_tool",
          arguments: { name: "alpha___count", arguments: { steps: 2 } },
          _meta: { progressToken: "p-1" },
        },
      },
      { session },
    );
    const all = (await messageTexts(response)).map((text) => JSON.parse(text) as Json);
    const progress = all.filter((m) => m.method === "notifications/progress");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((m) => m.params.progressToken === "p-1")).toBe(true);
    expect(all.at(-1)).toMatchObject({ id: 4, result: { content: [{ type: "text" }] } });
  });

  it("audits a search as a call of sys___search_tools, with its query", async () => {
    const { name, vars } = upstreamVars();
    const client = await session2025(`/mcp/${name}?catalog=search`, vars);
    const query = `who am I ${name}`;
    await client.call("sys___search_tools", { query });
    const ours = (events: Json[]) => events.filter((e) => e["gen_ai.tool.call.arguments"]?.query === query);
    let found: Json[] = [];
    for (const deadline = Date.now() + 15_000; found.length === 0 && Date.now() < deadline; ) {
      found = ours((await readAudit("tool=sys___search_tools&limit=1000")).events);
      if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(found[0]).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "sys___search_tools" });
  });

  it("relays an elicitation during the call and routes the client's answer back", async () => {
    const { session } = await initialize("/mcp?catalog=search", { capabilities: { elicitation: { form: {} } } });
    const response = await post(
      "/mcp?catalog=search",
      {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "sys___call_tool", arguments: { name: "alpha___ask_user" } },
      },
      { session },
    );
    const events = readSse(response.body!);
    const first = JSON.parse((await events.next()).value!.data) as Json;
    expect(first.method).toBe("elicitation/create");
    expect(
      (
        await post(
          "/mcp?catalog=search",
          { jsonrpc: "2.0", id: first.id, result: { action: "accept", content: { name: "Ada" } } },
          { session },
        )
      ).status,
    ).toBe(202);
    let final: Json;
    for await (const event of events) final = JSON.parse(event.data);
    expect(final).toMatchObject({ id: 9, result: { content: [{ text: 'accept: {"name":"Ada"}' }] } });
  });
});

describe("compacting one definition", () => {
  const DEFINITIONS = {
    shared: { type: "object", description: "used", properties: { id: { type: "string", description: "an id" } } },
    chained: { $ref: "#/$defs/shared" },
    unused: { type: "string", description: "nobody refers to me" },
  };
  it.each([
    [
      "drops annotations at every schema level",
      {
        type: "object",
        $schema: "x",
        properties: { a: { type: "array", title: "A", items: { type: "string", description: "d", examples: ["x"] } } },
      },
      { type: "object", properties: { a: { type: "array", items: { type: "string" } } } },
    ],
    [
      "keeps data: default, const and enum values, and a property named description",
      {
        type: "object",
        properties: { description: { type: "string", default: { description: "kept" }, enum: [{ title: "kept" }] } },
      },
      {
        type: "object",
        properties: { description: { type: "string", default: { description: "kept" }, enum: [{ title: "kept" }] } },
      },
    ],
    [
      "drops root definitions nothing refers to, following chains",
      { type: "object", properties: { x: { $ref: "#/$defs/chained" } }, $defs: DEFINITIONS },
      {
        type: "object",
        properties: { x: { $ref: "#/$defs/chained" } },
        $defs: {
          shared: { type: "object", properties: { id: { type: "string" } } },
          chained: { $ref: "#/$defs/shared" },
        },
      },
    ],
    [
      "keeps every definition when a reference has another form",
      { type: "object", properties: { x: { $ref: "other.json#/a" } }, $defs: { unused: { type: "string" } } },
      { type: "object", properties: { x: { $ref: "other.json#/a" } }, $defs: { unused: { type: "string" } } },
    ],
  ])("%s", (_label, inputSchema, expected) => {
    expect(compactTool({ name: "t", inputSchema })?.["inputSchema"] ?? inputSchema).toEqual(expected);
  });

  it.each([
    ["Creates an issue. Needs a token.", "Creates an issue."],
    ["First line\nsecond line", "First line"],
    [`${"word ".repeat(60)}end.`, `${"word ".repeat(31).trim()}…`],
  ])("cuts %j to %j", (description, expected) => {
    expect(firstSentence(description)).toBe(expected);
  });
});
