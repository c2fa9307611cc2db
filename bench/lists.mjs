#!/usr/bin/env node
/**
 * `npm run bench:lists` (chained into `npm run bench`): what holding upstream lists at the
 * edge saves (docs/operations.md, "Lists held at the edge"): tools/list latency through
 * the gateway with the list held (warm) and not (cold), beside the upstream called directly
 * and through the pass-through Worker (bench/passthrough/), and how many list requests
 * reach the upstream per 1,000 client lists, and per 1,000 tool searches.
 *
 * One upstream process (test/fixtures/list-cache-upstream.ts, bench/lib/upstream-server.ts
 * "lists") serves, each on its own path and counting the list requests that reach it:
 *   - 2026: a 2026-07-28 upstream (SDK v2) whose lists say `ttlMs` 60000, `cacheScope`
 *     public (warm), and the same upstream giving the SDK's default `ttlMs` 0 (cold);
 *     called by a 2026-07-28 client;
 *   - 2025: a 2025-11-25 upstream (SDK v1, sessions), configured with
 *     `"listCache": {"ttlMs": 60000}` (warm) and without (cold); called by a 2025 client.
 * Each lists --tools tools (default 100, about 40 KB). The gateway (`npm start`, wrangler
 * dev, from a copy of the tree taken at start: lib/snapshot.ts) and one pass-through per
 * era run on 127.0.0.1.
 *
 *   1. latency: lists one at a time, interleaved round-robin over all targets after a
 *      warm-up (bench/lib/load.ts); median, p90, p99;
 *   2. upstream requests: --lists client lists per target, --concurrency in flight,
 *      counted at the upstream; and --searches `sys___search_tools` calls on
 *      `?catalog=search` (each search lists the caller's catalog).
 *
 *   npm run bench:lists
 *   npm run bench:lists -- --iterations 500 --lists 2000 --tools 500
 *
 * Options (flag or env var): --iterations 200 (BENCH_ITERATIONS), --warmup 20
 * (BENCH_WARMUP), --lists 1000 (BENCH_LISTS), --searches 200 (BENCH_SEARCHES),
 * --concurrency 8 (BENCH_CONCURRENCY), --tools 100 (BENCH_TOOLS), --gateway-vars '{}'
 * (BENCH_GATEWAY_VARS), --out bench/results (BENCH_OUT). Results are printed and written
 * to <out>/lists-<timestamp>.json. Hard limit: 10 minutes.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { concurrentCalls, interleavedLatency } from "./lib/load.ts";
import { openModernTarget } from "./lib/modern-target.ts";
import { withProcesses } from "./lib/lifecycle.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { saveResult, section, table } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";
import { summarize } from "./lib/stats.ts";
import { openTarget } from "./lib/target.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 10 * 60_000;
const HELD_MS = 60_000;
const OPTIONS = {
  iterations: ["BENCH_ITERATIONS", "200"],
  warmup: ["BENCH_WARMUP", "20"],
  lists: ["BENCH_LISTS", "1000"],
  searches: ["BENCH_SEARCHES", "200"],
  concurrency: ["BENCH_CONCURRENCY", "8"],
  tools: ["BENCH_TOOLS", "100"],
  "gateway-vars": ["BENCH_GATEWAY_VARS", "{}"],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};

function parseOptions(argv) {
  try {
    const raw = readOptions(OPTIONS, argv);
    return {
      iterations: integerOption(raw, "iterations", 1),
      warmup: integerOption(raw, "warmup", 0),
      lists: integerOption(raw, "lists", 1),
      searches: integerOption(raw, "searches", 0),
      concurrency: integerOption(raw, "concurrency", 1, 64),
      tools: integerOption(raw, "tools", 0, 9_999),
      gatewayVars: JSON.parse(raw["gateway-vars"]),
      out: path.resolve(raw.out),
    };
  } catch (error) {
    console.error(`[bench:lists] ${error instanceof Error ? error.message : error}`);
    process.exit(2);
  }
}

/** The upstreams by era and temperature: a path of the fixture each, with its own tag (and so its own count). */
function upstreamsAt(origin, tools) {
  const tag = (label) => `bench-${label}-${randomUUID().slice(0, 8)}-x${tools}`;
  const modern = (label, hint) => {
    const name = `m${label}`;
    const t = tag(name);
    return { era: "2026", name, tag: t, url: `${origin}/modern/${hint}/${t}/mcp`, open: openModernTarget };
  };
  const legacy = (label, listCache) => {
    const name = `l${label}`;
    const t = tag(name);
    return {
      era: "2025",
      name,
      tag: t,
      url: `${origin}/legacy/${t}/mcp`,
      open: openTarget,
      ...(listCache ? { listCache } : {}),
    };
  };
  return {
    2026: { direct: modern("direct", "none"), cold: modern("cold", "none"), warm: modern("warm", `public-${HELD_MS}`) },
    2025: { direct: legacy("direct"), cold: legacy("cold"), warm: legacy("warm", { ttlMs: HELD_MS }) },
  };
}

