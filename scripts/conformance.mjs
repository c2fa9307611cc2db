#!/usr/bin/env node
/**
 * `npm run conformance`: the official MCP conformance suite (server scenarios), run twice:
 *
 *   1. directly against test/fixtures/conformance-upstream.ts, an SDK server that
 *      implements everything the scenarios ask for;
 *   2. through the gateway (`wrangler dev`, scripts/lib/gateway-process.mjs) at
 *      /mcp/fixture, its transparent per-upstream route to that same server.
 *
 * It prints one row per scenario (direct, via gateway) and both pass counts, and exits 1
 * when a scenario that passes directly fails through the gateway (or the gateway does
 * not start); scenarios that fail even directly are reported but not compared.
 *
 *   npm run conformance
 *   npm run conformance -- --suite all            # also the suite's pending scenarios
 *   npm run conformance -- --scenario tools-call-sampling --scenario ping
 *   npm run conformance -- --concurrency 1 --timeout 60000
 *
 * Each scenario runs in its own `conformance server --scenario <name>` process with a
 * time limit (--timeout, default 30 s), a few at a time (--concurrency, default 4), so a
 * scenario that hangs through the gateway fails alone and the whole run stays bounded
 * (and there is a hard limit of 15 minutes on top). The scenario list is the suite's own
 * (--suite, default "active"): it is read from a run of the suite against a loopback
 * port that refuses every connection. Everything listens on 127.0.0.1.
 *
 * Results (each scenario's checks.json and output, gateway.log, summary.json) go to
 * results/conformance/ (--out); the previous run's are removed first.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'conformance-upstream.ts');
const GATEWAY_HELPER = path.join(ROOT, 'scripts', 'lib', 'gateway-process.mjs');
const UPSTREAM_NAME = 'fixture';
const TOTAL_TIMEOUT_MS = 15 * 60_000;
const DISCOVERY_TIMEOUT_MS = 60_000;

// ---- options ------------------------------------------------------------------------

function parseArgs(argv) {
  const options = { suite: 'active', scenarios: [], concurrency: 4, timeoutMs: 30_000, out: path.join(ROOT, 'results', 'conformance') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const key = eq === -1 ? arg : arg.slice(0, eq);
    const value = () => {
      if (eq !== -1) return arg.slice(eq + 1);
      if (i + 1 >= argv.length) usage(`${key} needs a value`);
      return argv[++i];
    };
    const positiveInt = (raw) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n <= 0) usage(`${key} must be a positive integer, got "${raw}"`);
      return n;
    };
    if (key === '--suite') options.suite = value();
    else if (key === '--scenario') options.scenarios.push(value());
    else if (key === '--concurrency') options.concurrency = positiveInt(value());
    else if (key === '--timeout') options.timeoutMs = positiveInt(value());
    else if (key === '--out') options.out = path.resolve(value());
    else if (key === '--help' || key === '-h') usage();
    else usage(`unknown option ${arg}`);
  }
  return options;
}

function usage(problem) {
  if (problem) console.error(`[conformance] ${problem}`);
  console.error('usage: npm run conformance -- [--suite active|all|pending] [--scenario NAME]... [--concurrency N] [--timeout MS] [--out DIR]');
  process.exit(problem ? 2 : 0);
}

// ---- processes and cleanup ----------------------------------------------------------

/** Running conformance processes, killed on the way out. */
const children = new Set();
/** Cleanup steps (stop the gateway, close the fixture), run once, last registered first. */
const cleanups = [];
let exiting = false;

