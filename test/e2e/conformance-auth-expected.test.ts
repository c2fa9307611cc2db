/**
 * The `2026/auth` conformance leg (scripts/conformance-auth/) says what it excuses, in two
 * places that must agree: scripts/conformance-auth/expected-failures.mjs (what the run
 * excuses) and the table of docs/upstream-sign-in.md (what a reader is told). And its
 * verdict: a listed check is excused, any other problem fails the run, and so does a
 * listed check that passes (the list only shrinks).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EXPECTED_FAILURES } from "../../scripts/conformance-auth/expected-failures.mjs";
import { CLIENT_CHECK, judge } from "../../scripts/conformance-auth/leg.mjs";

const DOC = path.resolve(import.meta.dirname, "..", "..", "docs", "upstream-sign-in.md");

/** The rows of the doc's conformance table: scenario → result. */
function documentedResults(): Map<string, string> {
  const rows = new Map<string, string>();
  const table = /^\| `(auth\/[^`]+)` \| (\w+) \|/gm;
  for (const match of readFileSync(DOC, "utf8").matchAll(table)) rows.set(match[1]!, match[2]!);
  return rows;
}

type Check = { name: string; message: string };
type Row = { scenario: string; passed: boolean; failedChecks: Check[]; warnedChecks: Check[]; clientProblem?: string };

/** A scenario's result as scripts/lib/conformance-runner.mjs reports it. */
function row(scenario: string, failed: string[], warned: string[] = [], clientProblem?: string): Row {
  const checks = (names: string[]) => names.map((name) => ({ name, message: `${name} went wrong` }));
  const passed = failed.length + warned.length === 0 && !clientProblem;
  const client = clientProblem ? { clientProblem } : {};
  return { scenario, passed, failedChecks: checks(failed), warnedChecks: checks(warned), ...client };
}

describe("the conformance leg of the gateway as OAuth client", () => {
  it("lists in docs/upstream-sign-in.md exactly the scenarios it excuses", () => {
    const documented = documentedResults();
    expect(documented.size).toBeGreaterThan(20);
    const notPassing = [...documented].filter(([, result]) => result !== "passes").map(([scenario]) => scenario);
    expect(notPassing.sort()).toEqual(Object.keys(EXPECTED_FAILURES).sort());
    for (const entry of Object.values(EXPECTED_FAILURES)) {
      expect(entry.checks.length).toBeGreaterThan(0);
      expect(entry.reason.length).toBeGreaterThan(20);
    }
  });

  // A listed scenario whose client fails too, and the checks listed beside the client.
  const [listedScenario, listed] = Object.entries(EXPECTED_FAILURES).find(([, e]) => e.checks.includes(CLIENT_CHECK))!;
  const checks = listed.checks.filter((c) => c !== CLIENT_CHECK);
  const clientFailed = "the client exited with an error";
  const elsewhere = "auth/not-listed";
  const unlisted = "wire-schema-valid";

  it.each([
    ["every listed problem, nothing else", row(listedScenario, checks, [], clientFailed), [], []],
    ["a check not listed", row(listedScenario, [...checks, unlisted], [], clientFailed), [unlisted], []],
    ["a listed check passing now", row(listedScenario, checks.slice(1), [], clientFailed), [], [checks[0]]],
    ["the listed client completing now", row(listedScenario, checks), [], [CLIENT_CHECK]],
    ["a warning elsewhere", row(elsewhere, [], ["scope-from-www-authenticate"]), ["scope-from-www-authenticate"], []],
    ["a client failing elsewhere", row(elsewhere, [], [], "the client timed out"), [CLIENT_CHECK], []],
    ["a scenario passing elsewhere", row(elsewhere, []), [], []],
  ])("judges %s", (_, result, unexpected, stale) => {
    const judged = judge(result);
    expect(judged.unexpected.map((c: Check) => c.name)).toEqual(unexpected);
    expect(judged.stale).toEqual(stale);
  });
});
