#!/usr/bin/env node
/**
 * `npm run bench:large` (part of `npm run bench`), issue 38: large results at the runtime's
 * pace, and memory that comes back after traffic. The gateway (`npm start`, i.e. wrangler
 * dev, from a copy of the tree, lib/snapshot.ts) beside the forwarding Worker
 * (bench/passthrough/, the same wrangler dev), both on the raw upstream, offload off for it
 * (`OFFLOAD.exclude: ["raw___*"]`: the result goes to the client), in one run:
 *
 *   1. relay time of the `huge` tool's 1 MiB and 10 MiB results, as JSON and as SSE answers:
 *      each round calls every (size, format) once through each relay, the relays' order
 *      alternating round by round; the time is the call's, its whole body read as bytes;
 *   2. calls per second of small calls at --concurrency clients, in blocks that alternate
 *      between the relays (gateway, forwarding, forwarding, gateway, ...);
 *   3. the isolate's JavaScript heap in use after forced collections (the inspector's
 *      HeapProfiler.collectGarbage, then Runtime.getHeapUsage), after a warm-up and again
 *      after --mixed-calls mixed calls: --concurrency clients; small calls on /mcp/raw and
 *      on /mcp, tools/list, a 1 MiB result every 50th call (JSON and SSE), a new session
 *      every 250th. `--heap-snapshots DIR` also writes the gateway's heap snapshots before
 *      and after (open them in DevTools' Memory tab, "Comparison").
 *
 *   npm run bench:large
 *   npm run bench:large -- --rounds 10 --mixed-calls 10000 --concurrency 32
 *   npm run bench:large -- --baseline-dir ../before   # another tree's gateway beside this one's
 *
 * Options: --rounds 12 (BENCH_LARGE_ROUNDS, measured rounds after 2 warm-up rounds),
 * --mixed-calls 10000, --concurrency 32, --throughput-calls 4000 (per relay, in 4 blocks),
 * --gateway-dir ., --baseline-dir '' (its heap is not measured), --heap-snapshots '', --out bench/results,
 * --hard-limit-minutes 15. Loopback only; a few minutes on an idle machine.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { heapAfterGc, heapSnapshot, inspect } from "./lib/inspector.ts";
import { gatewayMemory } from "./lib/memory.ts";
import { withProcesses } from "./lib/lifecycle.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { saveResult, section, table } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";
import { summarize } from "./lib/stats.ts";
import { PROTOCOL_VERSION } from "./lib/target.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** How long a run may take by default (--hard-limit-minutes): 10,000 mixed calls take minutes on a loaded machine. */
const HARD_LIMIT_MINUTES = "15";
const MIB = 1024 * 1024;
/** Issue 38's goals. */
const TARGET_RELAY_RATIO = 1.2;
const TARGET_HEAP_GROWTH_BYTES = 16 * MIB;
const TARGET_THROUGHPUT_RATIO = 0.9;
const WARMUP_ROUNDS = 2;
const WARMUP_MIXED_CALLS = 300;
const THROUGHPUT_BLOCKS = 4;
/** The mix: a 1 MiB result every LARGE_EVERY calls, a new session every SESSION_EVERY, a tools/list every LIST_EVERY. */
const LARGE_EVERY = 50;
const SESSION_EVERY = 250;
const LIST_EVERY = 20;
/** No call of this bench takes this long; one that does has hung, and fails the run. */
const CALL_TIMEOUT_MS = 60_000;

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: process.env.BENCH_LARGE_ROUNDS ?? "12" },
    "mixed-calls": { type: "string", default: "10000" },
    concurrency: { type: "string", default: "32" },
    "throughput-calls": { type: "string", default: "4000" },
    "gateway-dir": { type: "string", default: ROOT },
    "baseline-dir": { type: "string", default: "" },
    "heap-snapshots": { type: "string", default: "" },
    out: { type: "string", default: path.join(ROOT, "bench", "results") },
    "hard-limit-minutes": { type: "string", default: HARD_LIMIT_MINUTES },
  },
});
const rounds = Number(values.rounds);
const mixedCalls = Number(values["mixed-calls"]);
const concurrency = Number(values.concurrency);
const throughputCalls = Number(values["throughput-calls"]);

// ---- one client session and its calls ---------------------------------------------------

let nextId = 1;

