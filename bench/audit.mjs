#!/usr/bin/env node
/**
 * `npm run bench:audit` (and part of `npm run bench`): what auditing costs a call, and
 * how fast the audit consumer moves events into R2.
 *
 * It starts the raw upstream (test/fixtures/raw-upstream.ts, the cheapest) in a child
 * process and two gateways the way README says (`npm start`, scripts/lib/gateway-process.mjs,
 * from one copy of the working tree taken at start, lib/snapshot.ts): one with auditing
 * on (the default: every tools/call is an event on the local Queue, which the same
 * wrangler dev consumes into local R2), one with `AUDIT={"enabled":false}`. All on 127.0.0.1.
 *
 *   1. latency: a small tools/call on /mcp/raw, one at a time, interleaved round-robin
 *      between the two gateways after a warm-up; median, p90 and the ratio on / off;
 *   2. consumer: `--events` calls (at most 1000, what one /admin/audit read returns) with
 *      `--concurrency` in flight to the audited gateway, then GET /admin/audit (from the
 *      first call's time) until every event is there. Events per second into R2 = events
 *      / (time the last one became readable - first call). The consumer runs while the
 *      calls do, so this is a lower bound when it keeps up (it cannot write faster than
 *      events arrive); the lag after the last answer says how far behind it was.
 *
 *   npm run bench:audit
 *   npm run bench:audit -- --iterations 400 --events 1000 --concurrency 16
 *
 * Options (flag, or env var): --iterations 300 (BENCH_ITERATIONS), --warmup 30
 * (BENCH_WARMUP), --events 1000 (BENCH_AUDIT_EVENTS), --concurrency 16
 * (BENCH_CONCURRENCY), --out bench/results (BENCH_OUT). Results are printed and written
 * to <out>/audit-<timestamp>.json. Hard limit: 10 minutes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { concurrentCalls, interleavedLatency } from "./lib/load.ts";
import { section, table, saveResult } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";
import { hardLimit } from "./lib/hard-limit.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { summarize } from "./lib/stats.ts";
import { openTarget } from "./lib/target.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 10 * 60_000;
const CONSUMER_DEADLINE_MS = 120_000;
const POLL_MS = 250;
const MAX_EVENTS = 1000;
const ADMIN_TOKEN = randomBytes(16).toString("hex");

const OPTIONS = {
  iterations: ["BENCH_ITERATIONS", "300"],
  warmup: ["BENCH_WARMUP", "30"],
  events: ["BENCH_AUDIT_EVENTS", "1000"],
  concurrency: ["BENCH_CONCURRENCY", "16"],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};

function parseOptions(argv) {
  const raw = readOptions(OPTIONS, argv);
  return {
    iterations: integerOption(raw, "iterations", 1),
    warmup: integerOption(raw, "warmup", 0),
    events: integerOption(raw, "events", 1, MAX_EVENTS),
    concurrency: integerOption(raw, "concurrency", 1),
    out: path.resolve(raw.out),
  };
}

/** The number of events /admin/audit holds for the raw upstream from `fromMs` on. */
async function eventsSince(gateway, fromMs) {
  const response = await fetch(`${gateway.url}/admin/audit?upstream=raw&from=${fromMs}&limit=${MAX_EVENTS}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (response.status !== 200) throw new Error(`/admin/audit answered ${response.status}: ${await response.text()}`);
  return (await response.text()).split("\n").filter(Boolean).length;
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const stops = [];
  const stopAll = async () => {
    for (const stop of stops.reverse())
      await stop().catch((error) => console.error(`[bench] while stopping: ${error}`));
  };
  const disarm = hardLimit("bench:audit", HARD_LIMIT_MS, stopAll);
  const started = Date.now();
  const progress = (text) =>
    console.error(`[bench] ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s: ${text}`);
  try {
    progress("starting the raw upstream and two gateways (audit on, audit off)");
    const upstream = await startUpstream("raw");
    stops.push(upstream.stop);
    const snapshot = snapshotTree(ROOT);
    stops.push(async () => snapshot.remove());
    const vars = {
      UPSTREAMS: [{ name: "raw", url: upstream.url }],
      SESSION_SECRET: randomBytes(32).toString("hex"),
      ADMIN_TOKEN,
    };
    const gateways = {};
    for (const [label, extra] of [
      ["audit on", {}],
      ["audit off", { AUDIT: { enabled: false } }],
    ]) {
      const state = mkdtempSync(path.join(os.tmpdir(), "bench-audit-"));
      stops.push(async () => rmSync(state, { recursive: true, force: true }));
      const gateway = await startGateway({
        port: await freePort(),
        vars: { ...vars, ...extra },
        persistTo: state,
        cwd: snapshot.dir,
      });
      stops.push(gateway.stop);
      gateways[label] = gateway;
    }
    const targets = await Promise.all(
      Object.entries(gateways).map(([label, gateway]) =>
        openTarget({
          name: label,
          upstream: "raw",
          via: "gateway",
          url: `${gateway.url}/mcp/raw`,
          tool: "trap",
          args: { n: 1 },
        }),
      ),
    );
    progress(`latency: ${options.iterations} interleaved rounds after ${options.warmup} warm-up rounds`);
    const samples = await interleavedLatency(targets, options.iterations, options.warmup);
    const latency = Object.fromEntries([...samples].map(([name, s]) => [name, summarize(s)]));
    const ratio = latency["audit on"].median / latency["audit off"].median;

    progress(
      `consumer: ${options.events} calls, ${options.concurrency} in flight, then until all are readable in /admin/audit`,
    );
    const audited = targets.find((t) => t.name === "audit on");
    const gateway = gateways["audit on"];
    const fromMs = Date.now();
    const t0 = performance.now();
    const calls = await concurrentCalls(audited, options.events, options.concurrency);
    const callsDone = performance.now();
    let seen = 0;
    for (;;) {
      seen = await eventsSince(gateway, fromMs);
      if (seen >= options.events || performance.now() - callsDone >= CONSUMER_DEADLINE_MS) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const allReadable = performance.now();
    if (seen !== options.events)
      throw new Error(`${seen} of ${options.events} events readable after ${CONSUMER_DEADLINE_MS / 1000} s`);
    const consumer = {
      events: options.events,
      callsPerSecond: calls.perSecond,
      eventsPerSecondIntoR2: options.events / ((allReadable - t0) / 1000),
      lagAfterLastAnswerSeconds: (allReadable - callsDone) / 1000,
    };

    const cpus = os.cpus();
    const result = {
      startedAt: new Date(started).toISOString(),
      machine: {
        cpus: cpus.length,
        model: cpus[0]?.model ?? "unknown",
        node: process.version,
        loadAvg: os.loadavg().map((x) => Number(x.toFixed(2))),
      },
      settings: options,
      gateway: { dir: snapshot.source, commit: snapshot.commit, changes: snapshot.changes.length },
      latency,
      ratioOnOff: ratio,
      consumer,
    };
    console.log(
      [
        `mcp-edge-gateway audit benchmark, ${result.startedAt}; ${cpus.length} cores, load average ${result.machine.loadAvg.join(" ")}`,
        `gateway: a copy of ${snapshot.source} (commit ${snapshot.commit.slice(0, 12)}${snapshot.changes.length ? `, ${snapshot.changes.length} changed files` : ""}); a small tools/call on /mcp/raw; all on 127.0.0.1 under wrangler dev.`,
        "",
        section(
          `Latency, ms: one call at a time, ${options.iterations} interleaved rounds after ${options.warmup} warm-up rounds`,
          table(
            ["gateway", "median", "p90", "p99", "min", "n"],
            Object.entries(latency).map(([name, s]) => [name, s.median, s.p90, s.p99, s.min, s.n]),
          ),
        ),
        `Audit on / off, median latency: ${ratio.toFixed(3)} (target: indistinguishable from 1 within noise)`,
        "",
        section(
          `Consumer: ${options.events} events, calls with ${options.concurrency} in flight, until all readable through /admin/audit`,
          table(
            ["calls/s", "events/s into R2 (lower bound)", "lag after last answer, s"],
            [[consumer.callsPerSecond, consumer.eventsPerSecondIntoR2, consumer.lagAfterLastAnswerSeconds]],
          ),
        ),
      ].join("\n"),
    );
    saveResult(options.out, "audit", result, result.startedAt);
  } finally {
    disarm();
    await stopAll();
  }
}

await main().catch((error) => {
  console.error(`[bench] failed: ${error instanceof Error ? error.stack : String(error)}`);
  process.exitCode = 1;
});