async function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  while (cleanups.length > 0) {
    const step = cleanups.pop();
    try {
      await step();
    } catch (error) {
      console.error(`[conformance] cleanup: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

async function exit(code) {
  if (exiting) return;
  exiting = true;
  await cleanup();
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    console.error(`\n[conformance] ${signal}: stopping`);
    void exit(128 + (constants.signals[signal] ?? 0));
  });
}
process.on('uncaughtException', (error) => {
  console.error('[conformance] unexpected error:', error);
  void exit(1);
});
process.on('unhandledRejection', (error) => {
  console.error('[conformance] unexpected error:', error);
  void exit(1);
});

/** Runs a command to completion (or until `timeoutMs`, then SIGKILL); never rejects. */
function run(command, args, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let output = '';
    const append = (chunk) => {
      output += chunk;
    };
    child.stdout.setEncoding('utf8').on('data', append);
    child.stderr.setEncoding('utf8').on('data', append);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const done = (code, signal, error) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, error, output, timedOut, durationMs: Date.now() - started });
    };
    child.on('error', (error) => done(null, null, error));
    child.on('close', (code, signal) => done(code, signal, undefined));
  });
}

// ---- the conformance CLI ------------------------------------------------------------

function conformanceCli() {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('@modelcontextprotocol/conformance/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.conformance;
  return { path: path.join(path.dirname(pkgPath), bin), version: pkg.version };
}

/**
 * The suite's scenario names, in its order: the CLI has no "list the active suite"
 * command, so run the suite against a port that resets every connection (each scenario
 * fails at once) and read the names it announces.
 */
async function discoverScenarios(cli, suite) {
  const refuser = net.createServer((socket) => socket.destroy());
  await new Promise((resolve, reject) => {
    refuser.once('error', reject);
    refuser.listen(0, '127.0.0.1', resolve);
  });
  try {
    const url = `http://127.0.0.1:${refuser.address().port}/mcp`;
    const result = await run(process.execPath, [cli.path, 'server', '--url', url, '--suite', suite], DISCOVERY_TIMEOUT_MS);
    const names = [...result.output.matchAll(/^=== Running scenario: (.+?) ===$/gm)].map((m) => m[1]);
    const announced = /Running \S+ suite \((\d+) scenarios\)/.exec(result.output);
    if (names.length === 0 || !announced || Number(announced[1]) !== names.length) {
      throw new Error(`could not read the "${suite}" suite's scenarios from the conformance CLI:\n${tail(result.output, 20)}`);
    }
    return names;
  } finally {
    refuser.close();
  }
}

/** The checks.json the CLI wrote under `dir` (it names a subdirectory after scenario and time). */
async function readChecks(dir) {
  let entries = [];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    try {
      const checks = JSON.parse(await readFile(path.join(dir, entry.name, 'checks.json'), 'utf8'));
      if (Array.isArray(checks)) return checks;
    } catch {
      // not this one
    }
  }
  return undefined;
}

async function runScenario(cli, url, scenario, dir, timeoutMs) {
  await mkdir(dir, { recursive: true });
  const result = await run(process.execPath, [cli.path, 'server', '--url', url, '--scenario', scenario, '-o', dir], timeoutMs);
  await writeFile(path.join(dir, 'output.txt'), result.output);
  let checks = result.timedOut ? undefined : await readChecks(dir);
  if (!checks || checks.length === 0) {
    const why = result.timedOut
      ? `timed out after ${timeoutMs} ms`
      : result.error
        ? `could not run the conformance CLI: ${result.error.message}`
        : `the conformance CLI exited (${result.signal ?? `code ${result.code}`}) without results`;
    checks = [{ id: 'scenario-run', name: 'ScenarioRun', status: 'FAILURE', errorMessage: `${why}\n${tail(result.output, 15)}`.trim() }];
  }
  const count = (status) => checks.filter((c) => c.status === status).length;
  return {
    scenario,
    passed: count('FAILURE') === 0,
    successes: count('SUCCESS'),
    failures: count('FAILURE'),
    warnings: count('WARNING'),
    failedChecks: checks.filter((c) => c.status === 'FAILURE').map((c) => ({ name: c.name ?? c.id, message: c.errorMessage ?? c.description ?? '' })),
    durationMs: result.durationMs,
  };
}

