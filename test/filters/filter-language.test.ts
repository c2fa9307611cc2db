/**
 * The filter language as tables: every patch op, retain (indices, escapes, missing
 * branches, the root, overlaps, wildcards), variants, rule selection, fail-closed errors
 * and document validation with locations.
 */
import { describe, expect, it } from "vitest";
import { applyToolFilter, filterToolResult, FilterError, selectFilter } from "../../src/features/filters/apply-filter";
import { checkFilterSet, checkPlan, type FilterSet, type ToolFilter } from "../../src/features/filters/filter-set";
import { parseDocument } from "../../src/storage/document-store";
import { retain } from "../../src/features/filters/retain";
import type { JsonObject } from "../../src/core/jsonrpc";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read deep into JSON
// biome-ignore lint/suspicious/noExplicitAny: tests read filtered answers loosely; the assertions check them.
type Json = any;

const USER = {
  userInfo: { login: "ada", type: "PhysicalPerson", city: "Paris", bioHTML: "<p/>", tags: ["a", "b", "c"] },
  "a/b": { "c~d": 1, e: 2 },
  total: 3,
};

describe("patch operations", () => {
  it.each([
    [
      "add",
      [{ op: "add", path: "/userInfo/country", value: "France" }],
      (v: typeof USER) => ({ ...v, userInfo: { ...v.userInfo, country: "France" } }),
    ],
    [
      "remove",
      [{ op: "remove", path: "/userInfo/bioHTML" }],
      (v: typeof USER) => ({
        ...v,
        userInfo: { login: "ada", type: "PhysicalPerson", city: "Paris", tags: ["a", "b", "c"] },
      }),
    ],
    [
      "replace",
      [{ op: "replace", path: "/userInfo/city", value: "Parigné-le-Pôlin" }],
      (v: typeof USER) => ({ ...v, userInfo: { ...v.userInfo, city: "Parigné-le-Pôlin" } }),
    ],
    ["copy", [{ op: "copy", from: "/userInfo/login", path: "/login" }], (v: typeof USER) => ({ ...v, login: "ada" })],
    [
      "move",
      [{ op: "move", from: "/total", path: "/count" }],
      (v: typeof USER) => ({ userInfo: v.userInfo, "a/b": v["a/b"], count: 3 }),
    ],
    [
      "a passing test",
      [
        { op: "test", path: "/userInfo/type", value: "PhysicalPerson" },
        { op: "remove", path: "/total" },
      ],
      (v: typeof USER) => ({ userInfo: v.userInfo, "a/b": v["a/b"] }),
    ],
    ["an escaped path", [{ op: "remove", path: "/a~1b/c~0d" }], (v: typeof USER) => ({ ...v, "a/b": { e: 2 } })],
    [
      "an array element",
      [{ op: "remove", path: "/userInfo/tags/1" }],
      (v: typeof USER) => ({ ...v, userInfo: { ...v.userInfo, tags: ["a", "c"] } }),
    ],
  ])("%s", (_label, patches, expected) => {
    const out = applyToolFilter(structuredClone(USER), { patches } as ToolFilter, "set, rule");
    expect(out?.value).toEqual(expected(structuredClone(USER)));
  });

  it.each([
    [
      "a failing test",
      [{ op: "test", path: "/userInfo/type", value: "MoralPerson" }],
      /rule: patch 0 \(test \/userInfo\/type\): test failed/,
    ],
    ["removing what is not there", [{ op: "remove", path: "/userInfo/age" }], /patch 0 \(remove \/userInfo\/age\)/],
    [
      "replacing under a missing parent",
      [{ op: "replace", path: "/nope/x", value: 1 }],
      /patch 0 \(replace \/nope\/x\)/,
    ],
  ])("fails closed on %s", (_label, patches, message) => {
    expect(() => applyToolFilter(structuredClone(USER), { patches } as ToolFilter, "rule")).toThrow(FilterError);
    expect(() => applyToolFilter(structuredClone(USER), { patches } as ToolFilter, "rule")).toThrow(message);
  });
});

