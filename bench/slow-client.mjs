#!/usr/bin/env node
/**
 * `npm run bench:slow-client` (and part of `npm run bench`): what a client that stops
 * reading costs the gateway. An upstream on loopback (test/fixtures/flood-upstream.ts)
 * answers a tools/call with a 150 MiB SSE stream of 64 KiB log notifications, written only
 * as fast as its socket drains; the client reads the first chunk, stops reading for 15 s,
 * then reads the rest. The gateway runs the way README says (`npm start`, i.e. wrangler
 * dev, via scripts/lib/gateway-process.mjs, in a copy of the working tree, lib/snapshot.ts).
 * The same stream then goes through the bare pass-through Worker (bench/passthrough/,
 * also wrangler dev, lib/passthrough-process.ts): what any Worker relaying it costs
 * workerd, the floor to tell the gateway's own growth from the runtime's; and through a
 * Worker that copies it chunk by chunk in JavaScript and does nothing else
 * (bench/js-relay/): the floor for any Worker that sees the bytes it relays, as the
 * gateway must.
 *
 * Measured, for each relay: the resident memory (VmRSS) of its workerd processes before
 * the call, at its peak while the client pauses and while it reads the rest, and after;
 * and how much of the answer the upstream managed to write while the client paused.
 * Targets: under 64 MiB of growth while the client pauses (issue 18: under 32 MB at any
 * pace). Exits 1 when the gateway misses the 64 MiB target or an answer arrives broken.
 * Beside workerd's RSS, the isolate's own memory as V8 counts it against the Worker's
 * 128 MB (JavaScript heap, the runtime's objects on V8's heap, ArrayBuffer backing stores:
 * lib/inspector.ts, over wrangler dev's inspector): RSS also holds the runtime's socket and
 * stream buffers and what its allocator has not given back, which no Worker's code sees.
 *
 *   npm run bench:slow-client
 *   npm run bench:slow-client -- --mb 150 --pause-ms 15000 --gateway-dir ../other-checkout
 *
 * Options (flag, or env var): --mb 150 (BENCH_SLOW_MB), --pause-ms 15000
 * (BENCH_SLOW_PAUSE_MS), --gateway-dir . (BENCH_GATEWAY_DIR), --passthrough on
 * (BENCH_SLOW_PASSTHROUGH; off measures the gateway alone), --js-relay on
 * (BENCH_SLOW_JS_RELAY), --out bench/results (BENCH_OUT). Results are printed and written to <out>/slow-client-<timestamp>.json.
 * Linux only (/proc). Hard limit: 8 minutes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { startFloodUpstream } from "../test/fixtures/flood-upstream.ts";
import { inspect, isolateBytes, sampleIsolate } from "./lib/inspector.ts";
import { gatewayMemory, sampleMemory } from "./lib/memory.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { section, table, saveResult } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 8 * 60_000;
const TARGET_GROWTH_MB = 64;
/** Issue 18's target, 32 MB, in MiB. */
const ISSUE_TARGET_GROWTH_MB = 32e6 / (1024 * 1024);
const SAMPLE_INTERVAL_MS = 100;
const MB = 1024 * 1024;

const OPTIONS = {
  mb: ["BENCH_SLOW_MB", "150"],
  "pause-ms": ["BENCH_SLOW_PAUSE_MS", "15000"],
  "gateway-dir": ["BENCH_GATEWAY_DIR", ROOT],
  passthrough: ["BENCH_SLOW_PASSTHROUGH", "on"],
  "js-relay": ["BENCH_SLOW_JS_RELAY", "on"],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};

function parseOptions(argv) {
  try {
    const raw = readOptions(OPTIONS, argv);
    for (const name of ["passthrough", "js-relay"])
      if (raw[name] !== "on" && raw[name] !== "off") throw new Error(`--${name} must be on or off, got "${raw[name]}"`);
    return {
      mb: integerOption(raw, "mb", 1),
      pauseMs: integerOption(raw, "pause-ms", 1),
      gatewayDir: path.resolve(raw["gateway-dir"]),
      passthrough: raw.passthrough === "on",
      jsRelay: raw["js-relay"] === "on",
      out: path.resolve(raw.out),
    };
  } catch (error) {
    return usage(error.message);
  }
}

