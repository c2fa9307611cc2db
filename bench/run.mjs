#!/usr/bin/env node
/**
 * `npm run bench:relay` (and the first half of `npm run bench`): what relaying a small
 * tools/call through the gateway costs, compared with calling the upstream directly and
 * with the cheapest possible Worker relay.
 *
 * It starts the upstream(s) in child processes (raw: test/fixtures/raw-upstream.ts, the
 * cheapest; beta: the stateless SDK server), the gateway (`npm start`, i.e. wrangler dev,
 * via scripts/lib/gateway-process.mjs, run in a copy of the working tree taken at start,
 * lib/snapshot.ts, so edits meanwhile do not reload it) and one pass-through Worker per upstream
 * (bench/passthrough/, also wrangler dev), all on 127.0.0.1, and sends the same
 * tools/call to every target: direct, pass-through, gateway /mcp/<name>, gateway /mcp.
 *
 *   1. latency: calls one at a time, interleaved round-robin (every round calls each
 *      target once, starting at the next one) after a warm-up; median, p90, p99;
 *   2. throughput: a fixed number of calls per target with several in flight (req/s);
 *   3. bursts: --burst calls sent to one target at once (all in flight together), a few
 *      rounds per relay target (direct is not burst: it is not a relay); p99 of each call's
 *      time from the burst's start, the gateway's beside its pass-through's;
 *   4. CPU: batches of calls to one target alone, reading the CPU time of each thread of
 *      that target's wrangler dev processes (lib/cpu.ts) and of the upstream before and
 *      after; the gateway's added CPU round by round as well as in all. Then call by call:
 *      the relays take turns one call at a time and each call's CPU on the runtime's main
 *      thread is kept, for medians that a collection in a few calls does not move.
 *
 *   npm run bench:relay
 *   npm run bench:relay -- --upstreams raw --iterations 1000 --cpu-calls 2000
 *   BENCH_ITERATIONS=1000 npm run bench:relay
 *   npm run bench:relay -- --gateway-dir ../other-checkout   # the gateway of another tree
 *   npm run bench:relay -- --baseline-dir ../before          # another tree's gateway beside this one's, in the same run
 *
 * Options (flag, or env var): --upstreams raw,beta (BENCH_UPSTREAMS), --iterations 200
 * measured rounds (BENCH_ITERATIONS), --warmup 30 rounds (BENCH_WARMUP), --requests 200
 * calls per target in the throughput phase (BENCH_REQUESTS), --concurrency 8 in flight
 * (BENCH_CONCURRENCY), --cpu-calls 300 calls per target in the CPU phase
 * (BENCH_CPU_CALLS), in --cpu-rounds 10 (BENCH_CPU_ROUNDS), --cpu-call-by-call 1000 calls per relay
 * in the call-by-call CPU phase (BENCH_CPU_CALL_BY_CALL; 0 skips it), --burst 1000 calls in flight at once (BENCH_BURST), --burst-rounds 3
 * (BENCH_BURST_ROUNDS), --gateway-dir . (BENCH_GATEWAY_DIR: the git working tree whose gateway
 * is measured, e.g. another worktree, for A/B comparisons), --baseline-dir '' (BENCH_BASELINE_DIR: a second tree
 * whose gateway runs beside the first as the "baseline" targets, every phase alternating between them,
 * for before/after pairs measured under the same load), --gateway-vars '{}'
 * (BENCH_GATEWAY_VARS: more vars for the gateway, e.g. '{"AUDIT":{"enabled":false}}'), --baseline-vars '{}'
 * (BENCH_BASELINE_VARS: vars for the baseline only, over --gateway-vars; with --baseline-dir . the
 * same tree with another setting, e.g. audit on beside audit off in one run), --baseline-queue-consumer on
 * (BENCH_BASELINE_QUEUE_CONSUMER: off runs the baseline without its wrangler.toml's Queue consumers, so
 * that the audit consumer's work, another invocation's in production, is not on its runtime's
 * thread: --baseline-dir . --baseline-queue-consumer off gives the consumer's share), --out bench/results
 * (BENCH_OUT). Results are printed and written to <out>/relay-<timestamp>.json.
 * About a minute on an idle 2-core machine. Linux only (/proc). Hard limit: 10 minutes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { addCpu, readCpu, relayProcesses, ZERO_CPU } from "./lib/cpu.ts";
import { oneThreadMicros } from "./lib/proc.ts";
import { burstLatency, concurrentCalls, interleavedLatency, sequentialCalls } from "./lib/load.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { snapshotTree, withoutQueueConsumers } from "./lib/snapshot.ts";
import { section, table, saveResult } from "./lib/report.ts";
import { percentile, summarize } from "./lib/stats.ts";
import { openTarget } from "./lib/target.ts";
import { isUpstreamKind } from "./lib/upstream-server.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 10 * 60_000;
/** Issue 18's goals: added median latency, and p99 under a burst, as multiples of the pass-through's. */
const TARGET_RATIO = 1.1;
const TARGET_BURST_P99_RATIO = 1.2;
/** Issue 18's goal for the CPU the gateway adds to a small call, ms. */
const TARGET_CPU_MS = 0.3;
/** The small tools/call each upstream answers. */
const CALLS = {
  raw: { tool: "trap", args: { n: 1 } },
  beta: { tool: "echo", args: { text: "hello" } },
};

