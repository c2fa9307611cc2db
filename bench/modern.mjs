#!/usr/bin/env node
/**
 * `npm run bench:modern` (chained into `npm run bench`): what a small 2026-07-28
 * `tools/call` through the gateway costs, as added latency and as a multiple of what the
 * cheapest relay (the pass-through Worker, bench/passthrough/) adds — target <= 1.3x.
 *
 * Two upstreams, each in a child process (bench/lib/upstream-server.ts):
 *   - "2025": beta, the stateless SDK v1 server (speaks only 2025-11-25); the client
 *     calls it directly and through the pass-through the 2025 way (it cannot take a 2026
 *     request), and through the gateway the 2026 way: the gateway bridges the eras;
 *   - "2026": dual, the SDK v2 server of test/fixtures/conformance-upstream-2026.ts,
 *     called the 2026 way on every target. To measure a 2026-only upstream instead (e.g.
 *     test/fixtures/modern-upstream.ts, SDK v2 with legacy: "reject", once the gateway
 *     speaks 2026 to upstreams), start it yourself and pass its URL and a tool it
 *     answers: --modern-url http://127.0.0.1:3003/mcp --modern-tool <name>.
 *
 * Targets per upstream: direct, pass-through, gateway /mcp/<name> (a 2026 client, and
 * for comparison a 2025 client on the same route); calls one at a time,
 * interleaved round-robin after a warm-up (bench/lib/load.ts), in --runs separate
 * rounds of measurement (default 2) so a shared machine's drift shows; median per run.
 * The gateway (wrangler dev, scripts/lib/gateway-process.mjs) runs from a copy of the
 * tree taken at start (bench/lib/snapshot.ts). Everything on 127.0.0.1.
 *
 *   npm run bench:modern
 *   npm run bench:modern -- --iterations 500 --runs 3
 *
 * Options (flag or env var): --iterations 200 (BENCH_ITERATIONS), --warmup 30
 * (BENCH_WARMUP), --runs 2 (BENCH_RUNS), --modern-url (BENCH_MODERN_URL), --modern-tool
 * test_simple_text (BENCH_MODERN_TOOL), --gateway-vars '{}' (BENCH_GATEWAY_VARS: more vars
 * for the gateway, e.g. '{"AUDIT":{"enabled":false}}'), --out bench/results (BENCH_OUT). Results are
 * printed and written to <out>/modern-<timestamp>.json. Hard limit: 10 minutes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { interleavedLatency } from "./lib/load.ts";
import { openModernTarget } from "./lib/modern-target.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { saveResult, section, table } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";
import { summarize } from "./lib/stats.ts";
import { openTarget } from "./lib/target.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 10 * 60_000;
/** Issue 18: added median latency at most 1.10x the pass-through's with the defaults on. */
const TARGET_RATIO = 1.1;
const OPTIONS = {
  iterations: ["BENCH_ITERATIONS", "200"],
  warmup: ["BENCH_WARMUP", "30"],
  runs: ["BENCH_RUNS", "2"],
  "modern-url": ["BENCH_MODERN_URL", ""],
  "modern-tool": ["BENCH_MODERN_TOOL", "test_simple_text"],
  "gateway-vars": ["BENCH_GATEWAY_VARS", "{}"],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};

function parseOptions(argv) {
  try {
    const raw = readOptions(OPTIONS, argv);
    return {
      iterations: integerOption(raw, "iterations", 1),
      warmup: integerOption(raw, "warmup", 0),
      runs: integerOption(raw, "runs", 1, 10),
      modernUrl: raw["modern-url"] || undefined,
      modernTool: raw["modern-tool"],
      gatewayVars: JSON.parse(raw["gateway-vars"]),
      out: path.resolve(raw.out),
    };
  } catch (error) {
    console.error(`[bench:modern] ${error instanceof Error ? error.message : error}`);
    process.exit(2);
  }
}

