/**
 * The one-pass filter (features/filters/filter-answer.ts) under answers an upstream shapes against
 * it: its work must stay linear in the answer's length (an answer of up to 16 MiB is
 * filtered in memory), and what it answers must stay the parsed path's. Work is counted,
 * not timed: the characters its searches cover and the guesses that fail.
 */
import { describe, expect, it } from "vitest";
import { checkFilterSet, type ToolFilter } from "../../src/features/filters/filter-set";
import { newPath, parsedPath } from "../helpers/filter-paths";

function filterOf(rule: unknown): ToolFilter {
  const checked = checkFilterSet("s", { tools: { t: rule } });
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return checked.value.tools["t"]!;
}

/** Work done by `run`: characters covered by searches for `]`, `JSON.parse` calls that failed, and text compared in place. */
function workOf(run: () => void): { scanned: number; failedParses: number; compared: number } {
  const indexOf = String.prototype.indexOf;
  const startsWith = String.prototype.startsWith;
  const parse = JSON.parse;
  const work = { scanned: 0, failedParses: 0, compared: 0 };
  String.prototype.startsWith = function (this: string, search: string, at?: number): boolean {
    work.compared++;
    return startsWith.call(this, search, at);
  };
  String.prototype.indexOf = function (this: string, search: string, from?: number): number {
    const found = indexOf.call(this, search, from);
    if (search === "]") work.scanned += (found < 0 ? this.length : found) - Math.max(0, from ?? 0);
    return found;
  };
  JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown): unknown => {
    try {
      return parse(text, reviver);
    } catch (error) {
      work.failedParses++;
      throw error;
    }
  };
  try {
    run();
  } finally {
    String.prototype.indexOf = indexOf;
    String.prototype.startsWith = startsWith;
    JSON.parse = parse;
  }
  return work;
}

describe("the one-pass filter's work stays linear in the answer", () => {
  const BLOCKS = 2_000;
  const text = (t: string) => `{"type":"text","text":${JSON.stringify(t)}}`;
  const blocks = Array.from({ length: BLOCKS }, (_, i) => text(`block ${i} ${"x".repeat(40)}`)).join(",");
  it.each([
    // Each block's guessed end is the SDK ending after the last block: every block searched up to it.
    [
      "many text blocks before structuredContent",
      `{"jsonrpc":"2.0","id":7,"result":{"content":[${blocks}],"structuredContent":{"a":1,"b":2}}}`,
    ],
    // The answer's own ending ("}]}}) after the last block: a guess tried for every block.
    [
      "many text blocks after structuredContent",
      `{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"a":1,"b":2},"content":[${blocks}]}}`,
    ],
    // No ending to guess at: every block searched to the end of the answer.
    [
      "many text blocks and no ending to guess",
      `{"jsonrpc":"2.0","id":7,"result":{"content":[${blocks}],"isError":false,"structuredContent":{"a":1,"b":2}}}`,
    ],
  ])("%s", (_label, answer) => {
    const filter = filterOf({ retain: ["/a"] });
    let out = "";
    const work = workOf(() => (out = newPath(answer, filter)));
    expect(out).toBe(parsedPath(answer, filter));
    // Linear: each character searched at most twice, and at most one guess of where a block ends fails.
    expect(work.scanned).toBeLessThanOrEqual(2 * answer.length);
    expect(work.failedParses).toBeLessThanOrEqual(1);
  });
});

describe("the one-pass walk finds a key among a rule's names in one step", () => {
  // Names of one length (common: "id"/"to", "name"/"type"/"size"), here 2,000 of them under a wildcard.
  const NAMES = Array.from({ length: 2_000 }, (_, i) => `n${String(i).padStart(5, "0")}`);
  const ELEMENTS = 500;
  it.each([
    ["keys of the names' length", '{"zzzzz1":1,"zzzzz2":2,"n00007":3,"zzzzz4":4}', 4],
    ["keys longer than the names found by length", `{"${"k".repeat(70)}":1,"${"j".repeat(70)}":2,"n00007":3}`, 3],
  ])("%s", (_label, element, keys) => {
    const long = ["k".repeat(70), "q".repeat(70)];
    const filter = filterOf({ retain: [...NAMES, ...long].map((name) => `/items/*/${name}`) });
    const answer = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"items":[${Array.from({ length: ELEMENTS }, () => element).join(",")}]}}}`;
    let out = "";
    const work = workOf(() => (out = newPath(answer, filter)));
    expect(out).toBe(parsedPath(answer, filter));
    // At most one comparison in place per key read (the parsed path looks each key up once).
    expect(work.compared).toBeLessThanOrEqual(ELEMENTS * keys + 10);
  });
});

describe("variants that test one place", () => {
  it("read the value there once, not once per variant", () => {
    // 32 variants (the most a rule has) testing /kind, which stands after a broad member.
    const filter = filterOf(
      Array.from({ length: 32 }, (_, i) => ({ test: { path: "/kind", value: `k${i}` }, retain: ["/n"] })),
    );
    const items = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })));
    const answer = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"items":${items},"n":1,"kind":"k31"}}}`;
    let out = "";
    const parses: string[] = [];
    const parse = JSON.parse;
    JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown): unknown => {
      parses.push(text);
      return parse(text, reviver);
    };
    try {
      out = newPath(answer, filter);
    } finally {
      JSON.parse = parse;
    }
    expect(out).toBe('{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"n":1}}}');
    expect(out).toBe(parsedPath(answer, filter));
    // Each reading of the test's place ends in one parse of the value found there.
    expect(parses.filter((text) => text === '"k31"').length).toBe(1);
  });
});
