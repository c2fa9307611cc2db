/**
 * A rule's prepared tree (features/filters/retain-tree.ts) for the one-pass filter: its branches'
 * length tables are shared by every branch whose names have the same lengths in the same
 * places, and only a branch of more than MAX_NAMES_COMPARED names gets a map of them. A
 * rule of many pointers is mostly branches of one name: with a 65-entry table and a map
 * each, a valid 300 KB rule of 20,000 pointers four tokens deep took 52 MB once prepared
 * (14 MB now; measured in Node with the collector run before each reading).
 */
import { describe, expect, it } from "vitest";
import { buildTree, MAX_NAMES_COMPARED, type Node, prepareKeep, SEVERAL } from "../../src/features/filters/retain-tree";

/** Every branch of `node`, depth first. */
function branches(node: Node): Exclude<Node, true>[] {
  if (node === true) return [];
  return [node, ...node.subs.flatMap(branches), ...(node.wildcard === undefined ? [] : branches(node.wildcard))];
}

describe("a prepared retain tree", () => {
  it("shares one length table among the branches whose names have the same lengths, and maps only wide branches", () => {
    const pointers = Array.from({ length: 20_000 }, (_, i) => `/a${i}/b/c/d`);
    const all = branches(prepareKeep(buildTree(pointers)));
    expect(all).toHaveLength(1 + 3 * 20_000);
    expect(new Set(all.map((branch) => branch.byLength)).size).toBeLessThanOrEqual(2);
    expect(all.filter((branch) => branch.byName !== undefined)).toHaveLength(1);
    expect(all.every((branch) => branch.byName === undefined || branch.names.length > MAX_NAMES_COMPARED)).toBe(true);
  });

  it("keeps tables apart where the names' lengths differ", () => {
    const root = prepareKeep(buildTree(["/x/ab", "/y/abc", "/z/ab", "/z/cd", "/w/abc", "/v/xy"]));
    if (root === true) throw new Error("a tree of pointers has branches");
    const under = (name: string) => {
      const sub = root.subs[root.names.indexOf(name)];
      if (sub === undefined || sub === true) throw new Error(`no branch under ${name}`);
      return sub;
    };
    expect(under("v").byLength).toBe(under("x").byLength); // one name of length 2, at index 0
    expect(under("w").byLength).toBe(under("y").byLength); // one name of length 3
    expect(under("y").byLength).not.toBe(under("x").byLength);
    expect(under("z").byLength).not.toBe(under("x").byLength); // two names of length 2
    expect(under("z").byLength[2]).toBe(SEVERAL);
    expect(under("x").byLength[2]).toBe(0);
  });
});