async function listsAt(origin, tag) {
  const counts = await (await fetch(`${origin}/count/${tag}`)).json();
  return counts["tools/list"] ?? 0;
}

/** Starts the upstream, the gateway and the pass-throughs; `stops` collects what to stop. */
async function startAll(options, stops) {
  const upstream = await startUpstream("lists");
  stops.push(upstream.stop);
  const eras = upstreamsAt(upstream.url, options.tools);
  const gatewayUpstreams = Object.values(eras).flatMap((era) => [era.cold, era.warm]);
  const state = mkdtempSync(path.join(os.tmpdir(), "bench-lists-gateway-"));
  stops.push(async () => rmSync(state, { recursive: true, force: true }));
  const snapshot = snapshotTree(ROOT);
  stops.push(async () => snapshot.remove());
  const vars = {
    ...options.gatewayVars,
    UPSTREAMS: gatewayUpstreams.map((u) => ({
      name: u.name,
      url: u.url,
      ...(u.listCache ? { listCache: u.listCache } : {}),
    })),
    SESSION_SECRET: randomBytes(32).toString("hex"),
  };
  const gateway = await startGateway({ port: await freePort(), vars, persistTo: state, cwd: snapshot.dir });
  stops.push(gateway.stop);
  const targets = [];
  const searches = [];
  for (const [era, { direct, cold, warm }] of Object.entries(eras)) {
    const spec = { upstream: era, tool: "tools/list", args: {}, method: "tools/list" };
    const passthrough = await startPassthrough(await freePort(), direct.url);
    stops.push(passthrough.stop);
    targets.push({
      ...(await direct.open({ ...spec, name: `${era} direct`, via: "direct", url: direct.url })),
      tag: direct.tag,
    });
    targets.push({
      ...(await direct.open({ ...spec, name: `${era} pass-through`, via: "passthrough", url: `${passthrough.url}/` })),
      tag: direct.tag,
    });
    for (const [temperature, u] of [
      ["cold", cold],
      ["warm", warm],
    ]) {
      targets.push({
        ...(await u.open({
          ...spec,
          name: `${era} gateway ${temperature}`,
          via: "gateway",
          url: `${gateway.url}/mcp/${u.name}`,
        })),
        tag: u.tag,
      });
      const search = {
        upstream: era,
        tool: "sys___search_tools",
        args: { query: "search the records of a department" },
      };
      searches.push({
        ...(await u.open({
          ...search,
          name: `${era} gateway ${temperature}, search`,
          via: "gateway",
          url: `${gateway.url}/mcp/${u.name}?catalog=search`,
        })),
        tag: u.tag,
      });
    }
  }
  return { origin: upstream.url, targets, searches, gateway: { commit: snapshot.commit, changes: snapshot.changes } };
}

/** Upstream list requests per 1,000 of `count` calls to each target, `inFlight` at a time. */
async function upstreamLoad(origin, targets, count, inFlight) {
  const rows = [];
  for (const target of targets) {
    const before = await listsAt(origin, target.tag);
    const run = await concurrentCalls(target, count, inFlight);
    const reached = (await listsAt(origin, target.tag)) - before;
    rows.push({
      target: target.name,
      calls: count,
      upstreamLists: reached,
      per1000: (reached * 1000) / count,
      perSecond: run.perSecond,
    });
  }
  return rows;
}

