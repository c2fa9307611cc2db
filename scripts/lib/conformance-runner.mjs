/**
 * Running the MCP conformance CLI for scripts/conformance.mjs: one `conformance server
 * --scenario <name>` process per scenario, with a time limit and a few at a time, so a
 * scenario that hangs fails alone and the run stays bounded; reading the scenario lists
 * the CLI announces; and turning each scenario's checks.json into a result row.
 *
 * Two CLIs are used: the 0.1.x line (`@modelcontextprotocol/conformance`, the 2025
 * revisions) and the alpha line installed as `conformance-alpha` (its
 * `--requirements 2026-07-28` set). Their bins share the name `conformance`, so both are
 * run as `node <package>/<bin>` resolved from their package.json, never through npx.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";

/** Running conformance processes, killed by {@link killChildren}. */
const children = new Set();
let stopping = false;

/** Kills every conformance process still running and stops scheduling new ones. */
export function killChildren() {
  stopping = true;
  for (const child of children) child.kill("SIGKILL");
}

/** Runs a command to completion (or until `timeoutMs`, then SIGKILL); never rejects. */
export function run(command, args, timeoutMs, cwd) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let output = "";
    const append = (chunk) => {
      output += chunk;
    };
    child.stdout.setEncoding("utf8").on("data", append);
    child.stderr.setEncoding("utf8").on("data", append);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    const done = (code, signal, error) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, error, output, timedOut, durationMs: Date.now() - started });
    };
    child.on("error", (error) => done(null, null, error));
    child.on("close", (code, signal) => done(code, signal, undefined));
  });
}

/** The CLI of an installed conformance package (`@modelcontextprotocol/conformance` or its alias `conformance-alpha`). */
export function conformanceCli(packageName, fromUrl) {
  const require = createRequire(fromUrl);
  const pkgPath = require.resolve(`${packageName}/package.json`);
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin.conformance;
  return { path: path.join(path.dirname(pkgPath), bin), version: pkg.version, packageName };
}

/**
 * The 0.1.x suite's scenario names, in its order: that CLI has no "list the active
 * suite" command, so run the suite against a port that resets every connection (each
 * scenario fails at once) and read the names it announces.
 */
export async function discoverScenarios(cli, suite, timeoutMs, cwd) {
  const refuser = net.createServer((socket) => socket.destroy());
  await new Promise((resolve, reject) => {
    refuser.once("error", reject);
    refuser.listen(0, "127.0.0.1", resolve);
  });
  try {
    const url = `http://127.0.0.1:${refuser.address().port}/mcp`;
    const result = await run(process.execPath, [cli.path, "server", "--url", url, "--suite", suite], timeoutMs, cwd);
    const names = [...result.output.matchAll(/^=== Running scenario: (.+?) ===$/gm)].map((m) => m[1]);
    const announced = /Running \S+ suite \((\d+) scenarios\)/.exec(result.output);
    if (names.length === 0 || !announced || Number(announced[1]) !== names.length) {
      throw new Error(
        `could not read the "${suite}" suite's scenarios from the conformance CLI:\n${tail(result.output, 20)}`,
      );
    }
    return names;
  } finally {
    refuser.close();
  }
}

/**
 * The server scenarios a requirement set names (`conformance list --requirements
 * <revision>`), or with `side` 'client' its client scenarios: the scored ones, then those
 * run but never scored (extension, pending), each with `scored`.
 */
