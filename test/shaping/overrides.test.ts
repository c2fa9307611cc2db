/**
 * Text overrides: tools and prompts retitled and re-described, an upstream's
 * instructions replaced, on /mcp and /mcp/<upstream>; only the overridden members
 * change (the raw upstream's schema traps keep every byte); bad documents refused.
 */
import { afterAll, beforeEach, describe, expect, inject, it } from "vitest";
import { rawEnvelope, TRAP_TOOL } from "../fixtures/raw-upstream-bytes";
import { ADMIN_VARS, admin, putDocument } from "../helpers/admin";
import { initialize, messageTexts, post, request } from "../helpers/gateway";

const { raw } = inject("fixtureUrls");
const upstreams = inject("upstreams");
const VARS = { ...ADMIN_VARS };

beforeEach(async () => {
  await admin("DELETE", "/overrides");
});
// And after: the suite shares one KV, and the last test's document would shape every later file's lists.
afterAll(async () => {
  await admin("DELETE", "/overrides");
});

const OVERRIDES = {
  tools: {
    alpha___echo: { title: "Echo (gateway)", description: "Repeats text, says the gateway" },
    alpha___add: { description: "Sums two numbers" },
  },
  prompts: { alpha___greet: { title: "Greeting", description: "A friendly greeting" } },
  upstreams: { alpha: { instructions: "Use alpha for sums." }, beta: { instructions: "Beta writes haiku." } },
};

describe.each([
  ["/mcp", "alpha___"],
  ["/mcp/alpha", ""],
])("overrides on %s", (path, prefix) => {
  it.each([
    [
      "a tool's title and description",
      "tools/list",
      "tools",
      "echo",
      { title: "Echo (gateway)", description: "Repeats text, says the gateway" },
    ],
    ["a tool's description only", "tools/list", "tools", "add", { description: "Sums two numbers" }],
    [
      "a prompt's title and description",
      "prompts/list",
      "prompts",
      "greet",
      { title: "Greeting", description: "A friendly greeting" },
    ],
  ])("change %s and nothing else", async (_label, method, key, name, expected) => {
    const { session } = await initialize(path, { vars: VARS });
    const before = (await request(path, session, method, undefined, { vars: VARS })).result[key] as { name: string }[];
    await putDocument("/overrides", OVERRIDES);
    const after = (await request(path, session, method, undefined, { vars: VARS })).result[key] as { name: string }[];
    const original = before.find((item) => item.name === `${prefix}${name}`)!;
    const changed = after.find((item) => item.name === `${prefix}${name}`)!;
    expect(changed).toEqual({ ...original, ...expected });
    // Every other entry is untouched.
    expect(
      after.filter(
        (item) =>
          item.name !== `${prefix}${name}` &&
          !(item.name.endsWith("echo") || item.name.endsWith("add") || item.name.endsWith("greet")),
      ),
    ).toEqual(
      before.filter(
        (item) =>
          item.name !== `${prefix}${name}` &&
          !(item.name.endsWith("echo") || item.name.endsWith("add") || item.name.endsWith("greet")),
      ),
    );
  });

  it("replace the upstream's instructions", async () => {
    await putDocument("/overrides", OVERRIDES);
    const { result } = await initialize(path, { vars: VARS });
    if (path === "/mcp/alpha") expect(result.instructions).toBe("Use alpha for sums.");
    else {
      expect(result.instructions).toContain("## alpha (tools and prompts named alpha___*)\nUse alpha for sums.");
      expect(result.instructions).toContain("## beta (tools and prompts named beta___*)\nBeta writes haiku.");
      expect(result.instructions).not.toContain("Alpha answers echo calls.");
    }
  });
});

describe("overrides keep every other byte", () => {
  const RAW_VARS = {
    ...VARS,
    UPSTREAMS: JSON.stringify([{ name: "raw", url: raw }]),
    OFFLOAD: JSON.stringify({ exclude: ["raw___*"] }),
  };
  const EXPECTED_TOOL = TRAP_TOOL.replace(
    '"description":"Schema traps"',
    '"description":"Traps, described by the gateway"',
  ).replace(/}$/, ',"title":"Trap \\u00e9 \\""}');

  it.each([
    ["/mcp/raw", "trap"],
    ["/mcp", "raw___trap"],
  ])("on %s: the schemas keep their exact bytes, only title and description change", async (path, name) => {
    await putDocument("/overrides", {
      tools: { raw___trap: { title: 'Trap é "', description: "Traps, described by the gateway" } },
    });
    const { session } = await initialize(path, { vars: RAW_VARS });
    const texts = await messageTexts(
      await post(path, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}', { session, vars: RAW_VARS }),
    );
    const text = texts[texts.length - 1]!;
    const tool = EXPECTED_TOOL.replace('"name":"trap"', `"name":"${name}"`).replace(
      '"title":"Trap \\u00e9 \\""',
      JSON.stringify({ title: 'Trap é "' }).slice(1, -1),
    );
    if (path === "/mcp/raw") expect(text).toBe(rawEnvelope(3, `{"tools":[${tool}],"nextCursor":"page-2"}`));
    else expect(text).toContain(tool);
  });
});

describe("the overrides document", () => {
  it.each([
    ["an unknown field", { tools: { a___b: { titel: "x" } } }, "/tools/a___b/titel"],
    ["an empty title", { prompts: { a___b: { title: "" } } }, "/prompts/a___b/title"],
    ["instructions that are not text", { upstreams: { alpha: { instructions: 3 } } }, "/upstreams/alpha/instructions"],
    ["a list instead of an object", [], ""],
  ])("is refused with %s, located", async (_label, document, pointer) => {
    const response = await admin("PUT", "/overrides", document);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: { path: string }[] };
    expect(body.problems.map((p) => p.path)).toContain(pointer);
    expect((await admin("GET", "/overrides")).status).toBe(404);
  });

  it("is read back and deleted, and a deleted document changes nothing", async () => {
    await putDocument("/overrides", "tools:\n  alpha___echo:\n    title: From YAML\n");
    expect(await (await admin("GET", "/overrides")).json()).toEqual({
      tools: { alpha___echo: { title: "From YAML" } },
    });
    expect((await admin("DELETE", "/overrides")).status).toBe(200);
    const { session } = await initialize("/mcp", { vars: VARS });
    const tools = (await request("/mcp", session, "tools/list", undefined, { vars: VARS })).result.tools as {
      name: string;
      title?: string;
    }[];
    expect(tools.find((t) => t.name === "alpha___echo")?.title).toBeUndefined();
    expect(upstreams.length).toBeGreaterThan(0);
  });
});
