/**
 * Schema inference as a table: the reference semantics (keys sorted, arrays by their
 * element, scalar type names) and what this gateway adds (all elements merged, optional
 * keys, unions), with its bounds.
 */
import { describe, expect, it } from "vitest";
import {
  ARRAY_MERGE_LIMIT,
  inferSchema,
  MAX_DEPTH,
  MAX_KEY_CHARS,
  MAX_KEYS,
  MAX_SCHEMA_KEYS,
  SchemaBuilder,
} from "../../src/core/schema-inference";

/** The keys of a schema in all, at any depth. */
function keysIn(schema: unknown): number {
  if (Array.isArray(schema)) return schema.reduce((sum: number, part) => sum + keysIn(part), 0);
  if (typeof schema !== "object" || schema === null) return 0;
  return Object.entries(schema).reduce((sum, [, part]) => sum + 1 + keysIn(part), 0);
}

/** The builder's events for a parsed value (what a JSON stream of it would give). */
function feed(builder: SchemaBuilder, value: unknown): void {
  if (Array.isArray(value)) {
    builder.startArray();
    for (const item of value) feed(builder, item);
    builder.endArray();
  } else if (typeof value === "object" && value !== null) {
    builder.startObject();
    for (const [key, item] of Object.entries(value)) {
      builder.key(key);
      feed(builder, item);
    }
    builder.endObject();
  } else builder.scalar(value === null ? "null" : (typeof value as "string" | "number" | "boolean"));
}

describe("inferSchema", () => {
  it.each([
    ["scalars", { s: "x", n: 1.5, b: true, z: null }, { b: "boolean", n: "number", s: "string", z: "null" }],
    [
      "the reference example",
      {
        total_count: 1000,
        items: [
          { login: "a", id: 1, verified: true },
          { login: "b", id: 2, verified: false },
        ],
      },
      { items: [{ id: "number", login: "string", verified: "boolean" }], total_count: "number" },
    ],
    ["keys sorted", { b: 1, a: 1, C: 1 }, { C: "number", a: "number", b: "number" }],
    ["an empty array", { list: [] }, { list: [] }],
    ["nested arrays", [[1, 2], [3]], [["number"]]],
    ["an array of empty arrays and numbers", [[], 1], [{ "|": [[], "number"] }]],
    ["nulls among values", [1, null, 2], ["null|number"]],
    ["mixed scalar types", ["a", 1, true], ["boolean|number|string"]],
    ["keys missing from some elements", [{ id: 1, email: "x" }, { id: 2 }], [{ "email?": "string", id: "number" }]],
    ["objects mixed with scalars", [{ a: 1 }, "s"], [{ "|": [{ a: "number" }, "string"] }]],
    ["merged nested objects", [{ u: { a: 1 } }, { u: { b: "x" } }], [{ u: { "a?": "number", "b?": "string" } }]],
    ["unicode keys", { ünï: 1, 日本: "x", "😀": null }, { ünï: "number", 日本: "string", "😀": "null" }],
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
    expect(schema["…"]).toMatch(/more distinct keys than shown \(at most 256 an object/);
  });

  it("bounds the keys of the whole schema, however wide each object is within its own bound", () => {
    // 256 objects of 256 keys: 65,792 keys, a schema of 1 MB for 0.67 MB of payload (30 MB from 16 MB streamed).
    const wide = Object.fromEntries(
      Array.from({ length: MAX_KEYS }, (_, i) => [
        `a${i}`,
        Object.fromEntries(Array.from({ length: MAX_KEYS }, (_, j) => [`b${j}`, j])),
      ]),
    );
    const built = new SchemaBuilder();
    feed(built, wide);
    for (const schema of [inferSchema(wide), built.schema()]) {
      expect(keysIn(schema)).toBeLessThanOrEqual(MAX_SCHEMA_KEYS + MAX_KEYS + 1);
      expect(JSON.stringify(schema).length).toBeLessThan(100_000);
      expect(JSON.stringify(schema)).toContain(`${MAX_SCHEMA_KEYS} in the schema`);
    }
  });

  it("cuts a long key", () => {
    const schema = inferSchema({ ["k".repeat(1_000_000)]: 1 }) as Record<string, unknown>;
    expect(Object.keys(schema)).toEqual([`${"k".repeat(MAX_KEY_CHARS)}…`]);
  });

  it(`merges the first ${ARRAY_MERGE_LIMIT} elements of an array`, () => {
    const items: unknown[] = Array.from({ length: ARRAY_MERGE_LIMIT }, () => ({ a: 1 }));
    items.push({ a: 1, late: true });
    expect(inferSchema(items)).toEqual([{ a: "number" }]);
  });
});