export async function requirementScenarios(cli, revision, timeoutMs, cwd, side = "server") {
  const result = await run(process.execPath, [cli.path, "list", "--requirements", revision], timeoutMs, cwd);
  const lines = result.output.split("\n");
  const scored = [];
  const unscored = [];
  let section = "";
  for (const line of lines) {
    if (/^Server scenarios/.test(line)) section = "server";
    else if (/^Client scenarios/.test(line)) section = "client";
    else if (/^Run and reported, but never scored/.test(line)) section = "unscored";
    const item = /^\s+- (\S+)(?: \[(\w+)\])?\s*$/.exec(line);
    if (!item) continue;
    if (section === side) scored.push(item[1]);
    else if (section === "unscored" && item[2] === side) unscored.push(item[1]);
  }
  const announced = /\((\d+) scenarios/.exec(result.output);
  if (scored.length === 0 || !announced)
    throw new Error(
      `could not read the ${revision} requirement set from the conformance CLI:\n${tail(result.output, 20)}`,
    );
  return [...scored.map((name) => ({ name, scored: true })), ...unscored.map((name) => ({ name, scored: false }))];
}

/**
 * The checks.json the CLI wrote under `dir`: it names a subdirectory after scenario and
 * time, a level deeper for a scenario named with a slash (`auth/iss-supported`).
 */
async function readChecks(dir) {
  let entries = [];
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!entry.isFile() || entry.name !== "checks.json") continue;
    try {
      const checks = JSON.parse(await readFile(path.join(entry.parentPath, entry.name), "utf8"));
      if (Array.isArray(checks)) return checks;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * Runs one scenario (`extraArgs` e.g. `--spec-version 2026-07-28 --force`) and summarises its
 * checks: a server scenario against `url`, or with `command`, a client scenario run by that
 * command (`conformance client --command`, which appends the scenario server's URL).
 */
export async function runScenario({ cli, url, command, scenario, dir, timeoutMs, extraArgs = [], cwd }) {
  await mkdir(dir, { recursive: true });
  const target = command === undefined ? ["server", "--url", url] : ["client", "--command", command];
  const args = [cli.path, ...target, "--scenario", scenario, ...extraArgs, "-o", dir];
  const result = await run(process.execPath, args, timeoutMs, cwd);
  await writeFile(path.join(dir, "output.txt"), result.output);
  let checks = result.timedOut ? undefined : await readChecks(dir);
  if (!checks || checks.length === 0) {
    const why = result.timedOut
      ? `timed out after ${timeoutMs} ms`
      : result.error
        ? `could not run the conformance CLI: ${result.error.message}`
        : `the conformance CLI exited (${result.signal ?? `code ${result.code}`}) without results`;
    checks = [
      {
        id: "scenario-run",
        name: "ScenarioRun",
        status: "FAILURE",
        errorMessage: `${why}\n${tail(result.output, 15)}`.trim(),
      },
    ];
  }
  const count = (status) => checks.filter((c) => c.status === status).length;
  const described = (c) => ({ name: c.id ?? c.name, message: c.errorMessage ?? c.description ?? "" });
  // A client scenario passes as the CLI judges one: no failed check, no warning, and a
  // client that neither timed out nor exited with an error (unless the scenario allows it).
  const clientProblem =
    command === undefined ? undefined : CLIENT_PROBLEMS.find(({ line }) => result.output.includes(line))?.problem;
  return {
    scenario,
    passed:
      count("FAILURE") === 0 && (command === undefined || (count("WARNING") === 0 && clientProblem === undefined)),
    successes: count("SUCCESS"),
    failures: count("FAILURE"),
    warnings: count("WARNING"),
    failedChecks: checks.filter((c) => c.status === "FAILURE").map(described),
    warnedChecks: checks.filter((c) => c.status === "WARNING").map(described),
    ...(clientProblem ? { clientProblem } : {}),
    durationMs: result.durationMs,
  };
}

/** What the CLI prints when a client under test failed outside its checks (runner/client.ts, printClientResults). */
const CLIENT_PROBLEMS = [
  { line: "CLIENT TIMED OUT", problem: "the client timed out" },
  { line: "CLIENT EXITED WITH ERROR", problem: "the client exited with an error" },
];

/** Runs every scenario of a leg, `concurrency` at a time; results in scenario order. */
export async function runLeg({ label, cli, url, command, scenarios, out, timeoutMs, concurrency, extraArgs, cwd }) {
  const started = Date.now();
  const results = new Array(scenarios.length);
  let next = 0;
  const worker = async () => {
    while (next < scenarios.length && !stopping) {
      const index = next++;
      const scenario = scenarios[index];
      results[index] = await runScenario({
        cli,
        url,
        command,
        scenario,
        dir: path.join(out, label, scenario),
        timeoutMs,
        extraArgs,
        cwd,
      });
      const r = results[index];
      console.log(`  [${label}] ${r.passed ? "pass" : "FAIL"}  ${scenario} (${r.durationMs} ms)`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, scenarios.length) }, worker));
  console.log(`  [${label}] done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return results;
}

export function tail(text, lines) {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}
