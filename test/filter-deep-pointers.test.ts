/**
 * Filter sets whose `retain` pointers run deeper than the stack goes (20,000 tokens),
 * through the admin API and a call, in workerd with the real KV binding: the set is
 * refused with a reason an operator can act on (as a document nested too deep is), never
 * a bare HTTP 500 from validation; and a rule that reaches a call anyway (the stack there
 * may be deeper than where it was checked) fails the call closed with a `FilterError`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FilterError } from "../src/policy/apply-filter";
import { filterAnswer } from "../src/policy/filter-answer";
import { admin } from "./helpers/admin";
import type { Json } from "./helpers/gateway";

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
    const response = await admin("PUT", "/filter-sets/default", { tools: { alpha___get_user: rule("/a".repeat(DEEP_TOKENS)) } });
    expect(response.status).toBe(400);
    const problems = ((await response.json()) as Json).problems as { path: string; message: string }[];
    expect(problems).toEqual([{ path: expect.stringMatching(/^\/tools\/alpha___get_user(\/0)?\/retain$/), message: expect.stringMatching(/too deep/) }]);
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