// ---- options ------------------------------------------------------------------------

const OPTIONS = {
  upstreams: ["BENCH_UPSTREAMS", "raw,beta"],
  iterations: ["BENCH_ITERATIONS", "200"],
  warmup: ["BENCH_WARMUP", "30"],
  requests: ["BENCH_REQUESTS", "200"],
  concurrency: ["BENCH_CONCURRENCY", "8"],
  "cpu-calls": ["BENCH_CPU_CALLS", "300"],
  "cpu-rounds": ["BENCH_CPU_ROUNDS", "10"],
  "cpu-call-by-call": ["BENCH_CPU_CALL_BY_CALL", "1000"],
  burst: ["BENCH_BURST", "1000"],
  "burst-rounds": ["BENCH_BURST_ROUNDS", "3"],
  "gateway-dir": ["BENCH_GATEWAY_DIR", ROOT],
  "baseline-dir": ["BENCH_BASELINE_DIR", ""],
  "gateway-vars": ["BENCH_GATEWAY_VARS", "{}"],
  "baseline-vars": ["BENCH_BASELINE_VARS", "{}"],
  "baseline-queue-consumer": ["BENCH_BASELINE_QUEUE_CONSUMER", "on"],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};

function parseOptions(argv) {
  const raw = Object.fromEntries(
    Object.entries(OPTIONS).map(([key, [env, fallback]]) => [key, process.env[env] || fallback]),
  );
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    if (flag === "--help" || flag === "-h") usage();
    const key = flag.replace(/^--/, "");
    if (!flag.startsWith("--") || !(key in OPTIONS)) usage(`unknown option ${argv[i]}`);
    raw[key] = inline ?? argv[++i];
    if (raw[key] === undefined) usage(`${flag} needs a value`);
  }
  const count = (key, min) => {
    const n = Number(raw[key]);
    if (!Number.isInteger(n) || n < min) usage(`--${key} must be an integer >= ${min}, got "${raw[key]}"`);
    return n;
  };
  const jsonObject = (key) => {
    try {
      const value = JSON.parse(raw[key]);
      if (value && typeof value === "object" && !Array.isArray(value)) return value;
    } catch {
      // reported below
    }
    return usage(`--${key} must be a JSON object, got "${raw[key]}"`);
  };
  const onOff = (key) =>
    raw[key] === "on" ? true : raw[key] === "off" ? false : usage(`--${key} must be on or off, got "${raw[key]}"`);
  const upstreams = [
    ...new Set(
      raw.upstreams
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (upstreams.length === 0 || !upstreams.every((u) => isUpstreamKind(u) && u in CALLS))
    usage(`--upstreams must list raw and/or beta, got "${raw.upstreams}"`);
  if (count("cpu-calls", 1) < count("cpu-rounds", 1))
    usage(`--cpu-calls (${raw["cpu-calls"]}) must be at least --cpu-rounds (${raw["cpu-rounds"]})`);
  return {
    upstreams,
    iterations: count("iterations", 1),
    warmup: count("warmup", 0),
    requests: count("requests", 1),
    concurrency: count("concurrency", 1),
    cpuRounds: count("cpu-rounds", 1),
    cpuCalls: count("cpu-calls", 1),
    cpuCallByCall: count("cpu-call-by-call", 0),
    burst: count("burst", 1),
    burstRounds: count("burst-rounds", 1),
    gatewayDir: path.resolve(raw["gateway-dir"]),
    baselineDir: raw["baseline-dir"] ? path.resolve(raw["baseline-dir"]) : undefined,
    gatewayVars: jsonObject("gateway-vars"),
    baselineVars: jsonObject("baseline-vars"),
    baselineQueueConsumer: onOff("baseline-queue-consumer"),
    out: path.resolve(raw.out),
  };
}

function usage(problem) {
  if (problem) console.error(`[bench] ${problem}`);
  console.error(
    `usage: npm run bench:relay -- ${Object.keys(OPTIONS)
      .map((k) => `[--${k} ${OPTIONS[k][1].includes("/") ? "DIR" : OPTIONS[k][1]}]`)
      .join(" ")}`,
  );
  process.exit(problem ? 2 : 0);
}

// ---- setup: processes and targets -----------------------------------------------------

/** `start()`, once more when a port it picked was taken meanwhile (another wrangler dev on this machine). */
async function withPortRetry(start) {
  try {
    return await start();
  } catch (error) {
    if (!String(error).includes("Address already in use")) throw error;
    console.error("[bench] a port was taken meanwhile; starting again");
    return start();
  }
}

/** Starts everything; `stops` collects what to stop, even when a later start fails. */
async function startAll(options, stops) {
  const upstreams = await Promise.all(
    options.upstreams.map(async (kind) => {
      const upstream = await startUpstream(kind);
      stops.push(upstream.stop);
      return upstream;
    }),
  );
  const vars = {
    ...options.gatewayVars,
    UPSTREAMS: upstreams.map((u) => ({ name: u.kind, url: u.url })),
    SESSION_SECRET: randomBytes(32).toString("hex"),
  };
  // One wrangler dev at a time: concurrent starts race for the internal ports each picks.
  const gateway = await startGatewayOf(options.gatewayDir, vars, stops);
  const baseline =
    options.baselineDir === undefined
      ? undefined
      : await startGatewayOf(
          options.baselineDir,
          { ...vars, ...options.baselineVars },
          stops,
          options.baselineQueueConsumer,
        );
  const passthroughs = [];
  for (const u of upstreams) {
    const passthrough = await withPortRetry(async () => startPassthrough(await freePort(), u.url));
    stops.push(passthrough.stop);
    passthroughs.push(passthrough);
  }
  return { upstreams, gateway, baseline, passthroughs };
}

/**
 * The gateway of the git working tree `dir`, from a snapshot of it, with its own state
 * directory; without `queueConsumer`, the snapshot's wrangler.toml consumes no Queue (the
 * audit events pile up in the local Queue), which leaves out the consumer's work on the
 * runtime's thread: in production it is another invocation's.
 */
async function startGatewayOf(dir, vars, stops, queueConsumer = true) {
  const state = mkdtempSync(path.join(os.tmpdir(), "bench-gateway-"));
  stops.push(async () => rmSync(state, { recursive: true, force: true }));
  const snapshot = snapshotTree(dir);
  stops.push(async () => snapshot.remove());
  if (!queueConsumer) withoutQueueConsumers(snapshot.dir);
  const gateway = await withPortRetry(async () =>
    startGateway({ port: await freePort(), vars, persistTo: state, cwd: snapshot.dir }),
  );
  stops.push(gateway.stop);
  return {
    ...gateway,
    source: { dir: snapshot.source, commit: snapshot.commit, changes: snapshot.changes, queueConsumer },
  };
}

/** The four targets of each upstream, sessions opened; `relay` says whose processes a call runs through. */
async function openTargets({ upstreams, gateway, baseline, passthroughs }) {
  const specs = upstreams.flatMap((u, i) => {
    const { tool, args } = CALLS[u.kind];
    const pass = passthroughs[i];
    const routes = (label, g) => [
      {
        name: `${u.kind} ${label} /mcp/${u.kind}`,
        via: "gateway",
        url: `${g.url}/mcp/${u.kind}`,
        tool,
        relay: { root: g.pid, port: g.port },
        gatewayLabel: label,
      },
      {
        name: `${u.kind} ${label} /mcp`,
        via: "gateway-aggregated",
        url: `${g.url}/mcp`,
        tool: `${u.kind}___${tool}`,
        relay: { root: g.pid, port: g.port },
        gatewayLabel: label,
      },
    ];
    return [
      { name: `${u.kind} direct`, via: "direct", url: u.url, tool },
      {
        name: `${u.kind} pass-through`,
        via: "passthrough",
        url: `${pass.url}/`,
        tool,
        relay: { root: pass.pid, port: Number(new URL(pass.url).port) },
      },
      ...routes("gateway", gateway),
      ...(baseline ? routes("baseline", baseline) : []),
    ].map((spec) => ({ ...spec, upstream: u.kind, args, upstreamPid: u.pid }));
  });
  return Promise.all(
    specs.map(async ({ relay, upstreamPid, ...spec }) => ({ ...(await openTarget(spec)), relay, upstreamPid })),
  );
}

// ---- phases ----------------------------------------------------------------------------

/** Throughput in two rounds (the second in reverse order) so drift hits all targets alike. */
async function throughputPhase(targets, options) {
  const totals = new Map(targets.map((t) => [t.name, { requests: 0, seconds: 0 }]));
  for (const order of [targets, [...targets].reverse()]) {
    for (const target of order) {
      const total = totals.get(target.name);
      const requests = Math.min(Math.ceil(options.requests / 2), options.requests - total.requests);
      if (requests === 0) continue;
      const run = await concurrentCalls(target, requests, options.concurrency);
      total.requests += run.requests;
      total.seconds += run.seconds;
    }
  }
  return Object.fromEntries(
    [...totals].map(([name, t]) => [name, { ...t, inFlight: options.concurrency, perSecond: t.requests / t.seconds }]),
  );
}

/**
 * Tail latency under bursts: each relay target alone, `burst` calls at once, in rounds
 * that alternate the targets' order (drift hits all alike); p99 per target, and the
 * gateway's as a multiple of its pass-through's.
 */
async function burstPhase(targets, options) {
  const relays = targets.filter((t) => t.relay);
  const samples = new Map(relays.map((t) => [t.name, []]));
  const failures = new Map(relays.map((t) => [t.name, { failed: 0, first: undefined }]));
  for (let round = 0; round < options.burstRounds; round++) {
    for (const target of round % 2 === 0 ? relays : [...relays].reverse()) {
      const burst = await burstLatency(target, options.burst);
      samples.get(target.name).push(...burst.samples);
      const failure = failures.get(target.name);
      failure.failed += burst.failed;
      failure.first ??= burst.firstFailure;
    }
  }
  const latency = Object.fromEntries([...samples].map(([name, s]) => [name, summarize(s)]));
  const ratios = relays
    .filter((t) => t.via !== "passthrough")
    .map((t) => ({
      target: t.name,
      p99Ratio: latency[t.name].p99 / latency[`${t.upstream} pass-through`].p99,
      medianRatio: latency[t.name].median / latency[`${t.upstream} pass-through`].median,
    }));
  return { latency, ratios, failures: Object.fromEntries(failures) };
}

/**
 * The isolate's CPU call by call: the relay targets take turns one call at a time (the
 * order rotating), and the main thread of each one's runtime is read before each call it
 * serves, so a call is charged from its start to the start of the next call its runtime
 * serves (its work after the answer included; other runtimes' calls run meanwhile).
 * The median of those per-call figures is not moved by the collections and background
 * work that land in a few calls, which made the batch totals of two gateways with the same
 * code differ by up to 0.3 ms in one run; the mean counts them.
 */
async function callByCallPhase(targets, options) {
  const relays = targets.filter((t) => t.relay);
  const threads = new Map(relays.map((t) => [t.name, relayProcesses(t.relay).runtime[0]]));
  for (const [name, pid] of threads) {
    if (Number.isNaN(oneThreadMicros(pid)))
      throw new Error(
        `${name}: no per-thread CPU time in /proc/${pid}/task/${pid}/sched on this kernel; run with --cpu-call-by-call 0`,
      );
  }
  const samples = new Map(relays.map((t) => [t.name, []]));
  // Per runtime (the gateway's routes share one): its reading before its last call, and whose call that was.
  const last = new Map();
  const charge = (pid, until) => {
    const before = last.get(pid);
    if (Number.isNaN(until))
      throw new Error(`${before?.target ?? pid}: its runtime ended during the call-by-call CPU phase`);
    if (before) samples.get(before.target).push((until - before.micros) / 1000);
  };
  for (let i = 0; i < options.cpuCallByCall; i++) {
    for (let k = 0; k < relays.length; k++) {
      const target = relays[(i + k) % relays.length];
      const pid = threads.get(target.name);
      const now = oneThreadMicros(pid);
      charge(pid, now);
      last.set(pid, { micros: now, target: target.name });
      await target.call();
    }
  }
  for (const pid of last.keys()) charge(pid, oneThreadMicros(pid));
  // A runtime's work between calls (an audit send on its timer, a collection) is charged to
  // whichever of its routes' calls it falls in, and the rotation puts the longer gaps after
  // one route's calls: a gateway's two routes are also given together, by their mean only
  // (the two routes' calls pooled have two clusters, and their median sits at the edge of
  // the dearer one's, not at what a call costs).
  const rows = relays.map((t) => ({
    name: t.name,
    upstream: t.upstream,
    via: t.via,
    ms: samples.get(t.name),
    percentiles: true,
  }));
  for (const t of relays.filter((r) => r.gatewayLabel && r.via === "gateway")) {
    const routes = relays
      .filter((r) => r.upstream === t.upstream && r.gatewayLabel === t.gatewayLabel)
      .flatMap((r) => samples.get(r.name));
    rows.push({
      name: `${t.upstream} ${t.gatewayLabel} (both routes)`,
      upstream: t.upstream,
      via: "both",
      ms: routes,
      percentiles: false,
    });
  }
  const figures = Object.fromEntries(
    rows.map(({ name, ms, percentiles }) => {
      const sorted = [...ms].sort((a, b) => a - b);
      const at = (p) => (percentiles ? percentile(sorted, p) : NaN);
      return [
        name,
        {
          calls: ms.length,
          median: at(50),
          p25: at(25),
          p75: at(75),
          p90: at(90),
          mean: ms.reduce((a, b) => a + b, 0) / ms.length,
        },
      ];
    }),
  );
  const added = rows
    .filter((row) => row.via !== "passthrough")
    .map((row) => {
      const floor = figures[`${row.upstream} pass-through`];
      return {
        target: row.name,
        medianMs: figures[row.name].median - floor.median,
        meanMs: figures[row.name].mean - floor.mean,
      };
    });
  return { targets: figures, added };
}

/**
 * CPU per call: each target alone, in rounds (alternately reversed) so drift hits all
 * targets alike. A relay target is charged the CPU time of its wrangler dev tree by role
 * (lib/cpu.ts); every target also shows the upstream's. Each round's figures are kept, so
 * the gateway's added CPU is also given round by round (its median and quartiles): one
 * burst of background work in one round moves the totals, not the median.
 */
async function cpuPhase(targets, options) {
  const rows = new Map(targets.map((t) => [t.name, { calls: 0, cpu: ZERO_CPU, rounds: [] }]));
  for (let round = 0; round < options.cpuRounds; round++) {
    for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
      const row = rows.get(target.name);
      const calls = Math.min(Math.ceil(options.cpuCalls / options.cpuRounds), options.cpuCalls - row.calls);
      if (calls === 0) continue;
      const before = readCpu(target.relay && relayProcesses(target.relay), target.upstreamPid);
      await sequentialCalls(target, calls);
      const used = addCpu(ZERO_CPU, before, readCpu(before.roles, target.upstreamPid));
      row.cpu = Object.fromEntries(Object.entries(row.cpu).map(([role, micros]) => [role, micros + used[role]]));
      row.rounds.push({ calls, cpu: used });
      row.calls += calls;
    }
  }
  return Object.fromEntries(
    targets.map((t) => {
      const { calls, cpu, rounds } = rows.get(t.name);
      return [
        t.name,
        {
          calls,
          micros: cpu,
          relayMsPerCall: t.relay ? relayMs(cpu, calls) : null,
          upstreamMsPerCall: cpu.upstream / 1000 / calls,
          rounds: t.relay ? rounds.map((r) => relayMs(r.cpu, r.calls)) : [],
        },
      ];
    }),
  );
}