describe("retain", () => {
  it.each([
    ["one branch", ["/userInfo/login"], { userInfo: { login: "ada" } }],
    ["the root pointer", [""], USER],
    ["overlapping pointers (the wider wins)", ["/userInfo/city", "/userInfo"], { userInfo: USER.userInfo }],
    ["array indices, packed in order", ["/userInfo/tags/2", "/userInfo/tags/0"], { userInfo: { tags: ["a", "c"] } }],
    ["~1 and ~0 escapes", ["/a~1b/c~0d"], { "a/b": { "c~d": 1 } }],
    ["several branches", ["/total", "/userInfo/type"], { userInfo: { type: "PhysicalPerson" }, total: 3 }],
    ["a wildcard over an array", ["/items/*/id"], { items: [{ id: 1 }, { id: 2 }, {}] }],
  ])("%s", (_label, pointers, expected) => {
    const value = _label.includes("wildcard") ? { items: [{ id: 1, x: 1 }, { id: 2 }, { x: 3 }], other: 1 } : USER;
    expect(retain(structuredClone(value), pointers)).toEqual(expected);
  });

  const ITEMS = { items: [{ state: "open", title: "a", x: 1 }, { state: "closed", title: "b", x: 2 }, { x: 3 }] };
  it.each([
    [
      "a named element beside a wildcard keeps what both keep",
      ["/items/0/state", "/items/*/title"],
      { items: [{ state: "open", title: "a" }, { title: "b" }, {}] },
    ],
    [
      "the same, the wildcard's pointer first",
      ["/items/*/title", "/items/0/state"],
      { items: [{ state: "open", title: "a" }, { title: "b" }, {}] },
    ],
    ["a wildcard keeping elements whole keeps a named one whole", ["/items/*", "/items/0/state"], ITEMS],
    [
      "what only the wildcard keeps is not required of the named element",
      ["/items/2/x", "/items/*/title"],
      { items: [{ title: "a" }, { title: "b" }, { x: 3 }] },
    ],
    ["over object members too", ["/m/a/x", "/m/*/y"], { m: { a: { x: 1, y: 2 }, b: { y: 4 } } }],
  ])("union: %s", (_label, pointers, expected) => {
    const value = _label.includes("object") ? { m: { a: { x: 1, y: 2, z: 3 }, b: { x: 5, y: 4 } } } : ITEMS;
    expect(retain(structuredClone(value), pointers)).toEqual(expected);
  });

  it("holds a member named * to the pointer, as a name (the one-pass walk does too)", () => {
    expect(() => retain({ "*": 1, y: { x: 2 } }, ["/*/x"])).toThrow("nothing at /* to descend into");
    expect(retain({ "*": { x: 1 }, y: 3 }, ["/*/x"])).toEqual({ "*": { x: 1 } });
  });

  it("still fails closed on a named pointer beside a wildcard that does not resolve", () => {
    expect(() =>
      applyToolFilter(structuredClone(ITEMS), { retain: ["/items/2/state", "/items/*/title"] }, "r"),
    ).toThrow(/nothing at \/items\/2\/state/);
  });

  const refusedAtValidation = (pointers: string[]) => {
    const checked = checkFilterSet("s", { tools: { t: { retain: pointers } } });
    expect(checked.ok).toBe(false);
    if (!checked.ok)
      expect(checked.problems[0]).toMatchObject({
        path: "/tools/t/retain",
        message: expect.stringMatching(/combine into more than 100000 branches and copied members/),
      });
  };

  it("refuses pointers that combine into too large a tree, deep: at validation", () => {
    // Each name beside a "*" takes a copy of what the "*" keeps: 2^20 combinations.
    refusedAtValidation([
      `/${Array(20).fill("*").join("/")}/leaf`,
      ...Array.from({ length: 20 }, (_, i) => `/${Array(i).fill("*").join("/")}${i > 0 ? "/" : ""}n/leaf`),
    ]);
  });

  it("refuses pointers that combine into too large a tree, wide: at validation, before copying", () => {
    // 2,000 names beside a "*" keeping 5,000 members: ten million copies if made.
    refusedAtValidation([
      ...Array.from({ length: 5_000 }, (_, i) => `/*/x${i}`),
      ...Array.from({ length: 2_000 }, (_, i) => `/n${i}/z`),
    ]);
    refusedAtValidation([
      ...Array.from({ length: 5_000 }, (_, i) => `/*/a/x${i}`),
      ...Array.from({ length: 2_000 }, (_, i) => `/n${i}/z`),
    ]);
  });

  it("still takes a long list of pointers without wildcards", () => {
    const pointers = Array.from({ length: 20_000 }, (_, i) => `/a${i % 100}/b${i}`);
    expect(checkFilterSet("s", { tools: { t: { retain: pointers } } }).ok).toBe(true);
  });

  it.each([
    ["a missing member", ["/userInfo/age"], /nothing at \/userInfo\/age/],
    ["an index past the end", ["/userInfo/tags/9"], /nothing at \/userInfo\/tags\/9/],
    ["descending into a string", ["/userInfo/login/x"], /value there is string/],
    ["a missing member under an escaped key", ["/a~1b/zz"], /nothing at \/a~1b\/zz/],
  ])("fails closed on %s", (_label, pointers, message) => {
    expect(() => applyToolFilter(structuredClone(USER), { retain: pointers }, "set x, rule y")).toThrow(message);
  });

  it('keeps a "__proto__" member as data, not as a prototype', () => {
    const value: unknown = JSON.parse('{"__proto__":{"polluted":true},"a":1}');
    const out = retain(value, ["/__proto__"]) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true}}');
  });

  it("runs before the patches", () => {
    const out = applyToolFilter(
      structuredClone(USER),
      { retain: ["/userInfo"], patches: [{ op: "remove", path: "/userInfo/bioHTML" }] },
      "r",
    );
    expect(out?.value).toEqual({
      userInfo: { login: "ada", type: "PhysicalPerson", city: "Paris", tags: ["a", "b", "c"] },
    });
  });
});

