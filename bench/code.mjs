#!/usr/bin/env node
/**
 * `npm run bench:code`: what code mode saves an agent (issue 35, docs/code-mode.md).
 *
 * The gateway runs as README says (`npm start`, wrangler dev, so workerd and the Worker
 * Loader) in front of real servers installed from npm: server-everything, server-memory and
 * server-filesystem on a generated tree (bench/code/servers.mjs), and the other servers of
 * `bench:catalog` (their real tool lists; calls answered by the fixture). Each task of
 * bench/code/tasks.mjs runs for real three times — as direct calls (full mode), as the same
 * calls through sys___search_tools and sys___call_tool (search mode), and as one program
 * (code mode) — and the three answers must be equal. It reports, per task and in total:
 *
 *   - tokens entering the model's context (o200k_base, gpt-tokenizer): the tool list, every
 *     result (without `_meta`), and what the model wrote (arguments, queries, the program);
 *   - model turns: one per round of tool calls (a turn's independent calls go in parallel),
 *     the searches of search and code mode taking one turn;
 *   - the sandbox's start as the call waits for it (from the catalog being listed to the
 *     sandbox's first message back; the isolate is asked for before, see run-code.ts), the
 *     isolate's whole start (from loader.load), and the added latency (the run less the time
 *     a tool call was in flight), from each run's `_meta`, over the tasks and over
 *     START_RUNS runs of `return 1`;
 *   - CPU per inner call: the wrangler dev runtime's CPU (lib/cpu.ts) for runs of
 *     CPU_CALLS echo calls less runs of none, per call;
 *   - preparing a program (acorn) in Node, and the bytes of modules the sandbox is given.
 *
 *   npm run bench:code
 *
 * Results are printed and written to bench/results/code-<timestamp>.json.
 */
import { build } from "esbuild";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { countTokens } from "gpt-tokenizer";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { installServers, listServers, serveFixtures } from "./catalog/servers.mjs";
import { serveRealServers } from "./code/servers.mjs";
import { TASKS } from "./code/tasks.mjs";
import { listAll, session } from "./lib/mcp-session.mjs";
import { readCpu, relayProcesses } from "./lib/cpu.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REAL = ["everything", "memory", "filesystem"];
const START_RUNS = 40;
const CPU_RUNS = 10;
const CPU_CALLS = 40;
const RUN_META = "mcp-edge-gateway/code-run";

const tokens = (value) => countTokens(typeof value === "string" ? value : JSON.stringify(value));
const withoutMeta = ({ _meta, ...rest }) => rest;
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fixed = (n, d = 1) => Number(n.toFixed(d));