/** Opens a 2025-11-25 session at `url` (initialize, initialized); the headers every call then sends. */
async function openSession(url) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const params = {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "bench-large", version: "1" },
  };
  const answer = await fetch(url, { method: "POST", headers, body: rpc("initialize", params) });
  const text = await answer.text();
  if (!answer.ok || !text.includes('"result"'))
    throw new Error(`${url}: initialize answered ${answer.status}: ${text}`);
  const session = answer.headers.get("mcp-session-id");
  const sessionHeaders = {
    ...headers,
    "mcp-protocol-version": PROTOCOL_VERSION,
    ...(session ? { "mcp-session-id": session } : {}),
  };
  const body = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
  await (await fetch(url, { method: "POST", headers: sessionHeaders, body })).body?.cancel();
  return sessionHeaders;
}

function rpc(method, params) {
  return JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, ...(params ? { params } : {}) });
}

/** One call; its whole body read as bytes (not decoded). Throws unless 200 and at least `minBytes` long. */
async function call(url, headers, body, minBytes = 1) {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  let bytes = 0;
  let start = "";
  for await (const chunk of response.body) {
    if (bytes < 300) start += Buffer.from(chunk.subarray(0, 300)).toString();
    bytes += chunk.byteLength;
  }
  const ms = performance.now() - started;
  if (response.status !== 200 || bytes < minBytes)
    throw new Error(
      `${url}: answered ${response.status} with ${bytes} bytes (expected >= ${minBytes}): ${start.slice(0, 300)}`,
    );
  return { ms, type: response.headers.get("content-type") };
}

const huge = (mb, sse, tool = "huge") => rpc("tools/call", { name: tool, arguments: { mb, sse } });

// ---- the relays ---------------------------------------------------------------------------

async function startRelays(stops) {
  const upstream = await startUpstream("raw");
  stops.push(upstream.stop);
  const vars = {
    UPSTREAMS: [{ name: "raw", url: upstream.url }],
    OFFLOAD: { exclude: ["raw___*"] },
    SESSION_SECRET: randomBytes(32).toString("hex"),
  };
  const relays = [];
  const gatewayOf = async (label, dir) => {
    const state = mkdtempSync(path.join(os.tmpdir(), "bench-large-"));
    stops.push(async () => rmSync(state, { recursive: true, force: true }));
    const snapshot = snapshotTree(dir);
    stops.push(async () => snapshot.remove());
    const inspectorPort = await freePort();
    const gateway = await startGateway({
      port: await freePort(),
      vars,
      persistTo: state,
      cwd: snapshot.dir,
      extraArgs: ["--inspector-port", String(inspectorPort)],
    });
    stops.push(gateway.stop);
    const source = `${snapshot.source} ${snapshot.commit.slice(0, 12)}${snapshot.changes.length ? " with changes" : ""}`;
    relays.push({
      label,
      pid: gateway.pid,
      url: `${gateway.url}/mcp/raw`,
      aggregated: `${gateway.url}/mcp`,
      inspectorPort,
      source,
    });
  };
  await gatewayOf("gateway", values["gateway-dir"]);
  if (values["baseline-dir"]) await gatewayOf("baseline", values["baseline-dir"]);
  const inspectorPort = await freePort();
  const pass = await startPassthrough(await freePort(), upstream.url, undefined, [
    "--inspector-port",
    String(inspectorPort),
  ]);
  stops.push(pass.stop);
  relays.push({
    label: "forwarding",
    pid: pass.pid,
    url: `${pass.url}/`,
    aggregated: `${pass.url}/`,
    inspectorPort,
    source: "bench/passthrough",
  });
  for (const relay of relays) relay.headers = await openSession(relay.url);
  return relays;
}

// ---- phases -------------------------------------------------------------------------------

const CASES = [1, 10].flatMap((mb) =>
  [false, true].map((sse) => ({ mb, sse, name: `${mb} MiB ${sse ? "SSE" : "JSON"}` })),
);

async function relayPhase(relays) {
  const samples = new Map(CASES.flatMap((c) => relays.map((r) => [`${c.name} ${r.label}`, []])));
  const types = {};
  for (let round = 0; round < WARMUP_ROUNDS + rounds; round++)
    for (const c of CASES)
      for (let k = 0; k < relays.length; k++) {
        const relay = relays[(round + k) % relays.length];
        const { ms, type } = await call(relay.url, relay.headers, huge(c.mb, c.sse), c.mb * MIB);
        types[`${c.name} ${relay.label}`] = type;
        if (round >= WARMUP_ROUNDS) samples.get(`${c.name} ${relay.label}`).push(ms);
      }
  return { latency: Object.fromEntries([...samples].map(([k, s]) => [k, summarize(s)])), types };
}

