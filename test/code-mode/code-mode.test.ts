/**
 * Code mode through the Worker (src/features/code-mode/, docs/code-mode.md), in workerd
 * with the real Worker Loader binding, KV, R2, Queue and rate limiter: a program's tool
 * call is the direct call, so it is filtered, rate-limited, pinned and audited as one
 * (each inner call naming its run, the run's own event carrying the program's digest);
 * the program cannot read another principal's payload nor call the gateway's own tools;
 * and the declarations are bounded whatever the upstream's schema.
 */
import { afterEach, describe, expect, it } from "vitest";
import { admin as shapingAdmin, ADMIN_VARS } from "../helpers/admin";
import { admin as authAdmin, authVars, makeKey } from "../helpers/auth";
import { eventsOnceWritten, readAudit, upstreamVars } from "../helpers/audit";
import { initialize, request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { listedThenChanged } from "../helpers/pins";
import {
  docComment,
  MAX_TYPE_DEPTH,
  safeIdentifier,
  toolDeclarations,
  toolIdentifiers,
} from "../../src/features/code-mode/declarations";
import type { Catalog } from "../../src/features/catalog/visible-catalog";

/** A 2025 session on `path` and a function running programs in it. */
async function session(path: string, vars: Vars = {}, headers: Record<string, string> = {}, capabilities: Json = {}) {
  const { session: id } = await initialize(path, { vars, headers, capabilities });
  const call = (name: string, args: unknown) =>
    request(path, id, "tools/call", { name, arguments: args }, { vars, headers });
  return { call, run: async (code: string) => (await call("sys___run_code", { code })).result as Json };
}

/** The audit events of sys___run_code calls of the run `runId`, once written (the consumer writes in batches). */
async function runEvents(runId: string): Promise<Json[]> {
  let found: Json[] = [];
  for (const deadline = Date.now() + 15_000; found.length === 0 && Date.now() < deadline; ) {
    found = (await readAudit("tool=sys___run_code&limit=1000")).events.filter(
      (event: Json) => event["gateway.code_run"] === runId,
    );
    if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return found;
}

/** The value a successful run answered. */
function runValue(result: Json): unknown {
  expect(result.isError, result.content?.[0]?.text).toBeUndefined();
  return JSON.parse(result.content[0].text);
}

describe("a program's tool call is the direct call", () => {
  afterEach(async () => {
    await shapingAdmin("DELETE", "/filter-sets/default");
  });

  it("gets the filter a direct call gets", async () => {
    await shapingAdmin("PUT", "/filter-sets/default", { tools: { alpha___get_user: { retain: ["/userInfo/login"] } } });
    const direct = await session("/mcp", ADMIN_VARS);
    const coder = await session("/mcp?catalog=code", ADMIN_VARS);
    const directResult = (await direct.call("alpha___get_user", { login: "ada" })).result;
    const value = runValue(await coder.run('return await tools.alpha.get_user({ login: "ada" });'));
    expect(directResult.structuredContent).toEqual({ userInfo: { login: "ada" } });
    expect(value).toEqual(directResult.structuredContent);
  });

  it("reaches none of the gateway's own tools (results and offload: test/code-mode/)", async () => {
    const coder = await session("/mcp?catalog=code");
    // The program gets the gateway's read tool no more than any other sys___ tool.
    const reach = runValue(await coder.run("return [typeof tools.sys, Object.keys(tools)];")) as [string, string[]];
    expect(reach[0]).toBe("undefined");
    expect(reach[1]).toEqual(expect.arrayContaining(["alpha", "beta"]));
    expect(reach[1]).not.toContain("sys");
  });

  it("is refused by the rate limit as a direct call is, counted with the caller's other requests", async () => {
    const vars = authVars({ apiKeys: true, rateLimits: { tight: "RATE_LIMIT_TEST" } });
    expect(
      (
        await authAdmin(
          "PUT",
          "/personas/code-limited",
          { roles: ["r-code-limited"], allow: ["alpha___*"], rateLimit: "tight" },
          vars,
        )
      ).status,
    ).toBe(200);
    const { headers } = await makeKey(
      { principal: `code-limited-${crypto.randomUUID()}`, roles: ["r-code-limited"] },
      vars,
    );
    const coder = await session("/mcp?catalog=code", vars, headers); // 1: initialize
    // 2: the run; 3: the catalog it lists; then the program's 5 calls, over the limit of 3 per window. The
    // limiter counts in fixed windows: should one end during the test, the new one still refuses 2 of 8.
    const code =
      "const seen = [];\n" +
      "for (let i = 0; i < 5; i++) {\n" +
      '  try { seen.push(await tools.alpha.echo({ text: "x" })); } catch (e) { seen.push(e.message); }\n' +
      "}\nreturn seen;";
    const seen = runValue(await coder.run(code)) as string[];
    expect(seen).toHaveLength(5);
    const refused = seen.filter((entry) => entry !== "alpha: x");
    expect(refused.length).toBeGreaterThanOrEqual(2);
    for (const message of refused) expect(message).toMatch(/^alpha___echo: .*rate limit/i);
  });

  it("is held by pinning under enforce as a direct call is, and declared with the approved schema", async () => {
    const name = "p-code-mode";
    // The upstream's add comes to require a third number: a pending change that enforce holds.
    const { vars, client } = await listedThenChanged(name, "schema");
    const direct = (await client.call("add", { a: 1, b: 2 })).result;
    expect(direct.isError).toBe(true);
    expect(direct.content[0].text).toContain("pending change");
    const coder = await session(`/mcp/${name}?catalog=code`, vars);
    const code = "try { await tools.p_code_mode.add({ a: 1, b: 2 }); return 'ran'; } catch (e) { return e.message; }";
    expect(runValue(await coder.run(code))).toBe(`add failed: ${direct.content[0].text}`);
    const declared = (await coder.call("sys___search_tools", { query: "", limit: 20 })).result.content[0].text;
    expect(declared).toMatch(/add\(args: \{\n\s+a: number;\n\s+b: number;\n\s+\}\)/);
  });

  it("is audited under its own name with its run's id, and the run with the code's digest", async () => {
    const { name, vars } = upstreamVars();
    const coder = await session(`/mcp/${name}?catalog=code`, vars);
    const value = runValue(await coder.run(`return await tools.${name}.whoami({ q: 7 });`));
    expect(value).toBeDefined();
    const [inner] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(inner).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "whoami",
      "gen_ai.tool.call.arguments": { q: 7 },
    });
    expect(inner!["gateway.code_run"]).toMatch(/^[0-9a-f]{32}$/);
    const runs = await runEvents(inner!["gateway.code_run"]);
    expect(runs[0]).toMatchObject({ "gen_ai.tool.name": "sys___run_code", "gateway.outcome": "success" });
    expect(runs[0]!["gateway.code_digest"]).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("without the Worker Loader binding", () => {
  it("refuses code mode naming the binding, and serves the other modes", async () => {
    const vars = { LOADER: "" };
    const refused = await modern("/mcp?catalog=code", "tools/list", {}, { vars });
    expect(refused.error.message).toMatch(
      /needs the Worker Loader binding LOADER \(wrangler\.toml: \[\[worker_loaders\]\]/,
    );
    const listed = await modern("/mcp?catalog=search", "tools/list", {}, { vars });
    expect(listed.result.tools.map((t: Json) => t.name)).toContain("sys___call_tool");
  });
});

describe("results by reference through sys___call_tool", () => {
  const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }) };

  it("reads arguments from the caller's own payload, and says which reference failed", async () => {
    const client = await session("/mcp?catalog=search", vars);
    const stored = JSON.parse(
      (await client.call("sys___call_tool", { name: "alpha___big_list", arguments: { count: 200 } })).result.content[0]
        .text,
    );
    expect(stored.truncated).toBe(true);
    const byReference = (name: string, argumentsFrom: Json, args: Json = {}) =>
      client.call("sys___call_tool", { name, arguments: args, argumentsFrom });
    const echoed = (
      await byReference("alpha___echo", { "/text": { payload: stored.payloadId, pointer: "/items/150/name" } })
    ).result;
    expect(echoed.content[0].text).toBe("alpha: item 150 — ünïcödé");
    const sum = (await byReference("alpha___add", { "/b": { payload: stored.payloadId, pointer: "/total" } }, { a: 1 }))
      .result;
    expect(sum.structuredContent).toEqual({ sum: 201 });
    const missing = (
      await byReference("alpha___echo", { "/text": { payload: stored.payloadId, pointer: "/items/999/name" } })
    ).result;
    expect(missing.isError).toBe(true);
    expect(missing.content[0].text).toBe(
      `sys___call_tool: argumentsFrom "/text": payload ${stored.payloadId} has nothing at "/items/999/name"`,
    );
    // Another session (authentication off: a payload is its session's) does not find it.
    const other = await session("/mcp?catalog=search", vars);
    const foreign = (
      await other.call("sys___call_tool", {
        name: "alpha___echo",
        arguments: {},
        argumentsFrom: { "/text": { payload: stored.payloadId, pointer: "/total" } },
      })
    ).result;
    expect(foreign.isError).toBe(true);
    expect(foreign.content[0].text).toContain(`no payload ${stored.payloadId} for this session`);
    const proto = (
      await byReference("alpha___echo", { "/__proto__/x": { payload: stored.payloadId, pointer: "/total" } })
    ).result;
    expect(proto.content[0].text).toMatch(/names __proto__/);
  });

  it("finds a principal's own payload from either era, and refuses another principal's", async () => {
    const authed = authVars({ apiKeys: true }, vars);
    const persona = { roles: ["r-by-reference"], allow: ["alpha___*"] };
    expect((await authAdmin("PUT", "/personas/by-reference", persona, authed)).status).toBe(200);
    const key = async (who: string) =>
      (await makeKey({ principal: `${who}-${crypto.randomUUID()}`, roles: ["r-by-reference"] }, authed)).headers;
    const [owner, stranger] = [await key("owner"), await key("stranger")];
    // Stored for a 2026-07-28 client, referenced from its principal's 2025 session.
    const params = { name: "sys___call_tool", arguments: { name: "alpha___big_list", arguments: { count: 200 } } };
    const stored = (await modern("/mcp?catalog=search", "tools/call", params, { vars: authed, headers: owner })).result
      .structuredContent;
    expect(stored.truncated).toBe(true);
    const reference = { "/b": { payload: stored.payloadId, pointer: "/items/7/id" } };
    const args = { name: "alpha___add", arguments: { a: 1 }, argumentsFrom: reference };
    const mine = await session("/mcp?catalog=search", authed, owner);
    expect((await mine.call("sys___call_tool", args)).result.structuredContent).toEqual({ sum: 8 });
    const theirs = await session("/mcp?catalog=search", authed, stranger);
    const refused = (await theirs.call("sys___call_tool", args)).result;
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toMatch(new RegExp(`^sys___call_tool: argumentsFrom "/b": .*${stored.payloadId}`));
    expect(refused.content[0].text).not.toContain("item 7");
  });
});

describe("a call that asks the client", () => {
  const code = 'try { await tools.alpha.ask_user({}); return "answered"; } catch (error) { return error.message; }';
  const expected =
    "alpha___ask_user asked the client (elicitation/create), which a program cannot answer: " +
    "call alpha___ask_user directly";

  it("rejects in the program at once for a 2025 client that could answer it directly", async () => {
    const coder = await session("/mcp?catalog=code", {}, {}, { elicitation: {} });
    expect(runValue(await coder.run(code))).toBe(expected);
  });

  it("rejects in the program for a 2026-07-28 client, which would be asked through input_required", async () => {
    const answer = await modern(
      "/mcp?catalog=code",
      "tools/call",
      { name: "sys___run_code", arguments: { code } },
      { capabilities: { elicitation: {} } },
    );
    expect(answer.result.resultType).toBe("complete");
    expect(runValue(answer.result)).toBe(expected);
  });
});

describe("code mode on both routes in both eras", () => {
  it.each([
    ["/mcp", "2025-11-25"],
    ["/mcp/alpha", "2025-11-25"],
    ["/mcp", "2026-07-28"],
    ["/mcp/alpha", "2026-07-28"],
  ])("on %s for a %s client lists only the gateway's tools and runs a program", async (path, era) => {
    const url = `${path}?catalog=code`;
    const code = "const { sum } = await tools.alpha.add({ a: 1, b: 2 });\nreturn sum * 10;";
    if (era === "2026-07-28") {
      const names = (await modern(url, "tools/list")).result.tools.map((t: Json) => t.name);
      expect(names.sort()).toEqual(["sys___read_payload", "sys___run_code", "sys___search_tools"]);
      expect(runValue((await modern(url, "tools/call", { name: "sys___run_code", arguments: { code } })).result)).toBe(
        30,
      );
      return;
    }
    const client = await session(url);
    expect(runValue(await client.run(code))).toBe(30);
  });
});

describe("declarations", () => {
  const catalog = (definitions: Json[]): Catalog => ({
    digest: "d",
    truncated: false,
    tools: definitions.map((definition) => ({
      name: definition.name,
      upstream: "up-1",
      definition,
      raw: JSON.stringify(definition),
    })),
  });

  it("makes names identifiers, keeps them apart, and neutralises */ in doc comments", () => {
    const tools = catalog([
      { name: "up-1___list-items", description: "Lists */ items", inputSchema: { type: "object" } },
      { name: "up-1___list_items", inputSchema: { type: "object" } },
      {
        name: "up-1___delete",
        inputSchema: { type: "object", properties: { "odd key": { type: "string", description: "a\n*/ b" } } },
      },
    ]);
    const places = toolIdentifiers(tools);
    expect([...places.values()].map((p) => `${p.upstream}.${p.tool}`)).toEqual([
      "up_1.list_items",
      "up_1.list_items_2",
      "up_1._delete",
    ]);
    const text = toolDeclarations(tools.tools, places);
    expect(text).not.toMatch(/\*\/ (items|b)/);
    expect(text).toContain("Lists *\\/ items");
    expect(text).toContain('"odd key"?: string;');
    expect(safeIdentifier("9lives")).toBe("_9lives");
    expect(docComment("x */ y", "")).toBe("/** x *\\/ y */\n");
  });

  it("bounds the depth and the size of a hostile schema", () => {
    let deep: Json = { type: "string" };
    for (let i = 0; i < 100; i++) deep = { type: "object", properties: { next: deep }, required: ["next"] };
    const wide = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(500) }]),
      ),
    };
    const tools = catalog([
      { name: "up-1___deep", inputSchema: deep },
      { name: "up-1___wide", inputSchema: wide },
      {
        name: "up-1___long",
        inputSchema: { type: "object", properties: { ["k".repeat(100_000)]: { const: "v".repeat(100_000) } } },
      },
      { name: "up-1___literal", inputSchema: { enum: ["v".repeat(100_000), "ok"] } },
    ]);
    const text = toolDeclarations(tools.tools, toolIdentifiers(tools));
    expect(text.match(/next: /g)!.length).toBeLessThanOrEqual(MAX_TYPE_DEPTH);
    expect(text).toContain("next: unknown;");
    expect(text).toContain("[key: string]: unknown;");
    expect(text).toContain('literal(args: string | "ok")');
    expect(text).toMatch(/long\(args: \{\n\s+\[key: string\]: unknown;\n\s+\}\)/);
    expect(text.length).toBeLessThan(20_000);
  });
});