/** Runs every scenario against `url`, `concurrency` at a time; results in scenario order. */
async function runSuite(cli, label, url, scenarios, options) {
  const started = Date.now();
  const results = new Array(scenarios.length);
  let next = 0;
  const worker = async () => {
    while (next < scenarios.length && !exiting) {
      const index = next++;
      const scenario = scenarios[index];
      results[index] = await runScenario(cli, url, scenario, path.join(options.out, label, scenario), options.timeoutMs);
      const r = results[index];
      console.log(`  [${label}] ${r.passed ? 'pass' : 'FAIL'}  ${scenario} (${r.durationMs} ms)`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, scenarios.length) }, worker));
  console.log(`  [${label}] done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return results;
}

// ---- reporting ----------------------------------------------------------------------

function tail(text, lines) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function indent(text, prefix) {
  return text.split('\n').map((line) => prefix + line).join('\n');
}

function cell(result) {
  if (!result) return '-';
  if (!result.passed) return 'FAIL';
  return result.warnings > 0 ? `pass (${result.warnings} warning${result.warnings === 1 ? '' : 's'})` : 'pass';
}

function printTable(scenarios, direct, gateway) {
  const width = Math.max('scenario'.length, ...scenarios.map((s) => s.length));
  const directWidth = Math.max('direct'.length, ...direct.map((r) => cell(r).length));
  const row = (a, b, c) => `${a.padEnd(width)}  ${b.padEnd(directWidth)}  ${c}`;
  console.log(row('scenario', 'direct', 'via gateway'));
  console.log(row('-'.repeat(width), '-'.repeat(directWidth), '-'.repeat('via gateway'.length)));
  scenarios.forEach((scenario, i) => console.log(row(scenario, cell(direct[i]), cell(gateway?.[i]))));
}

function printFailedChecks(results) {
  for (const r of results) {
    console.log(`  ${r.scenario}`);
    for (const check of r.failedChecks) {
      const [first, ...rest] = `${check.name}: ${check.message}`.split('\n');
      console.log(`    - ${first}`);
      if (rest.length > 0) console.log(indent(rest.join('\n'), '      '));
    }
  }
}

// ---- main ---------------------------------------------------------------------------

async function main() {
  const options = parseArgs(process.argv.slice(2));
  setTimeout(() => {
    console.error(`[conformance] gave up after ${TOTAL_TIMEOUT_MS / 60_000} minutes`);
    void exit(1);
  }, TOTAL_TIMEOUT_MS).unref();

  if (!process.features?.typescript) {
    console.error(`[conformance] Node ${process.version} cannot load the TypeScript fixture; run \`npm run conformance\` (it uses the project's Node 24).`);
    return exit(1);
  }

  const cli = conformanceCli();
  // Only what this script writes there goes, so a mistaken --out cannot cost anything else.
  for (const entry of ['direct', 'gateway', 'summary.json', 'gateway.log']) await rm(path.join(options.out, entry), { recursive: true, force: true });
  await mkdir(options.out, { recursive: true });

  const scenarios = options.scenarios.length > 0 ? options.scenarios : await discoverScenarios(cli, options.suite);
  const source = options.scenarios.length > 0 ? 'chosen with --scenario' : `suite "${options.suite}"`;
  console.log(`MCP conformance ${cli.version}: ${scenarios.length} server scenarios (${source})`);

  const { startConformanceUpstream } = await import(pathToFileURL(FIXTURE).href);
  const fixture = await startConformanceUpstream(0);
  cleanups.push(() => fixture.close());
  console.log(`\nDirect: ${fixture.url}`);
  const direct = await runSuite(cli, 'direct', fixture.url, scenarios, options);

  let gateway;
  let gatewayProblem;
  let gatewayResults;
  try {
    if (!existsSync(GATEWAY_HELPER)) throw new Error(`${path.relative(ROOT, GATEWAY_HELPER)} does not exist`);
    const helper = await import(pathToFileURL(GATEWAY_HELPER).href);
    const port = await helper.freePort();
    console.log(`\nStarting the gateway on 127.0.0.1:${port} ...`);
    gateway = await helper.startGateway({
      port,
      vars: {
        UPSTREAMS: [{ name: UPSTREAM_NAME, url: fixture.url }],
        SESSION_SECRET: randomBytes(32).toString('hex'),
      },
    });
  } catch (error) {
    gatewayProblem = error;
  }
  if (gateway) {
    const stopGateway = () => gateway.stop();
    cleanups.push(stopGateway);
    const url = `${gateway.url.replace(/\/+$/, '')}/mcp/${UPSTREAM_NAME}`;
    console.log(`Via gateway: ${url}`);
    gatewayResults = await runSuite(cli, 'gateway', url, scenarios, options);
  }

  // ---- report
  const passedCount = (results) => results.filter((r) => r.passed).length;
  console.log('');
  printTable(scenarios, direct, gatewayResults);
  console.log('');
  const directLine = `direct: ${passedCount(direct)}/${scenarios.length} passed`;
  const gatewayLine = gatewayResults ? `via gateway: ${passedCount(gatewayResults)}/${scenarios.length} passed` : 'via gateway: not run (the gateway did not start)';
  console.log(`${directLine}, ${gatewayLine}`);

  const directFailures = direct.filter((r) => !r.passed);
  if (directFailures.length > 0) {
    console.log(`\nFailing even directly, so not compared (a fixture or SDK problem, not the gateway's) — ${directFailures.length}:`);
    printFailedChecks(directFailures);
  }

  let regressions = [];
  if (gatewayResults) {
    regressions = gatewayResults.filter((r, i) => direct[i].passed && !r.passed);
    const newWarnings = gatewayResults.filter((r, i) => r.passed && direct[i].passed && r.warnings > direct[i].warnings);
    if (newWarnings.length > 0) {
      console.log('\nPassing through the gateway, but with more warnings than directly (see their checks.json):');
      for (const r of newWarnings) console.log(`  ${r.scenario}: ${direct[scenarios.indexOf(r.scenario)].warnings} -> ${r.warnings}`);
    }
    if (regressions.length > 0) {
      console.log(`\nPassed directly but FAILED through the gateway — ${regressions.length}:`);
      printFailedChecks(regressions);
    }
  }

  const logs = gateway ? await gatewayLogs(gateway) : logsFromError(gatewayProblem);
  if (logs) await writeFile(path.join(options.out, 'gateway.log'), logs);
  await writeFile(
    path.join(options.out, 'summary.json'),
    `${JSON.stringify({ conformance: cli.version, suite: options.suite, scenarios, direct, gateway: gatewayResults ?? null }, null, 2)}\n`,
  );
  console.log(`\nResults: ${path.relative(ROOT, options.out) || '.'}/`);

  if (!gateway) {
    const message = gatewayProblem instanceof Error ? gatewayProblem.message : String(gatewayProblem);
    console.error(`\n[conformance] The gateway did not start: ${message}`);
    if (logs) console.error(`--- gateway logs (last 80 lines) ---\n${tail(logs, 80)}\n---`);
    return exit(1);
  }
  if (regressions.length > 0) {
    if (logs) console.log(`\n--- gateway logs (last 40 lines; all in gateway.log) ---\n${tail(logs, 40)}\n---`);
    return exit(1);
  }
  return exit(0);
}

async function gatewayLogs(gateway) {
  try {
    const logs = await gateway.logs();
    return typeof logs === 'string' ? logs : Array.isArray(logs) ? logs.join('\n') : '';
  } catch {
    return '';
  }
}

/** Whatever log text a failed startGateway attached to its error. */
function logsFromError(error) {
  if (!error || typeof error !== 'object') return '';
  const logs = error.logs;
  if (typeof logs === 'function') {
    try {
      const value = logs.call(error);
      return typeof value === 'string' ? value : '';
    } catch {
      return '';
    }
  }
  return typeof logs === 'string' ? logs : '';
}

main().catch(async (error) => {
  console.error('[conformance]', error instanceof Error ? (error.stack ?? error.message) : error);
  await exit(1);
});