/** `calls` small calls to `relay` with `concurrency` in flight; seconds taken. */
async function smallCalls(relay, calls) {
  let started = 0;
  const sessions = await Promise.all(Array.from({ length: concurrency }, () => openSession(relay.url)));
  const t0 = performance.now();
  await Promise.all(
    sessions.map(async (headers) => {
      while (started++ < calls)
        await call(relay.url, headers, rpc("tools/call", { name: "trap", arguments: { n: 1 } }));
    }),
  );
  return (performance.now() - t0) / 1000;
}

async function throughputPhase(relays) {
  const totals = Object.fromEntries(relays.map((r) => [r.label, 0]));
  const block = Math.ceil(throughputCalls / THROUGHPUT_BLOCKS);
  for (let b = 0; b < THROUGHPUT_BLOCKS; b++)
    for (const relay of b % 2 === 0 ? relays : [...relays].reverse())
      totals[relay.label] += await smallCalls(relay, block);
  return Object.fromEntries(relays.map((r) => [r.label, (block * THROUGHPUT_BLOCKS) / totals[r.label]]));
}

/**
 * `calls` mixed calls through `relay` by `concurrency` clients (see the header); calls per
 * second, and the calls that failed (loopback connections lost under load happen to either
 * relay: counted and named, not fatal).
 */
async function mixedTraffic(relay, calls) {
  let next = 0;
  const failures = { count: 0, first: undefined };
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      let headers = await openSession(relay.url);
      let aggregated = await openSession(relay.aggregated);
      for (let i = next++; i < calls; i = next++) {
        try {
          const opened = await mixedCall(relay, i, headers, aggregated);
          if (opened) [headers, aggregated] = opened;
        } catch (error) {
          failures.count++;
          failures.first ??= String(error.message ?? error);
        }
      }
    }),
  );
  return { perSecond: calls / ((performance.now() - t0) / 1000), failures };
}

/** Call `i` of the mix; the new sessions' headers when it opened them. */
async function mixedCall(relay, i, headers, aggregated) {
  if (i % SESSION_EVERY === 0) return [await openSession(relay.url), await openSession(relay.aggregated)];
  if (i % LARGE_EVERY === 0) await call(relay.url, headers, huge(1, i % 100 === 0), MIB);
  else if (i % LIST_EVERY === 0) await call(relay.url, headers, rpc("tools/list", {}));
  else if (i % 2 === 0) await call(relay.url, headers, rpc("tools/call", { name: "trap", arguments: { n: i } }));
  else {
    const tool = relay.label === "forwarding" ? "trap" : "raw___trap";
    await call(relay.aggregated, aggregated, rpc("tools/call", { name: tool, arguments: { n: i } }));
  }
  return undefined;
}

async function memoryPhase(relays) {
  const result = {};
  // A baseline's heap is not measured: the goal is the gateway's beside the forwarding Worker's, and each run takes minutes.
  for (const relay of relays.filter((r) => r.label !== "baseline")) {
    await mixedTraffic(relay, WARMUP_MIXED_CALLS);
    const inspector = await inspect(relay.inspectorPort);
    try {
      const before = await heapAfterGc(inspector);
      const rssBefore = gatewayMemory(relay.pid).workerd;
      const snapshots = values["heap-snapshots"] && relay.label !== "forwarding";
      if (snapshots) {
        mkdirSync(values["heap-snapshots"], { recursive: true });
        writeFileSync(
          path.join(values["heap-snapshots"], `${relay.label}-before.heapsnapshot`),
          await heapSnapshot(inspector),
        );
      }
      const { perSecond, failures } = await mixedTraffic(relay, mixedCalls);
      const after = await heapAfterGc(inspector);
      // The runtime's resident memory beside it: what the allocator keeps of freed buffers shows here, not in the heap.
      const rss = { beforeBytes: rssBefore, afterBytes: gatewayMemory(relay.pid).workerd };
      if (snapshots)
        writeFileSync(
          path.join(values["heap-snapshots"], `${relay.label}-after.heapsnapshot`),
          await heapSnapshot(inspector),
        );
      result[relay.label] = {
        beforeBytes: before,
        afterBytes: after,
        growthBytes: after - before,
        rss,
        perSecond,
        failures,
      };
    } finally {
      inspector.close();
    }
  }
  return result;
}

// ---- report -------------------------------------------------------------------------------

