/**
 * scripts/check-commits.mjs, the commit-message step of `npm run check`, in small git
 * repositories made here: after the baseline (found by its subject, as after a rebase) every
 * commit but a merge needs a subject of at most 72 characters not ending in a period, a blank
 * line and a body; without the baseline in its history the script says so and checks nothing.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "..", "..", "scripts", "check-commits.mjs");
const BASELINE_SUBJECT = /subject: "([^"]+)"/.exec(readFileSync(SCRIPT, "utf8"))![1]!;
const repositories = mkdtempSync(path.join(tmpdir(), "check-commits-"));
afterAll(() => rmSync(repositories, { recursive: true, force: true }));

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/** A new repository whose commits have these messages, in order; its directory. */
function repository(name: string, messages: string[]): string {
  const dir = path.join(repositories, name);
  const git = (...args: string[]) => {
    const run = spawnSync("git", args, { cwd: dir, env: GIT_ENV, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
  };
  spawnSync("git", ["init", "-q", "-b", "main", dir], { env: GIT_ENV });
  for (const message of messages) git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message);
  return dir;
}

function check(dir: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, env: GIT_ENV, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("the commit-message check", () => {
  it("passes commits after the baseline that have a short subject and a body", () => {
    const dir = repository("good", [
      "An old commit whose subject predates the rule and runs well past seventy-two characters.",
      `${BASELINE_SUBJECT}\n\nThe baseline.`,
      "Refuse duplicate tool names under enforce\n\nWhy, what was measured, how the test shows it.",
    ]);
    const { status, output } = check(dir);
    expect(output).toContain("1 commit after");
    expect(output).toContain("0 with problems");
    expect(status).toBe(0);
  });

  it("names each commit with a long subject, a final period or no body, and skips merges", () => {
    const dir = repository("bad", [
      `${BASELINE_SUBJECT}\n\nThe baseline.`,
      `${"x".repeat(73)}\n\nA body.`,
      `${"é".repeat(72)}\n\nSeventy-two characters, more bytes.`,
      "End the subject in a period.\n\nA body.",
      "Leave out the body",
      "Run the body on\nfrom the subject's line",
    ]);
    // A side branch from the baseline, merged back: git's "Merge branch 'side'" has no body and is not checked.
    for (const args of [
      ["switch", "-q", "-c", "side", "HEAD~5"],
      ["commit", "-q", "--allow-empty", "-m", "Add a side commit\n\nA body."],
      ["switch", "-q", "main"],
      ["merge", "-q", "--no-ff", "--no-edit", "side"],
    ]) {
      const run = spawnSync("git", args, { cwd: dir, env: GIT_ENV, encoding: "utf8" });
      expect(run.status, run.stderr).toBe(0);
    }
    const { status, output } = check(dir);
    expect(output).toContain("the subject has 73 characters (at most 72)");
    expect(output).not.toContain("é".repeat(72));
    expect(output).toContain("End the subject in a period.\n  the subject ends in a period");
    expect(output).toContain("Leave out the body\n  no body");
    expect(output).toContain("Run the body on\n  no blank line after the subject");
    expect(output).toContain("6 commits after");
    expect(output).toContain("4 with problems");
    expect(status).toBe(1);
  });

  it("says so and checks nothing where the history lacks the baseline", () => {
    const dir = repository("no-baseline", ["Leave out the body."]);
    const { status, output } = check(dir);
    expect(output).toContain("skipped: baseline");
    expect(output).toContain("the history does not hold it");
    expect(status).toBe(0);
  });
});