function render(result) {
  const latencyRows = Object.entries(result.latency).map(([name, s]) => [name, s.median, s.p90, s.p99, s.min, s.n]);
  const added = result.added.map((a) => [a.era, a.passthroughAddedMs, a.coldAddedMs, a.warmAddedMs, a.warmVsCold]);
  const load = (rows) => rows.map((r) => [r.target, r.calls, r.upstreamLists, r.per1000, r.perSecond]);
  return [
    `mcp-edge-gateway list cache benchmark, ${result.startedAt} (${result.durationSeconds.toFixed(0)} s)`,
    `machine: ${result.machine.cpus} cores, node ${result.machine.node}; load average ${result.machine.loadAvgAtStart.join(" ")} at start, ${result.machine.loadAvgAtEnd.join(" ")} at end`,
    `lists of ${result.settings.tools + 3} tools; warm: held for ${HELD_MS / 1000} s (2026: the upstream's hint, public; 2025: UPSTREAMS[].listCache); gateway commit ${result.gateway.commit.slice(0, 12)}${result.gateway.changes.length ? ` + ${result.gateway.changes.length} changed files` : ""}`,
    "",
    section(
      `tools/list latency, ms, one at a time, ${result.settings.iterations} interleaved rounds after ${result.settings.warmup} warm-up`,
      table(["target", "median", "p90", "p99", "min", "n"], latencyRows),
    ),
    section(
      "added median latency (target - direct), ms",
      table(["era", "pass-through", "gateway cold", "gateway warm", "warm / cold"], added),
    ),
    section(
      `upstream list requests per 1,000 client lists (${result.settings.lists} lists, ${result.settings.concurrency} in flight)`,
      table(["target", "lists", "reached upstream", "per 1,000", "lists/s"], load(result.lists)),
    ),
    section(
      `upstream list requests per 1,000 tool searches (${result.settings.searches} sys___search_tools calls, ${result.settings.concurrency} in flight)`,
      table(["target", "searches", "reached upstream", "per 1,000", "searches/s"], load(result.searches)),
    ),
  ].join("\n");
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const started = Date.now();
  const loadAvg = () => os.loadavg().map((x) => Number(x.toFixed(2)));
  const loadAvgAtStart = loadAvg();
  await withProcesses("bench:lists", HARD_LIMIT_MS, async (stops) => {
    console.error("[bench:lists] starting the upstream, the gateway and the pass-throughs");
    const setup = await startAll(options, stops);
    console.error("[bench:lists] latency");
    const samples = await interleavedLatency(setup.targets, options.iterations, options.warmup);
    const latency = Object.fromEntries([...samples].map(([name, s]) => [name, summarize(s)]));
    const added = ["2026", "2025"].map((era) => {
      const direct = latency[`${era} direct`].median;
      const [passthroughAddedMs, coldAddedMs, warmAddedMs] = ["pass-through", "gateway cold", "gateway warm"].map(
        (t) => latency[`${era} ${t}`].median - direct,
      );
      return {
        era,
        directMedianMs: direct,
        passthroughAddedMs,
        coldAddedMs,
        warmAddedMs,
        warmVsCold: latency[`${era} gateway warm`].median / latency[`${era} gateway cold`].median,
      };
    });
    console.error("[bench:lists] upstream requests");
    const lists = await upstreamLoad(
      setup.origin,
      setup.targets.filter((t) => t.via !== "direct"),
      options.lists,
      options.concurrency,
    );
    const searches =
      options.searches > 0
        ? await upstreamLoad(setup.origin, setup.searches, options.searches, options.concurrency)
        : [];
    const result = {
      startedAt: new Date(started).toISOString(),
      durationSeconds: (Date.now() - started) / 1000,
      machine: { cpus: os.cpus().length, node: process.version, loadAvgAtStart, loadAvgAtEnd: loadAvg() },
      settings: {
        iterations: options.iterations,
        warmup: options.warmup,
        lists: options.lists,
        searches: options.searches,
        concurrency: options.concurrency,
        tools: options.tools,
        heldMs: HELD_MS,
      },
      gateway: setup.gateway,
      latency,
      added,
      lists,
      searches,
    };
    console.log(render(result));
    saveResult(options.out, "lists", result, result.startedAt);
  });
}

await main().catch((error) => {
  console.error(`[bench:lists] failed: ${error instanceof Error ? error.stack : String(error)}`);
  process.exitCode = 1;
});
