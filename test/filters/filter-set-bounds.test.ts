/**
 * Filter sets at the bounds of what checking them costs, through the admin API (and a
 * call), in workerd with the real KV binding. Every read of a set builds each `retain`
 * list's tree to check it, so:
 * - pointers deeper than the stack goes (20,000 tokens) are refused with a reason an
 *   operator can act on (as a document nested too deep is), never a bare HTTP 500; a
 *   rule that reaches a call anyway (the stack there may be deeper than where it was
 *   checked) fails the call closed with a `FilterError`;
 * - lists each within their own bound but together costly to build (wildcards beside
 *   names, copied into each other) are refused for the set, while a document of plain
 *   pointers as large as the admin API takes is accepted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FilterError } from "../../src/features/filters/apply-filter";
import { filterAnswer } from "../../src/features/filters/filter-answer";
import { MAX_SET_RETAIN_WORK } from "../../src/features/filters/filter-set";
import { admin } from "../helpers/admin";
import type { Json } from "../helpers/gateway";

const DEEP_TOKENS = 20_000;

afterEach(async () => {
  await admin("DELETE", "/filter-sets/default");
});

describe("a retain pointer deeper than the stack", () => {
  it.each([
    ["a plain rule", (pointer: string) => ({ retain: [pointer] })],
    ["a variant", (pointer: string) => [{ test: { path: "/type", value: "a" }, retain: [pointer] }]],
    ["a pointer beside a wildcard", (pointer: string) => ({ retain: [pointer, "/*/x"] })],
  ])("in %s is refused with a reason", async (_label, rule) => {
    const response = await admin("PUT", "/filter-sets/default", {
      tools: { alpha___get_user: rule("/a".repeat(DEEP_TOKENS)) },
    });
    expect(response.status).toBe(400);
    const problems = ((await response.json()) as Json).problems as { path: string; message: string }[];
    expect(problems).toEqual([
      {
        path: expect.stringMatching(/^\/tools\/alpha___get_user(\/0)?\/retain$/),
        message: expect.stringMatching(/too deep/),
      },
    ]);
  });
});

describe("a rule whose pointer is deeper than the stack, at a call", () => {
  it("fails closed with a FilterError on the one-pass path's answers too", () => {
    const answer = '{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"a":{"a":1}}}}';
    // Not through checkFilterSet, which refuses it: as if it had passed where the stack was shallower.
    const rule = { retain: ["/a".repeat(DEEP_TOKENS)] };
    expect(() => filterAnswer(answer, 7, rule, "label")).toThrow(FilterError);
    expect(() => filterAnswer(answer, 7, rule, "label")).toThrow(/nested too deep/);
  });
});

/** Pointers whose names beside wildcards double the tree at each of `depth` levels (2^(depth+2) branches and members). */
function doubling(depth: number): string[] {
  const pointers: string[] = [];
  for (let level = 0, prefix = ""; level < depth; level++, prefix += "/*")
    pointers.push(`${prefix}/*/x${level}`, `${prefix}/n/y${level}`);
  return pointers;
}

describe("the cost of checking a set's retain lists together", () => {
  it("refuses rules each within their bound whose lists together pass the set's", async () => {
    // 13 levels: 65,527 each (under the 100,000 of one list); 12 of them pass the set's 300,000.
    const tools = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`alpha___t${i}`, { retain: doubling(13) }]));
    const response = await admin("PUT", "/filter-sets/default", { tools });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).problems).toEqual([
      {
        path: "/tools",
        message: expect.stringContaining(`more than ${MAX_SET_RETAIN_WORK} branches and copied members in all`),
      },
    ]);
  });

  it("accepts as many of them as fit, and plain pointers filling the document", async () => {
    const few = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`alpha___t${i}`, { retain: doubling(13) }]));
    expect((await admin("PUT", "/filter-sets/default", { tools: few })).status).toBe(200);
    // 480 KiB of distinct pointers three tokens deep (the admin API takes 512 KiB).
    const plain: Record<string, { retain: string[] }> = {};
    for (let i = 0, size = 0; size < 480 * 1024; i++) {
      const retain = Array.from({ length: 1_000 }, (_, j) => `/a${j}/b${i}/c`);
      plain[`alpha___p${i}`] = { retain };
      size += JSON.stringify(retain).length;
    }
    expect((await admin("PUT", "/filter-sets/default", { tools: plain })).status).toBe(200);
  });
});