function usage(problem) {
  console.error(`[bench] ${problem}`);
  console.error(
    "usage: npm run bench:slow-client -- [--mb 150] [--pause-ms 15000] [--gateway-dir DIR] [--passthrough on|off] [--js-relay on|off] [--out DIR]",
  );
  process.exit(2);
}

async function rpc(url, session, body) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (session) Object.assign(headers, { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" });
  return fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
}

async function openSession(url) {
  const init = await rpc(url, undefined, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  });
  if (!init.ok) throw new Error(`initialize answered ${init.status}: ${await init.text()}`);
  const session = init.headers.get("mcp-session-id");
  await init.body?.cancel();
  await (await rpc(url, session, { jsonrpc: "2.0", method: "notifications/initialized" })).body?.cancel();
  return session;
}

/** The whole answer read at once: its size and whether it ends with the call's response. */
async function readAll(reader, first = new Uint8Array()) {
  let bytes = first.length;
  let tail = new TextDecoder().decode(first.subarray(-200));
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.length;
    tail = (tail + new TextDecoder().decode(value.subarray(-200))).slice(-200);
  }
  return { bytes, answered: /"id":1,"result"/.test(tail) };
}

/**
 * One slow client through one relay: a warm-up flood (so the baseline includes a Worker
 * that has streamed), then the measured one, whose stats the upstream keeps under `key`.
 * `warmUrl` and `url` are the relay's URLs of the two; `pid` the root of its process tree.
 */