/** A relay's CPU per call, in ms, by role (from microseconds over `calls`). */
function relayMs(cpu, calls) {
  const ms = (micros) => micros / 1000 / calls;
  return {
    workerd: ms(cpu.proxy + cpu.runtime),
    proxy: ms(cpu.proxy),
    runtime: ms(cpu.runtime),
    isolate: ms(cpu.isolate),
    wrangler: ms(cpu.wrangler),
  };
}

/** CPU (ms) each relay's workerd processes use in one second without traffic (their background). */
async function idleWorkerdMs(targets) {
  const relays = new Map(targets.filter((t) => t.relay).map((t) => [t.relay.root, t]));
  const before = [...relays.values()].map((t) => readCpu(relayProcesses(t.relay), t.upstreamPid));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return Object.fromEntries(
    [...relays.values()].map((t, i) => {
      const used = addCpu(ZERO_CPU, before[i], readCpu(before[i].roles, t.upstreamPid));
      return [
        t.via === "passthrough" ? t.name : t.gatewayLabel,
        Number(((used.proxy + used.runtime) / 1000).toFixed(2)),
      ];
    }),
  );
}

// ---- results ----------------------------------------------------------------------------

function addedLatency(upstreams, latency, labels) {
  return upstreams.flatMap((u) => {
    const direct = latency[`${u.kind} direct`].median;
    const added = (name) => latency[`${u.kind} ${name}`].median - direct;
    const passthrough = added("pass-through");
    return labels.map((label) => {
      const gateway = added(`${label} /mcp/${u.kind}`);
      const aggregated = added(`${label} /mcp`);
      return {
        upstream: u.kind,
        gatewayLabel: label,
        directMedianMs: direct,
        passthroughAddedMs: passthrough,
        gatewayAddedMs: gateway,
        gatewayAggregatedAddedMs: aggregated,
        ratio: gateway / passthrough,
        ratioAggregated: aggregated / passthrough,
      };
    });
  });
}