function render(result, relays) {
  const mib = (bytes) => (bytes / MIB).toFixed(2);
  const gateways = relays.filter((r) => r.label !== "forwarding");
  const verdict = (ok) => (ok ? "" : "  (over the goal)");
  return [
    `issue 38: large results and memory, ${result.startedAt} (${result.durationSeconds.toFixed(0)} s); load average ${result.loadAvgAtStart.join(" ")} at start, ${result.loadAvgAtEnd.join(" ")} at end`,
    ...relays.map((r) => `${r.label}: ${r.source}`),
    "",
    section(
      `Relay time, ms: the raw upstream's huge result, ${rounds} interleaved rounds after ${WARMUP_ROUNDS} warm-up rounds (body read whole, as bytes)`,
      table(
        ["case", "relay", "median", "p90", "min", `x forwarding (<= ${TARGET_RELAY_RATIO})`],
        CASES.flatMap((c) =>
          relays.map((r) => {
            const s = result.relay.latency[`${c.name} ${r.label}`];
            const ratio = s.median / result.relay.latency[`${c.name} forwarding`].median;
            return [
              c.name,
              r.label,
              s.median,
              s.p90,
              s.min,
              `${ratio.toFixed(2)}${verdict(ratio <= TARGET_RELAY_RATIO)}`,
            ];
          }),
        ),
      ),
    ),
    section(
      `Small calls per second at ${concurrency} clients (${throughputCalls} calls per relay in ${THROUGHPUT_BLOCKS} alternating blocks)`,
      table(
        ["relay", "calls/s", `x forwarding (>= ${TARGET_THROUGHPUT_RATIO})`],
        relays.map((r) => {
          const ratio = result.throughput[r.label] / result.throughput.forwarding;
          return [
            r.label,
            result.throughput[r.label],
            `${ratio.toFixed(2)}${verdict(ratio >= TARGET_THROUGHPUT_RATIO)}`,
          ];
        }),
      ),
    ),
    section(
      `JS heap in use after forced GC (and the relay's workerd RSS, for comparison), MiB: after ${WARMUP_MIXED_CALLS} warm-up calls, and after ${mixedCalls} mixed calls at ${concurrency} clients (goal: growth <= ${TARGET_HEAP_GROWTH_BYTES / MIB} MiB)`,
      table(
        ["relay", "before", "after", "growth", "workerd RSS before, after", "mixed calls/s", "failed"],
        relays
          .filter((r) => result.memory[r.label])
          .map((r) => {
            const m = result.memory[r.label];
            const ok = r.label === "forwarding" || m.growthBytes <= TARGET_HEAP_GROWTH_BYTES;
            const failed = `${m.failures.count}${m.failures.first ? ` (first: ${m.failures.first.slice(0, 160)})` : ""}`;
            return [
              r.label,
              mib(m.beforeBytes),
              mib(m.afterBytes),
              `${mib(m.growthBytes)}${verdict(ok)}`,
              `${mib(m.rss.beforeBytes)}, ${mib(m.rss.afterBytes)}`,
              m.perSecond,
              failed,
            ];
          }),
      ),
    ),
    ...gateways.map(
      (g) =>
        `content types (${g.label}): ${CASES.map((c) => `${c.name} ${result.relay.types[`${c.name} ${g.label}`]}`).join(", ")}`,
    ),
  ].join("\n");
}

await withProcesses("bench:large", Number(values["hard-limit-minutes"]) * 60_000, async (stops) => {
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const started = Date.now();
  const load = () => os.loadavg().map((x) => Number(x.toFixed(2)));
  const loadAvgAtStart = load();
  const progress = (text) =>
    console.error(`[bench:large] ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s: ${text}`);
  progress("starting the upstream, the gateway and the forwarding Worker");
  const relays = await startRelays(stops);
  progress("relay times");
  const relay = await relayPhase(relays);
  progress("calls per second");
  const throughput = await throughputPhase(relays);
  progress("memory");
  const memory = await memoryPhase(relays);
  const result = {
    startedAt: new Date(started).toISOString(),
    durationSeconds: (Date.now() - started) / 1000,
    loadAvgAtStart,
    loadAvgAtEnd: load(),
    cpus: os.cpus().length,
    settings: { rounds, mixedCalls, concurrency, throughputCalls },
    relays: relays.map((r) => ({ label: r.label, source: r.source })),
    relay,
    throughput,
    memory,
  };
  console.log(render(result, relays));
  saveResult(values.out, "large-results", result, result.startedAt);
});