describe("variants", () => {
  const variants: ToolFilter = [
    { test: { path: "/userInfo/type", value: "MoralPerson" }, retain: ["/userInfo/login"] },
    { test: { path: "/userInfo/type", value: "PhysicalPerson" }, retain: ["/userInfo/city"] },
  ];

  it("applies the first variant whose test holds", () => {
    expect(applyToolFilter(structuredClone(USER), variants, "r")?.value).toEqual({ userInfo: { city: "Paris" } });
  });

  it("passes the result unchanged when no test holds", () => {
    expect(applyToolFilter({ userInfo: { type: "Robot" } }, variants, "r")).toBeUndefined();
    expect(applyToolFilter({ other: 1 }, variants, "r")).toBeUndefined();
  });

  it("compares test values deeply", () => {
    const deep: ToolFilter = [{ test: { path: "/userInfo/tags", value: ["a", "b", "c"] }, retain: ["/total"] }];
    expect(applyToolFilter(structuredClone(USER), deep, "r")?.value).toEqual({ total: 3 });
  });

  it("names the variant in a failure", () => {
    const failing: ToolFilter = [{ test: { path: "/total", value: 3 }, patches: [{ op: "remove", path: "/missing" }] }];
    expect(() => applyToolFilter(structuredClone(USER), failing, 'filter set "s", rule "k"')).toThrow(
      /rule "k" variant 0: patch 0/,
    );
  });
});

describe("tool results", () => {
  it("filters structuredContent and JSON text blocks, and lets images pass", () => {
    const result = {
      content: [
        { type: "text", text: JSON.stringify(USER) },
        { type: "image", data: "x", mimeType: "image/png" },
      ],
      structuredContent: USER,
    };
    const out = filterToolResult(result, { retain: ["/total"] }, "r");
    expect(out).toEqual({
      content: [
        { type: "text", text: '{"total":3}' },
        { type: "image", data: "x", mimeType: "image/png" },
      ],
      structuredContent: { total: 3 },
    });
  });

  it("fails closed when the result holds no JSON for the rule", () => {
    expect(() =>
      filterToolResult({ content: [{ type: "text", text: "name: Ada\ncity: Paris" }] }, { retain: ["/a"] }, "r"),
    ).toThrow(/holds no JSON/);
  });

  it("replaces a text block that is not JSON with the filtered structuredContent", () => {
    const out = filterToolResult(
      { content: [{ type: "text", text: "Ada lives in Paris, born 1815" }], structuredContent: USER },
      { retain: ["/total"] },
      "r",
    );
    expect(out.content).toEqual([{ type: "text", text: '{"total":3}' }]);
  });

  it("chooses the variant once and applies it to every JSON part", () => {
    const variants: ToolFilter = [{ test: { path: "/total", value: 3 }, retain: ["/total"] }];
    // The text block has another shape: the same rule fails on it, so the call fails closed.
    expect(() =>
      filterToolResult({ content: [{ type: "text", text: '{"other":1}' }], structuredContent: USER }, variants, "r"),
    ).toThrow(/content 0/);
    const result = { content: [{ type: "text", text: '{"total":9}' }] };
    expect(filterToolResult(result, variants, "r")).toBe(result); // no variant holds: unchanged
  });

  it("filters embedded resources and refuses binary ones", () => {
    const text = filterToolResult(
      { content: [{ type: "resource", resource: { uri: "x://1", text: JSON.stringify(USER) } }] },
      { retain: ["/total"] },
      "r",
    );
    expect(text.content).toEqual([{ type: "resource", resource: { uri: "x://1", text: '{"total":3}' } }]);
    expect(() =>
      filterToolResult(
        { content: [{ type: "resource", resource: { uri: "x://1", blob: "AAAA" } }], structuredContent: USER },
        { retain: ["/total"] },
        "r",
      ),
    ).toThrow(/binary/);
  });
});

