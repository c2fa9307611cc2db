/**
 * The `2026/auth` leg of `npm run conformance` (scripts/conformance.mjs): the conformance
 * suite's client authorization scenarios that the 2026-07-28 requirement set names
 * (`auth/*`), run with the gateway as the OAuth client of each scenario's MCP server. The
 * gateway is built once (`wrangler deploy --dry-run --outdir`); each scenario is one
 * `conformance client --command "node client.mjs"` process (./client.mjs starts a gateway
 * from the build against the scenario's server and signs its user in by script).
 *
 * Every scenario must pass, except those ./expected-failures.mjs lists (with the reason,
 * also in docs/upstream-sign-in.md): a listed check failing is reported, not failed; any
 * other failing check fails the run, and so does a listed check that passes now (the entry
 * is stale: remove it), so the list only shrinks. ./report.mjs prints the outcome.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { requirementScenarios, runLeg } from "../lib/conformance-runner.mjs";
import { EXPECTED_FAILURES } from "./expected-failures.mjs";

const CLIENT = path.join(path.dirname(fileURLToPath(import.meta.url)), "client.mjs");
/** The client scenarios of the gateway's OAuth client: those named `auth/…`. */
const AUTH_PREFIX = "auth/";
export const AUTH_LEG = "2026/auth";
/** Names, in EXPECTED_FAILURES, the client's own failure (it timed out, or exited with an error). */
export const CLIENT_CHECK = "(client)";
/** The time the CLI gives the client (`--timeout`), and the CLI itself on top (a scenario starting and stopping). */
const CLIENT_TIMEOUT_MS = 90_000;
const CLI_OVERHEAD_MS = 30_000;
/** How long building the Worker may take. */
const BUILD_TIMEOUT_MS = 3 * 60_000;

/** Builds the Worker of `root` as `wrangler deploy` does, into a new directory. */
async function buildGateway(root) {
  const outdir = mkdtempSync(path.join(os.tmpdir(), "conformance-auth-"));
  // Run by this Node (the project's), whatever `node` the PATH names: wrangler needs a recent one.
  const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  const args = [wrangler, "deploy", "--dry-run", "--outdir", outdir];
  await promisify(execFile)(process.execPath, args, { cwd: root, timeout: BUILD_TIMEOUT_MS });
  return outdir;
}

/**
 * The `auth/*` client scenarios `revision` requires: the scored ones (the unscored are
 * extensions, grants the gateway does not implement).
 */
export async function authScenarios(cli, revision, timeoutMs, cwd) {
  const all = await requirementScenarios(cli, revision, timeoutMs, cwd, "client");
  return all.filter((s) => s.scored && s.name.startsWith(AUTH_PREFIX)).map((s) => s.name);
}

/**
 * What kept a scenario from passing, as the CLI judges a client: its failed checks, its
 * warnings, and CLIENT_CHECK when the client timed out or exited with an error.
 */
function problemsOf(result) {
  return [
    ...result.failedChecks,
    ...result.warnedChecks.map((c) => ({ ...c, message: `(warning) ${c.message}` })),
    ...(result.clientProblem ? [{ name: CLIENT_CHECK, message: result.clientProblem }] : []),
  ];
}

/**
 * A result judged against EXPECTED_FAILURES: `unexpected` problems (the run fails),
 * `expected` ones (reported), `stale` listed checks that passed (the run fails).
 */
export function judge(result) {
  const listed = EXPECTED_FAILURES[result.scenario];
  const problems = problemsOf(result);
  const excused = (name) => listed?.checks.includes(name) ?? false;
  const names = problems.map((c) => c.name);
  return {
    unexpected: problems.filter((c) => !excused(c.name)),
    expected: problems.filter((c) => excused(c.name)),
    stale: (listed?.checks ?? []).filter((name) => !names.includes(name)),
    reason: listed?.reason,
  };
}

/**
 * Runs the leg: `scenarios`, `concurrency` at a time, `extraArgs` for the CLI (the
 * revision's wire). Resolves with each scenario's result (the rows of
 * scripts/lib/conformance-runner.mjs) and its `judgement`.
 */
export async function runAuthLeg({ cli, root, scenarios, out, concurrency, extraArgs }) {
  if (scenarios.length === 0) return [];
  const started = Date.now();
  const bundle = await buildGateway(root);
  console.log(`  [${AUTH_LEG}] gateway built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.env.CONFORMANCE_AUTH_BUNDLE = bundle;
  try {
    // The CLI runs the command in a shell, and stops it by signalling that shell: `exec` makes it the client's own.
    const command = `exec "${process.execPath}" "${CLIENT}"`;
    const args = [...extraArgs, "--timeout", String(CLIENT_TIMEOUT_MS)];
    const leg = { label: AUTH_LEG, cli, command, scenarios, out, concurrency, cwd: root };
    const results = await runLeg({ ...leg, timeoutMs: CLIENT_TIMEOUT_MS + CLI_OVERHEAD_MS, extraArgs: args });
    return results.map((result) => ({ ...result, judgement: judge(result) }));
  } finally {
    delete process.env.CONFORMANCE_AUTH_BUNDLE;
    rmSync(bundle, { recursive: true, force: true });
  }
}
