/**
 * Tool-name globs: a table of cases, and names a client chooses to make a backtracking
 * matcher stall (`*_*_*_*_*_*_*_*_x` against 64 underscores took 31 s as a regular
 * expression; 12 stars or a 10,000-character name, longer than anyone waits).
 */
import { describe, expect, it } from "vitest";
import { selectFilter } from "../../src/features/filters/apply-filter";
import type { FilterSet } from "../../src/features/filters/filter-set";
import { foldName, matchesGlob, matchesGlobLoosely } from "../../src/core/glob";
import { isVisible } from "../../src/features/personas/visibility-document";
import { permits } from "../../src/features/personas/persona";
import { qualifyName } from "../../src/core/names";

/** A string-like name that counts how often the matcher reads a character of it. */
function countingName(text: string): { name: string; reads: () => number } {
  let reads = 0;
  const name = {
    length: text.length,
    charCodeAt: (i: number) => {
      reads++;
      return text.charCodeAt(i);
    },
  };
  return { name: name as unknown as string, reads: () => reads };
}

const stars = (count: number, tail: string) => `${"*_".repeat(count)}${tail}`;

describe("glob matching", () => {
  it.each([
    ["*", "", true],
    ["*", "github___get_user", true],
    ["github___*", "github___get_user", true],
    ["github___*", "github___", true],
    ["github___*", "gitlab___get_user", false],
    ["github___get_*", "github___list", false],
    ["*___get_user", "github___get_user", true],
    ["*_user", "github___get_users", false],
    ["?", "a", true],
    ["?", "", false],
    ["a?c", "abc", true],
    ["a?c", "abbc", false],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "aXcYb", false],
    ["a*b*c", "abcbc", true],
    ["*a*", "bbb", false],
    ["**", "x", true],
    ["a.b", "a.b", true],
    ["a.b", "axb", false],
    ["(x)+[y]$", "(x)+[y]$", true],
    ["", "", true],
    ["", "a", false],
    [stars(8, "x"), `${"_".repeat(63)}x`, true],
    [stars(8, "x"), "_".repeat(64), false],
    [stars(8, "x"), `${"_".repeat(7)}x`, false],
  ])("%j against %j is %s", (glob, name, expected) => {
    expect(matchesGlob(glob, name)).toBe(expected);
  });

  it.each([
    [8, 64],
    [12, 64],
    [12, 10_000],
    [30, 10_000],
  ])("answers a glob of %i stars against a %i-character name after at most name × glob reads", (count, length) => {
    const glob = stars(count, "x");
    for (const [text, expected] of [
      ["_".repeat(length), false],
      [`${"_".repeat(length - 1)}x`, true],
    ] as const) {
      const { name, reads } = countingName(text);
      expect(matchesGlob(glob, name)).toBe(expected);
      expect(reads()).toBeGreaterThanOrEqual(length);
      expect(reads()).toBeLessThanOrEqual(length * glob.length);
    }
  });

  it.each([
    ["good___delete_*", "good___delete_all", true],
    ["good___delete_*", "good___DELETE_all", true],
    ["good___delete_*", "GOOD___Delete_All", true],
    ["good___delete_*", "good___\uff24\uff25\uff2c\uff25\uff34\uff25_all", true], // fullwidth letters
    ["good___pass*", "good___PA\u00df", true], // ß folds to ss
    ["good___s*", "good___\u017fecret", true], // long s
    ["good___k*", "good___\u212aill", true], // Kelvin sign
    ["good___delete_*", "good___remove_all", false],
    ["good___delete_*", "good___delet_all", false],
  ])("loosely, %j against %j is %s", (glob, name, expected) => {
    expect(matchesGlobLoosely(glob, name)).toBe(expected);
  });

  it.each([
    ["good___DELETE_all", false],
    ["good___delete_all", false],
    ["GOOD___get_all", false], // allow stays exact
    ["good___get_all", true],
  ])("visibility hides %j as a deny of any spelling would, allow exact: visible %s", (name, expected) => {
    expect(isVisible({ allow: ["good___*"], deny: ["good___delete_*"] }, name)).toBe(expected);
  });

  describe("a deny of a long tool's shortened name", () => {
    // The shortened name's hash is of the whole name as spelled: another spelling, which a
    // case-insensitive upstream resolves to the same tool, hashed differently and passed the deny.
    const real = `admin_${"x".repeat(50)}_purge_all_customer_records`;
    const denied = qualifyName("crm", real);
    const grant = { persona: "ops", allow: ["crm___*"], deny: [denied] };
    it.each([
      ["the real name", false, real],
      ["the whole name in capitals", false, real.toUpperCase()],
      ["a capital after the cut", false, real.replace("records", "Records")],
      ["fullwidth letters after the cut", false, real.replace("records", "ｒｅｃｏｒｄｓ")],
      ["another long tool", true, `report_${"y".repeat(50)}_list`],
    ])("holds on /mcp/<upstream> for %s (permitted: %s)", (_label, expected, sent) => {
      const key = qualifyName("crm", sent);
      expect(key.length).toBeGreaterThan(60);
      expect(permits(grant, key)).toBe(expected);
      expect(isVisible({ allow: ["crm___*"], deny: [denied] }, key)).toBe(expected);
    });
  });

  it("holds for a long tool spelled short enough with ligatures not to be shortened at all", () => {
    const real = "create_file_in_workflow_configuration_for_office_traffic_fix_v2";
    const denied = qualifyName("crm", real);
    expect(denied.length).toBe(64);
    const ligatures = real.replaceAll("fi", "\ufb01").replaceAll("fl", "\ufb02");
    const key = qualifyName("crm", ligatures);
    expect(key.length).toBeLessThanOrEqual(64);
    expect(key).toBe(`crm___${ligatures}`);
    expect(permits({ persona: "ops", allow: ["crm___*"], deny: [denied] }, key)).toBe(false);
  });

  it("folds names in one pass: an adversarial name stays a name of the same order of length", () => {
    const name = "\uff3f".repeat(10_000); // fullwidth low lines fold to 10,000 underscores
    expect(foldName(name)).toBe("_".repeat(10_000));
    expect(matchesGlobLoosely(stars(30, "x"), name)).toBe(false);
    expect(matchesGlobLoosely(stars(30, "x"), `${name}X`)).toBe(true);
  });

  it("selects rules with an adversarial tool name at once", () => {
    const set: FilterSet = {
      name: "s",
      mode: "enforce",
      tools: { [stars(12, "x")]: { retain: [""] }, "*": { retain: ["/a"] } },
    };
    expect(selectFilter(set, "_".repeat(10_000))?.key).toBe("*");
    expect(selectFilter(set, `${"_".repeat(9_999)}x`)?.key).toBe(stars(12, "x"));
  });
});