function cpuAdded(targets, cpu) {
  return targets
    .filter((t) => t.via === "gateway" || t.via === "gateway-aggregated")
    .map((t) => {
      const gateway = cpu[t.name];
      const floor = cpu[`${t.upstream} pass-through`];
      // Round by round: the gateway's round against the pass-through's of the same round.
      const perRound = (role) => gateway.rounds.map((g, i) => g[role] - floor.rounds[i][role]).sort((a, b) => a - b);
      const spread = (role) => {
        const sorted = perRound(role);
        return { median: percentile(sorted, 50), p25: percentile(sorted, 25), p75: percentile(sorted, 75) };
      };
      const g = gateway.relayMsPerCall;
      const f = floor.relayMsPerCall;
      return {
        target: t.name,
        workerdMs: g.workerd - f.workerd,
        runtimeMs: g.runtime - f.runtime,
        isolateMs: g.isolate - f.isolate,
        proxyMs: g.proxy - f.proxy,
        ratio: g.workerd / f.workerd,
        rounds: { workerd: spread("workerd"), isolate: spread("isolate") },
      };
    });
}

function render(result) {
  const { settings, machine } = result;
  const verdict = (ratio) => `${ratio.toFixed(2)}${ratio <= TARGET_RATIO ? "" : `  (over the ${TARGET_RATIO} target)`}`;
  const fixed = (x) => (Number.isNaN(x) ? "-" : x.toFixed(3));
  // Rounds of ceil(calls / rounds) calls: fewer rounds than asked when that runs out first.
  const cpuRoundsRun = Math.ceil(settings.cpuCalls / Math.ceil(settings.cpuCalls / settings.cpuRounds));
  const cpuVerdict = (ms) =>
    `${fixed(ms)}${Number.isNaN(ms) || ms <= TARGET_CPU_MS ? "" : `  (over the ${TARGET_CPU_MS} target)`}`;
  return [
    `mcp-edge-gateway relay benchmark, ${result.startedAt} (${result.durationSeconds.toFixed(0)} s)`,
    `machine: ${machine.cpus} cores (${machine.model}), ${machine.platform}, node ${machine.node}; load average ${machine.loadAvgAtStart.join(" ")} at start, ${machine.loadAvgAtEnd.join(" ")} at end`,
    ...(machine.busy
      ? [
          `WARNING: the machine was busy (1-min load average above half the cores): other work competed for the CPU, so latencies and throughput are noisy; compare within this run only.`,
        ]
      : []),
    `call: a small tools/call (${settings.upstreams.map((u) => `${u}: ${CALLS[u].tool}`).join(", ")}) from node fetch on this machine; everything on 127.0.0.1; the relays run under wrangler dev.`,
    ...Object.entries({ gateway: result.gateway, baseline: result.baseline })
      .filter(([, g]) => g)
      .map(
        ([label, g]) =>
          `${label}: a copy of ${g.dir} taken at start (commit ${g.commit.slice(0, 12)}${g.changes.length > 0 ? `, ${g.changes.length} changed/untracked files` : ""})${g.queueConsumer ? "" : ", its wrangler.toml without Queue consumers (audit events are sent, not consumed)"}`,
      ),
    "",
    section(
      `Latency, ms: one call at a time, ${settings.iterations} interleaved rounds after ${settings.warmup} warm-up rounds`,
      table(
        ["target", "median", "p90", "p99", "min", "n"],
        Object.entries(result.latency).map(([name, s]) => [name, s.median, s.p90, s.p99, s.min, s.n]),
      ),
    ),
    section(
      `Added median latency, ms (target - direct), and as a multiple of the pass-through's (target <= ${TARGET_RATIO})`,
      table(
        ["relay", "added ms", "x pass-through"],
        result.added.flatMap((a, i) => [
          ...(i > 0 && result.added[i - 1].upstream === a.upstream
            ? []
            : [[`${a.upstream} pass-through`, a.passthroughAddedMs, "1 (the floor)"]]),
          [`${a.upstream} ${a.gatewayLabel} /mcp/${a.upstream}`, a.gatewayAddedMs, verdict(a.ratio)],
          [`${a.upstream} ${a.gatewayLabel} /mcp`, a.gatewayAggregatedAddedMs, verdict(a.ratioAggregated)],
        ]),
      ),
    ),
    section(
      `Throughput: ${settings.requests} calls per target, ${settings.concurrency} in flight`,
      table(
        ["target", "req/s", "calls", "seconds"],
        Object.entries(result.throughput).map(([name, t]) => [name, t.perSecond, t.requests, t.seconds]),
      ),
    ),
    section(
      `Bursts, ms: ${settings.burst} calls sent at once to one target, ${settings.burstRounds} rounds; each answered call's time from the burst's start`,
      table(
        ["target", "median", "p90", "p99", "answered", "failed"],
        Object.entries(result.burst.latency).map(([name, s]) => [
          name,
          s.median,
          s.p90,
          s.p99,
          s.n,
          result.burst.failures[name].failed,
        ]),
      ),
    ),
    ...Object.entries(result.burst.failures)
      .filter(([, f]) => f.failed > 0)
      .map(([name, f]) => `burst failures of ${name}: ${f.failed}, the first: ${f.first}`),
    section(
      `p99 under a burst as a multiple of the pass-through's (target <= ${TARGET_BURST_P99_RATIO})`,
      // Over answered calls only: a relay whose slow calls failed would look faster, so its failures are named here too.
      table(
        ["gateway route", "x pass-through p99", "x pass-through median"],
        result.burst.ratios.map((r) => {
          const failed = result.burst.failures[r.target].failed;
          const verdict =
            failed > 0
              ? `  (${failed} failed: not comparable)`
              : r.p99Ratio <= TARGET_BURST_P99_RATIO
                ? ""
                : `  (over the ${TARGET_BURST_P99_RATIO} target)`;
          return [r.target, `${r.p99Ratio.toFixed(2)}${verdict}`, r.medianRatio.toFixed(2)];
        }),
      ),
    ),
    section(
      `CPU per call, ms: ${settings.cpuCalls} calls per target in ${cpuRoundsRun} rounds, one at a time, that target alone (the scheduler's per-thread run time).\n` +
        `workerd = both workerd processes of the relay's wrangler dev: its dev proxy + the runtime running the Worker (whole runtime: HTTP parsing, fetch, JS, local KV; not only our code).\n` +
        `isolate = the runtime's main thread (the Workers' JavaScript and I/O; not V8's background threads). wrangler = wrangler's node and esbuild (request logging). upstream = the upstream process.`,
      table(
        ["target", "workerd", "dev proxy", "runtime", "isolate", "wrangler", "upstream", "calls"],
        Object.entries(result.cpu.targets).map(([name, c]) => {
          const r = c.relayMsPerCall;
          return [
            name,
            r ? fixed(r.workerd) : "-",
            r ? fixed(r.proxy) : "-",
            r ? fixed(r.runtime) : "-",
            r ? fixed(r.isolate) : "-",
            r ? fixed(r.wrangler) : "-",
            fixed(c.upstreamMsPerCall),
            c.calls,
          ];
        }),
      ),
    ),
    section(
      `CPU the gateway adds over the pass-through, ms per call (gateway - pass-through, same upstream; target <= ${TARGET_CPU_MS}). ` +
        `All rounds together, and round by round: the median [quartiles] of the ${cpuRoundsRun} rounds' differences`,
      table(
        [
          "gateway route",
          "workerd",
          "of which runtime",
          "of which isolate",
          "x pass-through",
          "workerd by round",
          "isolate by round",
        ],
        result.cpu.gatewayMinusPassthrough.map((d) => {
          const byRound = (s) => `${fixed(s.median)} [${fixed(s.p25)}, ${fixed(s.p75)}]`;
          return [
            d.target,
            fixed(d.workerdMs),
            fixed(d.runtimeMs),
            fixed(d.isolateMs),
            d.ratio.toFixed(2),
            byRound(d.rounds.workerd),
            byRound(d.rounds.isolate),
          ];
        }),
      ),
    ),
    ...(result.cpu.callByCall
      ? [
          section(
            `The isolate's CPU call by call, ms: ${settings.cpuCallByCall} calls per relay, the relays taking turns one call at a time; each call from its start to the next call its runtime serves (the runtime's main thread). ` +
              `A gateway's two routes together: their mean only (its runtime's work between calls falls in either route's calls)`,
            table(
              ["target", "median", "p25", "p75", "p90", "mean", "calls"],
              Object.entries(result.cpu.callByCall.targets).map(([name, c]) => [
                name,
                fixed(c.median),
                fixed(c.p25),
                fixed(c.p75),
                fixed(c.p90),
                fixed(c.mean),
                c.calls,
              ]),
            ),
          ),
          section(
            `The isolate's CPU the gateway adds over the pass-through, call by call, ms (target <= ${TARGET_CPU_MS}). The mean is the CPU a call costs; ` +
              `under wrangler dev it includes the local Queue that receives the audit trail's sendBatch, which runs on the same thread (docs/benchmarks.md)`,
            table(
              ["gateway route", "median - median", "mean - mean"],
              result.cpu.callByCall.added.map((a) => [a.target, cpuVerdict(a.medianMs), cpuVerdict(a.meanMs)]),
            ),
          ),
        ]
      : []),
    `workerd background, ms of CPU in 1 s without traffic: ${Object.entries(result.cpu.idleMsPerSecond)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  ].join("\n");
}

// ---- main --------------------------------------------------------------------------------

async function main() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 22 || (major === 22 && minor < 18)) {
    console.error(
      `[bench] needs Node >= 22.18 (for the .ts helpers, and wrangler); this is ${process.version}. Use \`npm run bench\` or node_modules/.bin/node.`,
    );
    process.exit(1);
  }
  if (process.platform !== "linux") {
    console.error("[bench] needs Linux: CPU time is read from /proc.");
    process.exit(1);
  }
  const options = parseOptions(process.argv.slice(2));
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false"; // no download of the Request.cf placeholder: stay on loopback
  const stops = [];
  let stopped;
  // Last started, first stopped, one at a time: a directory goes only after the process using it.
  const stopAll = () =>
    (stopped ??= (async () => {
      for (const stop of stops.reverse())
        await stop().catch((error) => console.error(`[bench] while stopping: ${error}`));
    })());
  const abort = (why, code) => {
    console.error(`[bench] ${why}; stopping everything`);
    void stopAll().then(() => process.exit(code));
  };
  process.once("SIGINT", () => abort("interrupted", 130));
  process.once("SIGTERM", () => abort("terminated", 143));
  const limit = setTimeout(() => abort(`still running after ${HARD_LIMIT_MS / 60_000} minutes`, 1), HARD_LIMIT_MS);
  limit.unref();

  const started = Date.now();
  const loadAvg = () => os.loadavg().map((x) => Number(x.toFixed(2)));
  const loadAvgAtStart = loadAvg();
  const progress = (text) =>
    console.error(`[bench] ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s: ${text}`);
  try {
    progress(`starting upstream(s) ${options.upstreams.join(", ")}, the gateway and the pass-through(s)`);
    const setup = await startAll(options, stops);
    const targets = await openTargets(setup);
    progress(`${targets.length} targets ready; latency phase`);
    const samples = await interleavedLatency(targets, options.iterations, options.warmup);
    const latency = Object.fromEntries([...samples].map(([name, s]) => [name, summarize(s)]));
    progress("throughput phase");
    const throughput = await throughputPhase(targets, options);
    progress(`burst phase (${options.burst} at once)`);
    const burst = await burstPhase(targets, options);
    progress("CPU phase");
    const idleMsPerSecond = await idleWorkerdMs(targets);
    const cpuTargets = await cpuPhase(targets, options);
    progress(`CPU call by call (${options.cpuCallByCall} calls per relay)`);
    const callByCall = options.cpuCallByCall > 0 ? await callByCallPhase(targets, options) : null;

    const cpus = os.cpus();
    const loadAvgAtEnd = loadAvg();
    const result = {
      startedAt: new Date(started).toISOString(),
      durationSeconds: (Date.now() - started) / 1000,
      machine: {
        cpus: cpus.length,
        model: cpus[0]?.model ?? "unknown",
        platform: `${os.type()} ${os.release()} ${os.arch()}`,
        node: process.version,
        loadAvgAtStart,
        loadAvgAtEnd,
        busy: Math.max(loadAvgAtStart[0], loadAvgAtEnd[0]) > cpus.length / 2,
      },
      settings: { ...options, calls: CALLS },
      gateway: setup.gateway.source,
      baseline: setup.baseline?.source ?? null,
      targets: targets.map((t) => ({ name: t.name, upstream: t.upstream, via: t.via, url: t.url, tool: t.tool })),
      latency,
      added: addedLatency(setup.upstreams, latency, setup.baseline ? ["gateway", "baseline"] : ["gateway"]),
      throughput,
      burst,
      cpu: {
        note: "ms per call; workerd = whole-runtime CPU of the relay (dev proxy + Worker runtime), not only its JavaScript",
        idleMsPerSecond,
        targets: cpuTargets,
        gatewayMinusPassthrough: cpuAdded(targets, cpuTargets),
        callByCall,
      },
    };
    console.log(render(result));
    saveResult(options.out, "relay", result, result.startedAt);
  } finally {
    clearTimeout(limit);
    await stopAll();
  }
}

await main().catch((error) => {
  console.error(`[bench] failed: ${error instanceof Error ? error.stack : String(error)}`);
  process.exitCode = 1;
});