describe("what a filtered result keeps", () => {
  const JSON_TEXT = JSON.stringify({ keep: 1, drop: 2 });
  it.each([
    [
      "drops the result's _meta",
      { content: [], structuredContent: { keep: 1 }, _meta: { leak: 1 } },
      { content: [], structuredContent: { keep: 1 } },
    ],
    [
      "drops an unknown result member",
      { content: [], structuredContent: { keep: 1 }, extra: "leak" },
      { content: [], structuredContent: { keep: 1 } },
    ],
    [
      "keeps isError",
      { content: [{ type: "text", text: JSON_TEXT }], isError: true },
      { content: [{ type: "text", text: '{"keep":1}' }], isError: true },
    ],
    [
      "drops a text block's annotations, _meta and extras",
      {
        content: [{ type: "text", text: JSON_TEXT, annotations: { audience: ["user"] }, _meta: { leak: 1 }, extra: 1 }],
      },
      { content: [{ type: "text", text: '{"keep":1}' }] },
    ],
    [
      "drops a resource's annotations and _meta",
      {
        content: [
          {
            type: "resource",
            resource: { uri: "x://1", mimeType: "application/json", text: JSON_TEXT, _meta: { leak: 1 } },
            annotations: { priority: 1 },
          },
        ],
      },
      { content: [{ type: "resource", resource: { uri: "x://1", mimeType: "application/json", text: '{"keep":1}' } }] },
    ],
    [
      "drops an image's annotations and extras",
      {
        content: [
          { type: "text", text: JSON_TEXT },
          { type: "image", data: "AAAA", mimeType: "image/png", annotations: { priority: 1 }, extra: 1 },
        ],
      },
      {
        content: [
          { type: "text", text: '{"keep":1}' },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
      },
    ],
    [
      "drops a resource link's _meta",
      {
        content: [
          { type: "text", text: JSON_TEXT },
          { type: "resource_link", uri: "x://2", name: "two", _meta: { leak: 1 } },
        ],
      },
      {
        content: [
          { type: "text", text: '{"keep":1}' },
          { type: "resource_link", uri: "x://2", name: "two" },
        ],
      },
    ],
  ])("%s", (_label, result, expected) => {
    expect(filterToolResult(result as JsonObject, { retain: ["/keep"] }, "r")).toEqual(expected);
  });

  it.each([
    ["a block of an unknown type", { type: "hologram", data: "leak" }, /a "hologram" block cannot be filtered/],
    ["a block that is not an object", "leak", /not a content block/],
  ])("fails closed on %s", (_label, block, message) => {
    expect(() =>
      filterToolResult({ content: [{ type: "text", text: JSON_TEXT }, block] }, { retain: ["/keep"] }, "r"),
    ).toThrow(message);
  });
});

describe("a set is immutable configuration", () => {
  it("gives each application its own copy of patch values, and stays frozen", () => {
    const checked = checkFilterSet("s", {
      tools: {
        a___b: {
          patches: [
            { op: "add", path: "/seen", value: [] },
            { op: "copy", from: "/login", path: "/seen/-" },
            { op: "replace", path: "/login", value: { hidden: true } },
          ],
        },
      },
    });
    if (!checked.ok) throw new Error("the set is valid");
    const filter = checked.value.tools["a___b"]!;
    const first = applyToolFilter({ login: "ada" }, filter, "r")?.value as Json;
    const second = applyToolFilter({ login: "grace" }, filter, "r")?.value as Json;
    expect(second).toEqual({ login: { hidden: true }, seen: ["grace"] });
    first.login.hidden = false;
    expect((applyToolFilter({ login: "alan" }, filter, "r")!.value as Json).login).toEqual({ hidden: true });
    expect(Object.isFrozen((filter as Json).patches[0].value)).toBe(true);
  });
});

describe("rule selection", () => {
  const set: FilterSet = {
    name: "s",
    mode: "enforce",
    tools: {
      "github___*": { retain: ["/a"] },
      "github___get_*": { retain: ["/b"] },
      github___get_user: { retain: ["/c"] },
      "*": { retain: ["/d"] },
    },
  };
  it.each([
    ["github___get_user", "github___get_user"],
    ["github___get_repo", "github___get_*"],
    ["github___list", "github___*"],
    ["jira___x", "*"],
  ])("%s uses %s", (tool, key) => {
    expect(selectFilter(set, tool)?.key).toBe(key);
  });
});

describe("documents", () => {
  it("reads YAML as well as JSON", async () => {
    const yaml =
      'tools:\n  github___get_user_with_latest_followers:\n    retain: [/userInfo]\n    patches:\n      - { op: remove, path: /userInfo/bioHTML }\n      - { op: replace, path: /userInfo/city, value: "Parigné-le-Pôlin" }\n';
    const parsed = await parseDocument(yaml);
    expect(parsed.ok && checkFilterSet("partner", parsed.value).ok).toBe(true);
  });

  it.each([
    ["not an object", [], "", /must be an object/],
    ["no tools", {}, "/tools", /must map tool names/],
    ["an unknown field", { tools: {}, mdoe: "shadow" }, "/mdoe", /unknown field/],
    ["a bad mode", { tools: {}, mode: "loud" }, "/mode", /"enforce" or "shadow"/],
    ["a rule with nothing", { tools: { a___b: {} } }, "/tools/a___b", /needs retain, patches or both/],
    [
      "a pointer without a slash",
      { tools: { a___b: { retain: ["userInfo"] } } },
      "/tools/a___b/retain/0",
      /must be "" \(the whole result\) or start with "\/"/,
    ],
    ["a bad escape", { tools: { a___b: { retain: ["/a~2b"] } } }, "/tools/a___b/retain/0", /"~0" \(for ~\) or "~1"/],
    [
      "an unknown op",
      { tools: { a___b: { patches: [{ op: "delete", path: "/a" }] } } },
      "/tools/a___b/patches/0",
      /OPERATION_OP_INVALID/,
    ],
    [
      "an add without value",
      { tools: { a___b: { patches: [{ op: "add", path: "/a" }] } } },
      "/tools/a___b/patches/0",
      /OPERATION_VALUE_REQUIRED/,
    ],
    [
      "a move without from",
      { tools: { a___b: { patches: [{ op: "move", path: "/a" }] } } },
      "/tools/a___b/patches/0",
      /OPERATION_FROM_REQUIRED/,
    ],
    ["a variant without test", { tools: { a___b: [{ retain: ["/a"] }] } }, "/tools/a___b/0/test", /must be \{"path"/],
    ["no variants", { tools: { a___b: [] } }, "/tools/a___b", /needs 1 to 32 variants/],
    ["a tool key with a space", { tools: { "a b": { retain: ["/a"] } } }, "/tools/a b", /a tool key is/],
  ])("rejects %s at %j", (_label, document, path, message) => {
    const checked = checkFilterSet("s", document);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it("reports every error of a document at once", () => {
    const checked = checkFilterSet("s", {
      tools: { a___b: { retain: ["x"], patches: [{ op: "nope", path: "/a" }] }, c___d: [] },
    });
    expect(!checked.ok && checked.problems.map((p) => p.path)).toEqual([
      "/tools/a___b/retain/0",
      "/tools/a___b/patches/0",
      "/tools/c___d",
    ]);
  });

  it.each([
    [{ default: "base", routes: { "/mcp/github": "partner" }, upstreams: { jira: null } }, true],
    [{ routes: { "/other": "x" } }, false],
    [{ default: 3 }, false],
    [{ upstreams: { a: "bad name!" } }, false],
  ])("checks the plan %j", (plan, ok) => {
    expect(checkPlan(plan).ok).toBe(ok);
  });
});
