/**
 * Schema inference as a table: the reference semantics (keys sorted, arrays by their
 * element, scalar type names) and what this gateway adds (all elements merged, optional
 * keys, unions), with its bounds.
 */
import { describe, expect, it } from "vitest";
import { ARRAY_MERGE_LIMIT, inferSchema, MAX_DEPTH, MAX_KEYS } from "../src/core/schema-inference";

describe("inferSchema", () => {
  it.each([
    ["scalars", { s: "x", n: 1.5, b: true, z: null }, { b: "boolean", n: "number", s: "string", z: "null" }],
    ["the reference example", { total_count: 1000, items: [{ login: "a", id: 1, verified: true }, { login: "b", id: 2, verified: false }] }, { items: [{ id: "number", login: "string", verified: "boolean" }], total_count: "number" }],
    ["keys sorted", { b: 1, a: 1, C: 1 }, { C: "number", a: "number", b: "number" }],
    ["an empty array", { list: [] }, { list: [] }],
    ["nested arrays", [[1, 2], [3]], [["number"]]],
    ["an array of empty arrays and numbers", [[], 1], [{ "|": [[], "number"] }]],
    ["nulls among values", [1, null, 2], ["null|number"]],
    ["mixed scalar types", ["a", 1, true], ["boolean|number|string"]],
    ["keys missing from some elements", [{ id: 1, email: "x" }, { id: 2 }], [{ "email?": "string", id: "number" }]],
    ["objects mixed with scalars", [{ a: 1 }, "s"], [{ "|": [{ a: "number" }, "string"] }]],
    ["merged nested objects", [{ u: { a: 1 } }, { u: { b: "x" } }], [{ u: { "a?": "number", "b?": "string" } }]],
    ["unicode keys", { "ünï": 1, "日本": "x", "😀": null }, { "ünï": "number", "日本": "string", "😀": "null" }],
    ["a top-level scalar", "text", "string"],
  ])("%s", (_label, value, expected) => {
    expect(inferSchema(value)).toEqual(expected);
  });

  it('keeps a "__proto__" member of the payload as a key of the schema', () => {
    const schema = inferSchema(JSON.parse('{"__proto__":{"a":1},"b":"x"}')) as Record<string, unknown>;
    expect(Object.keys(schema)).toEqual(["__proto__", "b"]);
    expect(JSON.stringify(schema)).toBe('{"__proto__":{"a":"number"},"b":"string"}');
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);
  });

  it("bounds depth", () => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_DEPTH + 10; i++) deep = { d: deep };
    let schema = inferSchema(deep);
    let depth = 0;
    while (typeof schema === "object" && !Array.isArray(schema)) {
      schema = (schema as Record<string, unknown>)["d"] as typeof schema;
      depth++;
    }
    expect(depth).toBe(MAX_DEPTH);
    expect(schema).toBe("…");
  });

  it("bounds distinct keys", () => {
    const wide = Object.fromEntries(Array.from({ length: MAX_KEYS + 5 }, (_, i) => [`k${i}`, i]));
    const schema = inferSchema(wide) as Record<string, unknown>;
    expect(Object.keys(schema)).toHaveLength(MAX_KEYS + 1);
    expect(schema["…"]).toMatch(/more than/);
  });

  it(`merges the first ${ARRAY_MERGE_LIMIT} elements of an array`, () => {
    const items: unknown[] = Array.from({ length: ARRAY_MERGE_LIMIT }, () => ({ a: 1 }));
    items.push({ a: 1, late: true });
    expect(inferSchema(items)).toEqual([{ a: "number" }]);
  });
});