async function measureFlood({ upstream, warmUrl, url, pid, inspectorPort, key, options }) {
  const warm = await rpc(warmUrl, await openSession(warmUrl), {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "flood", arguments: {} },
  });
  await readAll(warm.body.getReader());

  const session = await openSession(url);
  const inspector = await inspect(inspectorPort);
  const isolateBefore = await isolateBytes(inspector);
  const before = gatewayMemory(pid);
  const started = Date.now();
  const response = await rpc(url, session, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "flood", arguments: {} },
  });
  const reader = response.body.getReader();
  const first = await reader.read();
  const pausePeak = sampleMemory(pid, SAMPLE_INTERVAL_MS);
  const isolatePausePeak = sampleIsolate(inspector, SAMPLE_INTERVAL_MS);
  await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
  const duringPause = pausePeak();
  const isolateDuringPause = await isolatePausePeak();
  const statsUrl = new URL("/stats", upstream.url);
  statsUrl.searchParams.set("key", key);
  statsUrl.searchParams.set("quietMs", "0");
  const paused = await (await fetch(statsUrl)).json();
  const readPeak = sampleMemory(pid, SAMPLE_INTERVAL_MS);
  const isolateReadPeak = sampleIsolate(inspector, SAMPLE_INTERVAL_MS);
  const read = await readAll(reader, first.value);
  const duringRead = readPeak();
  const isolateDuringRead = await isolateReadPeak();
  const seconds = (Date.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after = gatewayMemory(pid);
  const isolateAfter = await isolateBytes(inspector);
  inspector.close();
  return {
    upstreamWrittenWhilePausedMB: paused.written / MB,
    upstreamTotalMB: paused.total / MB,
    receivedMB: read.bytes / MB,
    answered: read.answered,
    intact: read.answered && read.bytes >= paused.total,
    seconds,
    workerdRssMB: {
      before: before.workerd / MB,
      peakWhilePaused: duringPause.workerd / MB,
      peakWhileReading: duringRead.workerd / MB,
      after: after.workerd / MB,
    },
    treeRssMB: {
      before: before.tree / MB,
      peakWhilePaused: duringPause.tree / MB,
      peakWhileReading: duringRead.tree / MB,
      after: after.tree / MB,
    },
    growthMB: { pause: (duringPause.workerd - before.workerd) / MB, read: (duringRead.workerd - before.workerd) / MB },
    isolateMB: {
      before: isolateBefore / MB,
      peakWhilePaused: isolateDuringPause / MB,
      peakWhileReading: isolateDuringRead / MB,
      after: isolateAfter / MB,
    },
    isolateGrowthMB: {
      pause: (isolateDuringPause - isolateBefore) / MB,
      read: (isolateDuringRead - isolateBefore) / MB,
    },
  };
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const stops = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    stops.length = 0;
  };
  const limit = setTimeout(() => {
    console.error(`[bench] still running after ${HARD_LIMIT_MS / 60_000} minutes`);
    void stopAll().then(() => process.exit(1));
  }, HARD_LIMIT_MS);
  try {
    const upstream = await startFloodUpstream();
    stops.push(upstream.close);
    const stamp = Date.now();
    const key = `slow-${stamp}`;
    const upstreams = [
      { name: "flood", url: `${upstream.url}?key=${key}&mb=${options.mb}` },
      { name: "warm", url: `${upstream.url}?key=warm-${key}&mb=2` },
    ];
    const state = mkdtempSync(path.join(os.tmpdir(), "bench-gateway-"));
    const snapshot = snapshotTree(options.gatewayDir);
    console.log(
      `[bench] gateway of ${snapshot.source} at ${snapshot.commit.slice(0, 12)}${snapshot.changes.length ? ` (+${snapshot.changes.length} changed files)` : ""}`,
    );
    // One relay at a time, alone on the machine's cores: the gateway, then the pass-through.
    const gatewayStops = [];
    let gatewayRun;
    try {
      gatewayStops.push(
        async () => rmSync(state, { recursive: true, force: true }),
        async () => snapshot.remove(),
      );
      const inspectorPort = await freePort();
      const gateway = await startGateway({
        port: await freePort(),
        vars: { UPSTREAMS: upstreams, SESSION_SECRET: randomBytes(32).toString("hex") },
        persistTo: state,
        cwd: snapshot.dir,
        extraArgs: ["--inspector-port", String(inspectorPort)],
      });
      gatewayStops.push(gateway.stop);
      gatewayRun = await measureFlood({
        upstream,
        warmUrl: `${gateway.url}/mcp/warm`,
        url: `${gateway.url}/mcp/flood`,
        pid: gateway.pid,
        inspectorPort,
        key,
        options,
      });
    } finally {
      for (const stop of gatewayStops.reverse()) await stop().catch(() => {});
    }
    // A floor: the bench's Worker of `config` forwarding the same flood, measured the same way.
    const floor = async (config, name) => {
      const floorKey = `slow-${name}-${stamp}`;
      const inspectorPort = await freePort();
      const relay = await startPassthrough(await freePort(), upstream.url, config, [
        "--inspector-port",
        String(inspectorPort),
      ]);
      try {
        return await measureFlood({
          upstream,
          warmUrl: `${relay.url}/?key=warm-${floorKey}&mb=2`,
          url: `${relay.url}/?key=${floorKey}&mb=${options.mb}`,
          pid: relay.pid,
          inspectorPort,
          key: floorKey,
          options,
        });
      } finally {
        await relay.stop();
      }
    };
    const passthroughRun = options.passthrough ? await floor(undefined, "pass") : undefined;
    const jsRelayRun = options.jsRelay
      ? await floor(path.join("bench", "js-relay", "wrangler.toml"), "js-relay")
      : undefined;

    const result = {
      options: { mb: options.mb, pauseMs: options.pauseMs },
      gateway: { commit: snapshot.commit, changes: snapshot.changes },
      loadAverage: os.loadavg(),
      ...gatewayRun,
      passthrough: passthroughRun ?? null,
      jsRelay: jsRelayRun ?? null,
      gatewayMinusPassthroughGrowthMB: passthroughRun
        ? {
            pause: gatewayRun.growthMB.pause - passthroughRun.growthMB.pause,
            read: gatewayRun.growthMB.read - passthroughRun.growthMB.read,
          }
        : null,
      targetGrowthMB: TARGET_GROWTH_MB,
      issueTargetGrowthMB: ISSUE_TARGET_GROWTH_MB,
    };
    const runs = [
      ["gateway", gatewayRun],
      ...(passthroughRun ? [["pass-through", passthroughRun]] : []),
      ...(jsRelayRun ? [["JS relay", jsRelayRun]] : []),
    ];
    console.log(
      section(
        `Slow client: ${options.mb} MiB answer, client paused ${options.pauseMs / 1000} s after its first chunk (load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")})`,
        table(
          ["workerd RSS, MiB", "before", "peak paused", "peak reading", "after", "growth paused", "growth reading"],
          runs.map(([name, r]) => [
            name,
            r.workerdRssMB.before,
            r.workerdRssMB.peakWhilePaused,
            r.workerdRssMB.peakWhileReading,
            r.workerdRssMB.after,
            r.growthMB.pause,
            r.growthMB.read,
          ]),
          1,
        ) +
          "\n" +
          table(
            [
              "isolate (V8 heap + buffers), MiB",
              "before",
              "peak paused",
              "peak reading",
              "after",
              "growth paused",
              "growth reading",
            ],
            runs.map(([name, r]) => [
              name,
              r.isolateMB.before,
              r.isolateMB.peakWhilePaused,
              r.isolateMB.peakWhileReading,
              r.isolateMB.after,
              r.isolateGrowthMB.pause,
              r.isolateGrowthMB.read,
            ]),
            1,
          ),
      ),
    );
    for (const [name, r] of runs) {
      console.log(
        `${name}: upstream wrote ${r.upstreamWrittenWhilePausedMB.toFixed(1)} of ${r.upstreamTotalMB.toFixed(0)} MiB while the client paused; ` +
          `the client received ${r.receivedMB.toFixed(1)} MiB in ${r.seconds.toFixed(1)} s in all, ${r.answered ? "ending with the answer" : "WITHOUT the answer"}`,
      );
    }
    // The 64 MiB target is about what a paused client costs; issue 18 asks for less than
    // 32 MB at any pace, reading at full speed after the pause included.
    const growth = gatewayRun.growthMB;
    const verdict = (mb, target) => (mb < target ? "within" : "OVER");
    console.log(
      `gateway growth while the client paused: ${growth.pause.toFixed(1)} MiB (${verdict(growth.pause, TARGET_GROWTH_MB)} the ${TARGET_GROWTH_MB} MiB target, ${verdict(growth.pause, ISSUE_TARGET_GROWTH_MB)} 32 MB)`,
    );
    console.log(
      `gateway peak growth while it then read at full speed: ${growth.read.toFixed(1)} MiB (${verdict(growth.read, ISSUE_TARGET_GROWTH_MB)} 32 MB)`,
    );
    const isolate = gatewayRun.isolateGrowthMB;
    console.log(
      `the gateway's isolate (what the 128 MB limit counts) grew ${isolate.pause.toFixed(1)} MiB while the client paused, ${isolate.read.toFixed(1)} MiB reading (${verdict(Math.max(isolate.pause, isolate.read), ISSUE_TARGET_GROWTH_MB)} 32 MB)`,
    );
    const beyond = result.gatewayMinusPassthroughGrowthMB;
    if (beyond)
      console.log(
        `the gateway's growth beyond the pass-through's: ${beyond.pause.toFixed(1)} MiB paused, ${beyond.read.toFixed(1)} MiB reading`,
      );
    if (jsRelayRun) {
      const floorOf = (run) =>
        `RSS ${run.growthMB.pause.toFixed(1)} / ${run.growthMB.read.toFixed(1)} MiB, isolate ${run.isolateGrowthMB.pause.toFixed(1)} / ${run.isolateGrowthMB.read.toFixed(1)} MiB`;
      console.log(
        `a Worker that only copies the stream in JavaScript (bench/js-relay/) grew ${floorOf(jsRelayRun)} (paused / reading); the gateway ${floorOf(gatewayRun)}`,
      );
    }
    saveResult(options.out, "slow-client", result);
    if (
      !gatewayRun.intact ||
      (passthroughRun && !passthroughRun.intact) ||
      (jsRelayRun && !jsRelayRun.intact) ||
      growth.pause >= TARGET_GROWTH_MB
    )
      process.exitCode = 1;
  } finally {
    clearTimeout(limit);
    await stopAll();
  }
}

await main();