/** Starts the upstreams, the gateway and one pass-through per upstream; `stops` collects what to stop. */
async function startAll(options, stops) {
  const legacy = await startUpstream("beta");
  stops.push(legacy.stop);
  let modernUrl = options.modernUrl;
  if (!modernUrl) {
    const dual = await startUpstream("dual");
    stops.push(dual.stop);
    modernUrl = dual.url;
  }
  const upstreams = [
    { era: "2025", name: "beta", url: legacy.url, tool: "echo", args: { text: "hello" }, native: openTarget },
    { era: "2026", name: "modern", url: modernUrl, tool: options.modernTool, args: {}, native: openModernTarget },
  ];
  const state = mkdtempSync(path.join(os.tmpdir(), "bench-modern-gateway-"));
  stops.push(async () => rmSync(state, { recursive: true, force: true }));
  const snapshot = snapshotTree(ROOT);
  stops.push(async () => snapshot.remove());
  const vars = {
    ...options.gatewayVars,
    UPSTREAMS: upstreams.map((u) => ({ name: u.name, url: u.url })),
    SESSION_SECRET: randomBytes(32).toString("hex"),
  };
  const gateway = await startGateway({ port: await freePort(), vars, persistTo: state, cwd: snapshot.dir });
  stops.push(gateway.stop);
  const targets = [];
  for (const u of upstreams) {
    const passthrough = await startPassthrough(await freePort(), u.url);
    stops.push(passthrough.stop);
    const spec = { upstream: u.era, tool: u.tool, args: u.args };
    targets.push(await u.native({ ...spec, name: `${u.era} direct`, via: "direct", url: u.url }));
    targets.push(
      await u.native({ ...spec, name: `${u.era} pass-through`, via: "passthrough", url: `${passthrough.url}/` }),
    );
    targets.push(
      await openModernTarget({
        ...spec,
        name: `${u.era} gateway /mcp/${u.name}`,
        via: "gateway",
        url: `${gateway.url}/mcp/${u.name}`,
      }),
    );
    // The same route called by a 2025 client (session, handshake once): what the 2026 front costs on top of the 2025 one.
    // (Skipped, with a note, where the gateway cannot serve it: a 2026-only upstream before the gateway speaks 2026 to upstreams.)
    try {
      targets.push(
        await openTarget({
          ...spec,
          name: `${u.era} gateway /mcp/${u.name}, 2025 client`,
          via: "gateway",
          url: `${gateway.url}/mcp/${u.name}`,
        }),
      );
    } catch (error) {
      console.error(
        `[bench:modern] no 2025-client target for the ${u.era} upstream: ${error instanceof Error ? error.message.slice(0, 200) : error}`,
      );
    }
  }
  return { upstreams, targets, gateway: { commit: snapshot.commit, changes: snapshot.changes } };
}

function added(upstreams, latency) {
  return upstreams.map((u) => {
    const direct = latency[`${u.era} direct`].median;
    const passthroughAddedMs = latency[`${u.era} pass-through`].median - direct;
    const gatewayAddedMs = latency[`${u.era} gateway /mcp/${u.name}`].median - direct;
    const legacyClientAddedMs =
      (latency[`${u.era} gateway /mcp/${u.name}, 2025 client`]?.median ?? Number.NaN) - direct;
    return {
      era: u.era,
      directMedianMs: direct,
      passthroughAddedMs,
      gatewayAddedMs,
      ratio: gatewayAddedMs / passthroughAddedMs,
      legacyClientAddedMs,
      legacyClientRatio: legacyClientAddedMs / passthroughAddedMs,
    };
  });
}

