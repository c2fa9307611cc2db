#!/usr/bin/env node
/**
 * Commit messages a reader can scan (issue 33; docs/development.md, "Commit messages"):
 * every commit after BASELINE has a subject of at most MAX_SUBJECT_CHARACTERS characters that
 * does not end in a period, then a blank line and a body saying why. Merge commits are not
 * checked (git writes them). Commits up to BASELINE predate the rule and are left as they are.
 *
 *   node scripts/check-commits.mjs        (in the repository; `npm run check` runs it)
 *
 * BASELINE is found by its id, or, where a rebase gave it another id, by its subject. Where the
 * history does not hold it (a shallow clone, a release archive without .git), the script says
 * so and checks nothing: CI clones the full history.
 */
import { spawnSync } from "node:child_process";

/** The first commit of the branch that introduced this check; commits after it are checked. */
const BASELINE = {
  commit: "b9f27e410c264aac7688261a10de1c26ad61401e",
  subject: "Add Biome 2.6.8 with the formatter set to the code's own style",
};
/** The longest subject, in characters (what the anchors' subjects stay under, and what git's tools show). */
const MAX_SUBJECT_CHARACTERS = 72;
/** Separate fields and commits in `git log` output (`%x00`, `%x1e`); neither can appear in a message. */
const FIELD_END = "\u0000";
const RECORD_END = "\u001e";

/** Runs git in the working directory; the output, or undefined when git fails or is missing. */
function git(...args) {
  const run = spawnSync("git", args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  return run.status === 0 ? run.stdout : undefined;
}

/** The baseline's id in this history, or the reason it cannot be found. */
function findBaseline() {
  if (git("rev-parse", "--git-dir") === undefined) return { missing: "this is not a git repository" };
  const byId = git("rev-parse", "--verify", "--quiet", `${BASELINE.commit}^{commit}`);
  if (byId !== undefined && git("merge-base", "--is-ancestor", BASELINE.commit, "HEAD") !== undefined) {
    return { commit: BASELINE.commit };
  }
  const subjects = (git("log", "--no-merges", "--format=%H%x00%s", "HEAD") ?? "").split("\n");
  const matches = subjects.filter((line) => line.slice(line.indexOf(FIELD_END) + 1) === BASELINE.subject);
  if (matches.length === 1) return { commit: matches[0].slice(0, matches[0].indexOf(FIELD_END)) };
  if (matches.length > 1) return { missing: `${matches.length} commits have the baseline's subject` };
  const shallow = git("rev-parse", "--is-shallow-repository")?.trim() === "true";
  return { missing: shallow ? "this clone is shallow (fetch the full history)" : "the history does not hold it" };
}

/**
 * What is wrong with one commit message, as sentences; none when it follows the rules.
 * @param {string} message the raw message (`%B`)
 * @returns {string[]}
 */
function messageProblems(message) {
  const lines = message.replace(/\n+$/, "").split("\n");
  const subject = lines[0] ?? "";
  const problems = [];
  const length = [...subject].length;
  if (length > MAX_SUBJECT_CHARACTERS) {
    problems.push(`the subject has ${length} characters (at most ${MAX_SUBJECT_CHARACTERS})`);
  }
  if (subject.endsWith(".")) problems.push("the subject ends in a period");
  if (lines.length > 1 && lines[1].trim() !== "") problems.push("no blank line after the subject");
  else if (lines.slice(2).every((line) => line.trim() === "")) problems.push("no body (a blank line, then why)");
  return problems;
}

function main() {
  const baseline = findBaseline();
  const name = `${BASELINE.commit.slice(0, 12)} ("${BASELINE.subject}")`;
  if (baseline.missing !== undefined) {
    console.log(`check-commits: skipped: baseline ${name} not found: ${baseline.missing}`);
    return;
  }
  const log = git("log", "--no-merges", "--format=%H%x00%B%x1e", `${baseline.commit}..HEAD`);
  if (log === undefined) {
    console.error("check-commits: git log failed");
    process.exit(2);
  }
  const commits = log
    .split(RECORD_END)
    .map((record) => record.replace(/^\n/, ""))
    .filter((record) => record !== "");
  let failing = 0;
  for (const record of commits) {
    const [commit, message] = record.split(FIELD_END);
    const problems = messageProblems(message ?? "");
    if (problems.length === 0) continue;
    failing++;
    console.log(`${commit.slice(0, 12)} ${message.split("\n")[0]}`);
    for (const problem of problems) console.log(`  ${problem}`);
  }
  console.log(
    `check-commits: ${commits.length} commit${commits.length === 1 ? "" : "s"} after ${baseline.commit.slice(0, 12)}, ` +
      `${failing} with problems`,
  );
  if (failing > 0) process.exit(1);
}

main();