/** A value as a program gets it: structuredContent, else the text, parsed when JSON. */
function programValueOf(result) {
  if (result.isError) throw new Error(`tool error: ${result.content?.[0]?.text}`);
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = result.content.map((c) => c.text ?? "").join("\n");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A session in `mode` with the context it has read so far. */
async function agent(base, mode) {
  const client = await session(`${base}/mcp?catalog=${mode}`, "bench-code");
  const listTokens = tokens({ tools: await listAll(client) });
  const call = async (name, args) => (await client.send("tools/call", { name, arguments: args })).message.result;
  return { call, listTokens };
}

/** Runs one task in full or search mode: counted turns and tokens, and the answer. */
async function direct(task, one, searching) {
  let turns = 0;
  let context = one.listTokens;
  if (searching) {
    turns++;
    for (const query of task.searches) {
      context += tokens(query) + tokens(withoutMeta(await one.call("sys___search_tools", { query, limit: 5 })));
    }
  }
  const step = async (calls) => {
    turns++;
    return Promise.all(
      calls.map(async ([name, args]) => {
        const result = searching
          ? await one.call("sys___call_tool", { name, arguments: args })
          : await one.call(name, args);
        context += tokens({ name, arguments: args }) + tokens(withoutMeta(result));
        return programValueOf(result);
      }),
    );
  };
  const answer = await task.direct(step);
  return { answer, turns, tokens: context };
}

/** Runs one task in code mode. */
async function coded(task, one) {
  let context = one.listTokens;
  for (const query of task.searches)
    context += tokens(query) + tokens(withoutMeta(await one.call("sys___search_tools", { query, limit: 5 })));
  const result = await one.call("sys___run_code", { code: task.program });
  context += tokens(task.program) + tokens(withoutMeta(result));
  if (result.isError) throw new Error(`${task.name}: ${result.content.map((c) => c.text).join("\n")}`);
  return { answer: JSON.parse(result.content[0].text), turns: 2, tokens: context, timing: result._meta[RUN_META] };
}

const stable = (value) =>
  JSON.stringify(value, (_, v) =>
    v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  );

/** CPU of the wrangler dev runtime per inner call: runs of CPU_CALLS echo calls less runs of none. */
async function cpuPerCall(base, gateway) {
  const one = await agent(base, "code");
  const roles = relayProcesses({ root: gateway.pid, port: gateway.port });
  const measure = async (code) => {
    await one.call("sys___run_code", { code });
    const before = readCpu(roles, process.pid);
    for (let i = 0; i < CPU_RUNS; i++) await one.call("sys___run_code", { code });
    const after = readCpu(roles, process.pid);
    let runtime = 0;
    for (const pid of roles.runtime)
      for (const [tid, micros] of after.threads.get(pid) ?? [])
        runtime += micros - (before.threads.get(pid)?.get(tid) ?? 0);
    return runtime / CPU_RUNS;
  };
  const none = await measure("return 0;");
  const calls = await measure(
    `let n = 0; for (let i = 0; i < ${CPU_CALLS}; i++) n += (await tools.everything.echo({ message: "x" + i })).length; return n;`,
  );
  return { runMicros: none, perCallMicros: (calls - none) / CPU_CALLS };
}

/** Preparing each program (acorn) in Node, and the modules the sandbox gets, bundled from the source. */
async function preparation() {
  const dir = mkdtempSync(path.join(ROOT, "node_modules", ".bench-code-"));
  const outfile = path.join(dir, "prepare.mjs");
  try {
    await build({
      stdin: {
        contents:
          'export { prepareProgram } from "./src/features/code-mode/program.ts";\nexport { sandboxModules } from "./src/features/code-mode/sandbox-modules.ts";',
        resolveDir: ROOT,
        loader: "ts",
      },
      bundle: true,
      format: "esm",
      platform: "node",
      outfile,
      logLevel: "error",
    });
    const { prepareProgram, sandboxModules } = await import(pathToFileURL(outfile).href);
    const samples = [];
    let bytes = 0;
    for (let round = 0; round < 50; round++)
      for (const task of TASKS) {
        const start = performance.now();
        const prepared = prepareProgram(task.program);
        samples.push(performance.now() - start);
        bytes = Math.max(
          bytes,
          Object.values(sandboxModules(prepared.body)).reduce((s, m) => s + Buffer.byteLength(m), 0),
        );
      }
    return { prepareP50Ms: percentile(samples, 50), prepareP90Ms: percentile(samples, 90), largestModulesBytes: bytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  installServers();
  const catalog = await listServers();
  for (const name of REAL) delete catalog[name];
  const fixtures = await serveFixtures(catalog);
  const real = await serveRealServers();
  const upstreams = [...fixtures.upstreams, ...real.upstreams];
  const gateway = await startGateway({ port: await freePort(), vars: { UPSTREAMS: upstreams } });
  const rows = [];
  const timings = [];
  let cpu;
  try {
    for (const task of TASKS) {
      const full = await direct(task, await agent(gateway.url, "full"), false);
      const search = await direct(task, await agent(gateway.url, "search"), true);
      const code = await coded(task, await agent(gateway.url, "code"));
      const equal = stable(full.answer) === stable(code.answer) && stable(full.answer) === stable(search.answer);
      if (!equal)
        console.log(
          `[code] ${task.name}: answers differ\n  full ${stable(full.answer)}\n  code ${stable(code.answer)}`,
        );
      timings.push(code.timing);
      rows.push({ task: task.name, equal, full, search, code });
    }
    const starter = await agent(gateway.url, "code");
    for (let i = 0; i < START_RUNS; i++)
      timings.push((await starter.call("sys___run_code", { code: "return 1;" }))._meta[RUN_META]);
    cpu = await cpuPerCall(gateway.url, gateway);
  } finally {
    await gateway.stop();
    await fixtures.close();
    await real.close();
    rmSync(real.dir, { recursive: true, force: true });
  }
  const prepared = await preparation();

  console.log(`\n## ${rows.length} tasks (o200k_base tokens entering the model's context; model turns)`);
  console.log("task                     equal    full tok (turns)   search tok (turns)   code tok (turns)  code/full");
  const sum = { full: 0, search: 0, code: 0 };
  for (const r of rows) {
    for (const mode of ["full", "search", "code"]) sum[mode] += r[mode].tokens;
    console.log(
      `${r.task.padEnd(24)} ${String(r.equal).padEnd(5)} ${String(r.full.tokens).padStart(9)} (${r.full.turns}) ${String(r.search.tokens).padStart(12)} (${r.search.turns}) ${String(r.code.tokens).padStart(12)} (${r.code.turns})   ${((100 * r.code.tokens) / r.full.tokens).toFixed(1)}%`,
    );
  }
  const fewer = rows.filter((r) => r.code.turns < r.full.turns).length;
  console.log(
    `total                    ${rows.every((r) => r.equal)} ${String(sum.full).padStart(9)}     ${String(sum.search).padStart(12)}     ${String(sum.code).padStart(12)}       ${((100 * sum.code) / sum.full).toFixed(1)}% (search ${((100 * sum.search) / sum.full).toFixed(1)}%)`,
  );
  console.log(`fewer turns in code mode than full on ${fewer} of ${rows.length} tasks`);
  const starts = timings.map((t) => t.startMs);
  const isolates = timings.map((t) => t.isolateMs);
  const added = timings.map((t) => t.runMs - t.toolCallMs);
  console.log(`\n## sandbox (${timings.length} runs under wrangler dev, gateway's clock)`);
  console.log(
    `start the call waits for p50 ${fixed(percentile(starts, 50))} ms (p90 ${fixed(percentile(starts, 90))}, best ${fixed(Math.min(...starts))})`,
  );
  console.log(
    `the isolate's whole start (from loader.load, during the catalog listing) p50 ${fixed(percentile(isolates, 50))} ms (p90 ${fixed(percentile(isolates, 90))})`,
  );
  console.log(`added latency per run p50 ${fixed(percentile(added, 50))} ms (p90 ${fixed(percentile(added, 90))})`);
  console.log(
    `CPU of the runtime per inner call ${fixed(cpu.perCallMicros / 1000, 2)} ms; per run of none ${fixed(cpu.runMicros / 1000, 2)} ms`,
  );
  console.log(
    `preparing a program (acorn, Node) p50 ${fixed(prepared.prepareP50Ms, 3)} ms (p90 ${fixed(prepared.prepareP90Ms, 3)}); modules given to the loader at most ${prepared.largestModulesBytes} bytes`,
  );
  const result = { startedAt: new Date().toISOString(), rows, sum, timings, cpu, prepared };
  mkdirSync(path.join(ROOT, "bench", "results"), { recursive: true });
  const file = path.join(ROOT, "bench", "results", `code-${result.startedAt.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\n[code] written to ${path.relative(ROOT, file)}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
