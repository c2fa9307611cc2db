/**
 * The one-pass filter (features/filters/filter-answer.ts, features/filters/retain-text.ts) against the path
 * it replaces (parse the answer, `filterToolResult`, write it), over generated answers
 * and rules: every answer text and every failure message must be the same. Documents are
 * written by hand, so they carry what `JSON.stringify` never writes: keys twice in one
 * object, escapes (`\u0041`, `\/`, surrogate pairs), `1e3`, `-0`, `10.0`, whitespace,
 * `__proto__` and index-like keys. Seeded: a failure names the seed that reproduces it.
 */
import { describe, expect, it } from "vitest";
import { filterAnswerText } from "../../src/features/filters/filter-answer";
import { checkFilterSet, type ToolFilter } from "../../src/features/filters/filter-set";
import { newPath, parsedPath } from "../helpers/filter-paths";

/** A JSON value as written: objects are member lists, so a key may come twice. */
type Raw = { o: [string, Raw][] } | { a: Raw[] } | { s: string } | { n: string } | { l: "true" | "false" | "null" };

/** mulberry32: small, seeded, good enough to draw documents. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [
  "id",
  "name",
  "items",
  "user",
  "a/b",
  "c~d",
  "*",
  "0",
  "1",
  "10",
  "__proto__",
  "é",
  "😀",
  "x y",
  'q"t',
  "b\\s",
  "",
];
const STRINGS = ["", "plain", "é ü", "😀", "line\nbreak", 'quote " in', "back\\slash", "tab\t", "\u2028", "/path/"];
const NUMBERS = ["0", "-0", "1", "10.0", "1e3", "-2.5E-3", "12345678901234567890", "3"];

function draw(rnd: () => number, depth: number): Raw {
  const pick = rnd();
  if (depth < 4 && pick < 0.3) {
    const members: [string, Raw][] = [];
    const count = Math.floor(rnd() * 5);
    for (let i = 0; i < count; i++) members.push([KEYS[Math.floor(rnd() * KEYS.length)]!, draw(rnd, depth + 1)]);
    return { o: members };
  }
  if (depth < 4 && pick < 0.5) {
    const count = Math.floor(rnd() * 5);
    return { a: Array.from({ length: count }, () => draw(rnd, depth + 1)) };
  }
  if (pick < 0.75) return { s: STRINGS[Math.floor(rnd() * STRINGS.length)]! };
  if (pick < 0.9) return { n: NUMBERS[Math.floor(rnd() * NUMBERS.length)]! };
  return { l: (["true", "false", "null"] as const)[Math.floor(rnd() * 3)]! };
}

/** Writes a string with the escapes JSON allows but JSON.stringify does not choose, now and then. */
function writeString(value: string, rnd: () => number): string {
  let out = "";
  for (const char of value) {
    const roll = rnd();
    if (char === "/" && roll < 0.5) out += "\\/";
    else if (roll < 0.1)
      out += [...char]
        .map((unit) =>
          [...Array(unit.length)].map((_, i) => `\\u${unit.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
        )
        .join("");
    else out += JSON.stringify(char).slice(1, -1);
  }
  return `"${out}"`;
}

function write(raw: Raw, rnd: () => number, space: boolean): string {
  const gap = space ? " \n" : "";
  if ("o" in raw)
    return `{${gap}${raw.o.map(([key, value]) => `${writeString(key, rnd)}${gap}:${gap}${write(value, rnd, space)}`).join(`,${gap}`)}${gap}}`;
  if ("a" in raw) return `[${gap}${raw.a.map((value) => write(value, rnd, space)).join(`,${gap}`)}${gap}]`;
  if ("s" in raw) return writeString(raw.s, rnd);
  if ("n" in raw) return raw.n;
  return raw.l;
}

const escapeToken = (token: string) => token.replace(/~/g, "~0").replace(/\//g, "~1");

/** Pointers into the parsed document (most resolve), some with `*`, some that do not resolve. */
function pointers(rnd: () => number, value: unknown): string[] {
  const out: string[] = [];
  const count = 1 + Math.floor(rnd() * 4);
  for (let n = 0; n < count; n++) {
    const tokens: string[] = [];
    let at = value;
    // Rarely "" (the whole value: the parsed path's business), mostly a few tokens deep.
    while (typeof at === "object" && at !== null && rnd() < (tokens.length === 0 ? 0.98 : 0.8)) {
      const keys = Object.keys(at);
      if (keys.length === 0) break;
      const key = keys[Math.floor(rnd() * keys.length)]!;
      tokens.push(rnd() < 0.2 ? "*" : key);
      at = (at as Record<string, unknown>)[key];
    }
    if (rnd() < 0.05) tokens.push(["missing", "9", "01", "-"][Math.floor(rnd() * 4)]!);
    out.push(tokens.map((token) => `/${token === "*" ? "*" : escapeToken(token)}`).join(""));
  }
  return out;
}

/** A test on the document: at a pointer into it (now and then one that leads nowhere), its value there or another. */
function testFor(rnd: () => number, value: unknown): { path: string; value: unknown } {
  const [pointer] = pointers(rnd, value);
  let at: unknown = value;
  for (const token of pointer!.split("/").slice(1))
    at =
      typeof at === "object" && at !== null
        ? (at as Record<string, unknown>)[token.replace(/~1/g, "/").replace(/~0/g, "~")]
        : undefined;
  const roll = rnd();
  return {
    path: pointer!.replace(/\*/g, rnd() < 0.5 ? "0" : "id"),
    value: roll < 0.6 && at !== undefined ? at : roll < 0.8 ? "plain" : { other: 1 },
  };
}

function ruleFor(rnd: () => number, value: unknown): ToolFilter {
  const patches =
    rnd() < 0.3
      ? [{ op: "add", path: "/added", value: { by: "gateway" } }]
      : rnd() < 0.1
        ? [{ op: "remove", path: "/not-there" }]
        : undefined;
  // A tenth of the rules have no retain: only patches, on the whole value.
  const plain =
    rnd() < 0.1
      ? { patches: patches ?? [{ op: "remove", path: "/items" }] }
      : { retain: pointers(rnd, value), ...(patches ? { patches } : {}) };
  // A third of the rules are variants: one to three, each guarded by a test on the document.
  const rule =
    rnd() < 0.35
      ? Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, i) => ({
          test: testFor(rnd, value),
          ...(i === 0 ? plain : { retain: pointers(rnd, value) }),
        }))
      : plain;
  const checked = checkFilterSet("generated", { tools: { t: rule } });
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return checked.value.tools["t"]!;
}

type Layout =
  | "sdk"
  | "pretty text"
  | "text only"
  | "structured only"
  | "with image"
  | "text not json"
  | "resource"
  | "extras"
  | "two texts";

/** The result members (as JSON text) for a layout, around the document `doc`. */
function resultOf(layout: Layout, doc: string, other: string): string {
  const text = (t: string) => `{"type":"text","text":${JSON.stringify(t)}}`;
  switch (layout) {
    case "sdk":
      return `{"content":[${text(doc)}],"structuredContent":${doc}}`;
    case "pretty text":
      return `{"content":[${text(other)}],"structuredContent":${doc},"isError":false}`;
    case "text only":
      return `{"content":[${text(doc)}]}`;
    case "structured only":
      return `{"structuredContent":${doc},"content":[]}`;
    case "with image":
      return `{"content":[{"type":"image","data":"AAAA","mimeType":"image/png","annotations":{"audience":["user"]}},${text(doc)}],"structuredContent":${doc}}`;
    case "text not json":
      return `{"content":[${text("see structuredContent")}],"structuredContent":${doc}}`;
    case "resource":
      return `{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"application/json","text":${JSON.stringify(doc)}}}],"structuredContent":${doc}}`;
    case "two texts": // the first string does not end where the layout's end would be
      return `{"content":[${text(doc)},${text(other)}],"structuredContent":${doc}}`;
    case "extras":
      return `{"_meta":{"k":1},"content":[${text(doc)}],"structuredContent":${doc},"isError":true,"other":[1,2]}`;
  }
}

const LAYOUTS: Layout[] = [
  "sdk",
  "pretty text",
  "text only",
  "structured only",
  "with image",
  "text not json",
  "resource",
  "extras",
  "two texts",
];
const CASES = 4000;

describe("the one-pass filter answers as the parsed path does", () => {
  it(`over ${CASES} generated answers and rules`, () => {
    let taken = 0;
    let variantsTaken = 0;
    let failures = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const rnd = random(seed);
      const raw: Raw =
        rnd() < 0.8
          ? {
              o: [
                ["items", { a: [draw(rnd, 2), draw(rnd, 2)] }],
                ...((draw(rnd, 0) as { o?: [string, Raw][] }).o ?? []),
              ],
            }
          : draw(rnd, 0);
      const doc = write(raw, rnd, rnd() < 0.2);
      const layout = LAYOUTS[seed % LAYOUTS.length]!;
      const answer = `{"jsonrpc":"2.0","id":7,"result":${resultOf(layout, doc, JSON.stringify(JSON.parse(doc), null, 2))}}`;
      const filter = ruleFor(rnd, JSON.parse(doc));
      const expected = parsedPath(answer, filter);
      expect({ seed, answer: newPath(answer, filter) }).toEqual({ seed, answer: expected });
      if (filterAnswerText(answer, 7, filter, "label")) {
        taken++;
        if (Array.isArray(filter)) variantsTaken++;
      }
      if (expected.startsWith("FilterError")) failures++;
    }
    // Not vacuous: most answers take the one-pass path, and failures are among the cases.
    expect(taken).toBeGreaterThan(CASES / 2);
    expect(failures).toBeGreaterThan(CASES / 50);
    expect(variantsTaken).toBeGreaterThan(CASES / 40);
  });

  it.each([
    ["a key twice (the last value wins, at the first place)", '{"a":{"x":1},"b":2,"a":{"x":3,"y":4}}', ["/a/x", "/b"]],
    ["a key twice under a wildcard", '{"items":[{"id":1,"id":2},{"id":3}]}', ["/items/*/id"]],
    [
      "a key twice, the last lacking the rest of the pointer",
      '{"items":[{"a":{"x":1},"b":2,"a":"s"},{"b":3,"a":[],"a":{"x":4}}]}',
      ["/items/*/a/x", "/items/*/b"],
    ],
    ["a key twice among the members a wildcard takes", '{"a":{"x":1},"b":{"x":2},"a":"s"}', ["/*/x"]],
    ["escaped keys", '{"a\\/b":{"c~d":1},"\\u0041":2}', ["/a~1b/c~0d", "/A"]],
    ["a __proto__ member", '{"__proto__":{"x":1},"y":2}', ["/__proto__/x"]],
    ["index-like keys come first, as in a parsed object", '{"b":1,"2":2,"a":3,"1":4}', ["/b", "/a", "/1", "/2"]],
    ["numbers as written", '{"n":[1e3,-0,10.0,12345678901234567890]}', ["/n"]],
    ["a member named *", '{"*":{"x":1},"y":{"x":2}}', ["/*/x"]],
    ["array tokens that are no index", '{"a":[1,2,3]}', ["/a/01"]],
    ["an index past the end", '{"a":[1,2,3]}', ["/a/3"]],
    ["descending into a string", '{"a":"text"}', ["/a/b"]],
    ["a wildcard over scalars and objects", '{"a":[1,{"b":2},[3],{"c":4}]}', ["/a/*/b"]],
    [
      "keys longer than the names indexed by length, two of one length",
      `{"${"k".repeat(70)}":1,"${"j".repeat(70)}":2,"${"k".repeat(69)}x":3,"k":4}`,
      [`/${"k".repeat(70)}`, `/${"k".repeat(69)}x`],
    ],
    ["names of one length among keys of that length", '{"ab":1,"cd":2,"ef":3,"a":4}', ["/cd", "/ab", "/a"]],
    [
      "a named element beside a wildcard",
      '{"items":[{"s":1,"t":2,"x":0},{"t":3},{"x":4}]}',
      ["/items/0/s", "/items/*/t"],
    ],
    [
      "a named element lacking what only the wildcard keeps",
      '{"items":[{"s":1},{"t":3}]}',
      ["/items/0/s", "/items/*/t"],
    ],
    ["a named member beside a wildcard keeping members whole", '{"m":{"a":{"x":1,"y":2},"b":3}}', ["/m/a/x", "/m/*"]],
  ])("%s", (_label, doc, retain) => {
    const checked = checkFilterSet("s", { tools: { t: { retain } } });
    if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
    const filter = checked.value.tools["t"]!;
    for (const layout of LAYOUTS) {
      const answer = `{"jsonrpc":"2.0","id":7,"result":${resultOf(layout, doc, JSON.stringify(JSON.parse(doc), null, 2))}}`;
      expect({ layout, answer: newPath(answer, filter) }).toEqual({ layout, answer: parsedPath(answer, filter) });
    }
  });

  const variant = (path: string, value: unknown, retain: string[]) => ({ test: { path, value }, retain });
  it.each([
    [
      "the test's key twice: the last value chooses",
      '{"type":"A","x":1,"y":2,"type":"B"}',
      [variant("/type", "A", ["/x"]), variant("/type", "B", ["/y"])],
    ],
    [
      "the test's key twice, deeper",
      '{"u":{"type":"A","type":"B"},"x":1,"y":2}',
      [variant("/u/type", "A", ["/x"]), variant("/u/type", "B", ["/y"])],
    ],
    [
      "the test's key twice inside what the variant keeps whole",
      '{"user":{"type":"A","type":"B"},"n":1}',
      [variant("/user/type", "A", ["/user"]), variant("/user/type", "B", ["/n"])],
    ],
    [
      "a test inside what the variant keeps whole",
      '{"user":{"type":"P","name":"n"},"org":{"type":"M"}}',
      [variant("/org/type", "P", ["/org"]), variant("/user/type", "P", ["/user"])],
    ],
    [
      "a test on an array element",
      '{"items":[{"k":"a"},{"k":"b","v":1}],"n":2}',
      [variant("/items/1/k", "a", ["/n"]), variant("/items/1/k", "b", ["/items/1", "/n"])],
    ],
    [
      "a test on an element a wildcard keeps",
      '{"items":[{"k":"a"},{"k":"b","v":1}],"n":2}',
      [variant("/items/1/k", "b", ["/items/*/v", "/n"])],
    ],
    [
      "a test on a non-index token of an array",
      '{"items":[{"k":"a"}],"n":2}',
      [variant("/items/01/k", "a", ["/n"]), variant("/n", 2, ["/items"])],
    ],
    [
      "a test on an object value (deep equality)",
      '{"meta":{"a":[1,{"b":2}]},"n":1}',
      [variant("/meta", { a: [1, { b: 2 }] }, ["/n"])],
    ],
    [
      "the test's key twice, the last lacking the rest of the pointer",
      '{"u":{"t":"A"},"n":1,"u":"s"}',
      [variant("/u/t", "A", ["/u"]), variant("/n", 1, ["/n"])],
    ],
    [
      "tests at a place and below it, the place twice",
      '{"u":{"t":"A"},"u":{"t":"B","x":1},"n":2}',
      [variant("/u", { t: "A" }, ["/u"]), variant("/u/t", "B", ["/n"])],
    ],
    [
      "a variant without retain",
      '{"type":"A","n":1}',
      [{ test: { path: "/type", value: "A" }, patches: [{ op: "remove", path: "/n" }] }],
    ],
    ["a test through a scalar", '{"a":"text","n":1}', [variant("/a/b", "x", ["/n"]), variant("/n", 1, ["/a"])]],
    ["no test holds: the result passes", '{"type":"C","n":1}', [variant("/type", "A", ["/n"])]],
    ["a test on the whole value", '{"n":1}', [variant("", { n: 1 }, ["/n"])]],
    ["a test named * (a key, not a wildcard)", '{"*":1,"n":2}', [variant("/*", 1, ["/n"])]],
    [
      "a variant keeping part of what an earlier test reads",
      '{"u":{"t":"A","x":1},"n":2}',
      [variant("/u", "A", ["/n"]), variant("/u/t", "A", ["/u/x"])],
    ],
  ])("variants: %s", (_label, doc, variants) => {
    const checked = checkFilterSet("s", { tools: { t: variants } });
    if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
    const filter = checked.value.tools["t"]!;
    for (const layout of LAYOUTS) {
      const answer = `{"jsonrpc":"2.0","id":7,"result":${resultOf(layout, doc, JSON.stringify(JSON.parse(doc), null, 2))}}`;
      expect({ layout, answer: newPath(answer, filter) }).toEqual({ layout, answer: parsedPath(answer, filter) });
    }
    // The tests are read off the text as JSON.parse gives them (a key twice: the last): the SDK layout takes one pass.
    const sdk = `{"jsonrpc":"2.0","id":7,"result":${resultOf("sdk", doc, doc)}}`;
    expect(filterAnswerText(sdk, 7, filter, "label")).not.toBeUndefined();
  });

  it("chooses a variant over a value nested 100,000 deep, as the parsed path does", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const doc = `{"deep":${deep},"type":"A","n":1}`;
    const checked = checkFilterSet("s", {
      tools: { t: [variant("/deep/0/0", [], ["/deep/0/0/0"]), variant("/type", "A", ["/n", "/type"])] },
    });
    if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
    const filter = checked.value.tools["t"]!;
    for (const layout of ["sdk", "structured only"] as const) {
      const answer = `{"jsonrpc":"2.0","id":7,"result":${resultOf(layout, doc, doc)}}`;
      expect(newPath(answer, filter)).toBe(parsedPath(answer, filter));
    }
    const answer = `{"jsonrpc":"2.0","id":7,"result":${resultOf("structured only", doc, doc)}}`;
    expect(filterAnswerText(answer, 7, filter, "label")).toEqual({
      state: "filtered",
      text: '{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"type":"A","n":1}}}',
    });
  });

  it("takes in one pass keys longer than the names it finds by length", () => {
    const long = "k".repeat(70);
    const answer = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"${"j".repeat(70)}":1,"${long}":2,"${"k".repeat(69)}x":3}}}`;
    const checked = checkFilterSet("s", { tools: { t: { retain: [`/${long}`, `/${"k".repeat(69)}x`] } } });
    if (!checked.ok) throw new Error("bad set");
    const out = filterAnswerText(answer, 7, checked.value.tools["t"]!, "label");
    expect(out).toEqual({
      state: "filtered",
      text: `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"${long}":2,"${"k".repeat(69)}x":3}}}`,
    });
  });

  it("takes in one pass a result whose skipped values are large", () => {
    const big = "x".repeat(4 * 1024 * 1024);
    const answer = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"keep":1,"skip":${JSON.stringify([big, { big }])}}}}`;
    const checked = checkFilterSet("s", { tools: { t: { retain: ["/keep"] } } });
    if (!checked.ok) throw new Error("bad set");
    const out = filterAnswerText(answer, 7, checked.value.tools["t"]!, "label");
    expect(out).toEqual({
      state: "filtered",
      text: '{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"keep":1}}}',
    });
  });
});