function render(result) {
  const verdict = (ratio) => `${ratio.toFixed(2)}${ratio <= TARGET_RATIO ? "" : `  (over the ${TARGET_RATIO} target)`}`;
  return [
    `mcp-edge-gateway modern (2026-07-28) relay benchmark, ${result.startedAt} (${result.durationSeconds.toFixed(0)} s)`,
    `machine: ${result.machine.cpus} cores, node ${result.machine.node}; load average ${result.machine.loadAvgAtStart.join(" ")} at start, ${result.machine.loadAvgAtEnd.join(" ")} at end`,
    `upstreams: 2025 = ${result.upstreams[0].url} (${result.upstreams[0].tool}), 2026 = ${result.upstreams[1].url} (${result.upstreams[1].tool}); gateway commit ${result.gateway.commit.slice(0, 12)}${result.gateway.changes.length ? ` + ${result.gateway.changes.length} changed files` : ""}`,
    "",
    ...result.runs.flatMap((run, i) => [
      section(
        `Run ${i + 1}: latency, ms, one call at a time, ${result.settings.iterations} interleaved rounds after ${result.settings.warmup} warm-up`,
        table(
          ["target", "median", "p90", "p99", "min", "n"],
          Object.entries(run.latency).map(([name, s]) => [name, s.median, s.p90, s.p99, s.min, s.n]),
        ),
      ),
      section(
        `Run ${i + 1}: added median latency (target - direct) and as a multiple of the pass-through's (target <= ${TARGET_RATIO})`,
        table(
          ["upstream", "pass-through ms", "2026 client ms", "x pass-through", "2025 client ms", "x pass-through"],
          run.added.map((a) => [
            a.era,
            a.passthroughAddedMs,
            a.gatewayAddedMs,
            verdict(a.ratio),
            a.legacyClientAddedMs,
            Number.isFinite(a.legacyClientRatio) ? a.legacyClientRatio.toFixed(2) : "-",
          ]),
        ),
      ),
    ]),
  ].join("\n");
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const stops = [];
  let stopped;
  const stopAll = () =>
    (stopped ??= (async () => {
      for (const stop of stops.reverse())
        await stop().catch((error) => console.error(`[bench:modern] while stopping: ${error}`));
    })());
  const abort = (why, code) => {
    console.error(`[bench:modern] ${why}; stopping everything`);
    void stopAll().then(() => process.exit(code));
  };
  process.once("SIGINT", () => abort("interrupted", 130));
  process.once("SIGTERM", () => abort("terminated", 143));
  const limit = setTimeout(() => abort(`still running after ${HARD_LIMIT_MS / 60_000} minutes`, 1), HARD_LIMIT_MS);
  limit.unref();
  const started = Date.now();
  const loadAvg = () => os.loadavg().map((x) => Number(x.toFixed(2)));
  const loadAvgAtStart = loadAvg();
  try {
    console.error("[bench:modern] starting the upstreams, the gateway and the pass-throughs");
    const setup = await startAll(options, stops);
    const runs = [];
    for (let run = 0; run < options.runs; run++) {
      console.error(`[bench:modern] run ${run + 1} of ${options.runs}`);
      const samples = await interleavedLatency(setup.targets, options.iterations, options.warmup);
      const latency = Object.fromEntries([...samples].map(([name, s]) => [name, summarize(s)]));
      runs.push({ latency, added: added(setup.upstreams, latency) });
    }
    const result = {
      startedAt: new Date(started).toISOString(),
      durationSeconds: (Date.now() - started) / 1000,
      machine: { cpus: os.cpus().length, node: process.version, loadAvgAtStart, loadAvgAtEnd: loadAvg() },
      settings: {
        iterations: options.iterations,
        warmup: options.warmup,
        runs: options.runs,
        targetRatio: TARGET_RATIO,
      },
      upstreams: setup.upstreams.map(({ era, name, url, tool }) => ({ era, name, url, tool })),
      gateway: setup.gateway,
      runs,
    };
    console.log(render(result));
    saveResult(options.out, "modern", result, result.startedAt);
  } finally {
    clearTimeout(limit);
    await stopAll();
  }
}

await main().catch((error) => {
  console.error(`[bench:modern] failed: ${error instanceof Error ? error.stack : String(error)}`);
  process.exitCode = 1;
});
