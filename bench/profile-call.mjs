#!/usr/bin/env node
/**
 * `node bench/profile-call.mjs`: a CPU profile of the gateway relaying small tools/calls
 * (issue 18: "profile a call"). Starts the raw upstream and the gateway (`npm start`, i.e.
 * wrangler dev, with its inspector on a free port) on 127.0.0.1, opens a session, warms
 * up, then records the Worker's CPU profile (the inspector's Profiler domain, over
 * wrangler dev's inspector proxy) while it sends calls one at a time, and prints the
 * functions with the most self time, per call.
 *
 *   node bench/profile-call.mjs [--gateway-dir DIR] [--route raw|""] [--calls 2000] [--top 30] [--out FILE.cpuprofile] [--vars JSON] [--minify] [--passthrough]
 *     [--tool trap] [--args '{"n":1}'] [--warmup 300]
 *
 * `--tool huge --args '{"mb":10}' --vars '{"OFFLOAD":{"exclude":["raw___*"]}}' --calls 20 --warmup 5`
 * profiles the relay of a 10 MiB result (issue 38); `"sse":true` in the args has it answered as SSE.
 *
 * `--passthrough` profiles the same calls through the bare pass-through Worker
 * (bench/passthrough/) instead: the floor any relay Worker pays (its fetch, Response, ...).
 *
 * The Worker is served unminified by default: with wrangler.toml's `minify = true` the
 * inspector's profile of wrangler dev holds only "(idle)" samples here (seen on every run of
 * 2026-11-24), while the same calls unminified profile as expected. `--minify` tries anyway.
 *
 * Only loopback; stops by itself (hard limit 5 minutes). The profile counts the Worker's
 * JavaScript only (not the runtime's HTTP, KV or fetch work done outside it).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { TraceMap, originalPositionFor } from "@jridgewell/trace-mapping";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { snapshotTree } from "./lib/snapshot.ts";
import { inspect } from "./lib/inspector.ts";
import { openTarget } from "./lib/target.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 5 * 60_000;
const SAMPLING_INTERVAL_US = 50;
/** The most time one sample stands for (see selfTimes). */
const MAX_SAMPLE_US = 10 * SAMPLING_INTERVAL_US;
/** Calls per recorded segment (see `record`), and runtimes started when profiles come out empty. */
const SEGMENT_CALLS = 1000;
const RUNTIME_ATTEMPTS = 4;
/** How long calls run before the profiler is started among them. */
const BUSY_BEFORE_START_MS = 200;
/**
 * Calls kept in flight meanwhile. With one, the isolate sat idle between a call's answer
 * and the next call about half the time, and Profiler.start arriving then gave an
 * "(idle)"-only profile: three attempts of three on 2026-11-28 09:00; with eight, one run
 * in six (so a runtime whose profiles are empty is replaced: see `record`).
 */
const BUSY_LOOPS = 8;

const { values } = parseArgs({
  options: {
    "gateway-dir": { type: "string", default: ROOT },
    route: { type: "string", default: "raw" },
    calls: { type: "string", default: "2000" },
    top: { type: "string", default: "30" },
    out: { type: "string" },
    vars: { type: "string", default: "{}" },
    minify: { type: "boolean", default: false },
    passthrough: { type: "boolean", default: false },
    tool: { type: "string", default: "trap" },
    args: { type: "string", default: '{"n":1}' },
    warmup: { type: "string", default: "300" },
  },
});
const calls = Number(values.calls);
const toolArgs = JSON.parse(values.args);
const hardLimit = setTimeout(() => {
  console.error("[profile] hard limit reached");
  process.exit(1);
}, HARD_LIMIT_MS);
hardLimit.unref();

/**
 * Self time per function (us), from a V8 CPU profile's samples and time deltas. Each sample
 * counts the time to the next one, at most MAX_SAMPLE_US: on a loaded machine the sampler
 * misses the isolate for milliseconds at a time (seen: median gap 140 us, p90 5.5 ms), and
 * counting the whole gap put up to 3 ms per call on whichever native call (`sendBatch`,
 * `fetch`) happened to precede it.
 */
function selfTimes(profile, map) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const perNode = new Map();
  profile.samples.forEach((id, i) =>
    perNode.set(id, (perNode.get(id) ?? 0) + Math.min(profile.timeDeltas[i + 1] ?? 0, MAX_SAMPLE_US)),
  );
  const perFunction = new Map();
  const perFile = new Map();
  let active = 0;
  for (const [id, us] of perNode) {
    const { functionName, url, lineNumber, columnNumber } = byId.get(id).callFrame;
    const name = functionName || "(anonymous)";
    const original =
      map && url === "index.js" ? originalPositionFor(map, { line: lineNumber + 1, column: columnNumber }) : undefined;
    const where = original?.source
      ? `${original.source.replace(/^.*?src\//, "src/").replace(/^.*node_modules\//, "")}:${original.line}${original.name ? ` ${original.name}` : ""}`
      : url
        ? `${path.basename(url)}:${lineNumber + 1}:${columnNumber + 1}`
        : "";
    const key = `${name} ${where}`.trim();
    perFunction.set(key, (perFunction.get(key) ?? 0) + us);
    // By file: the bundle's code by its source file, the runtime's native functions as one row.
    const file = original?.source
      ? where.split(":")[0]
      : url
        ? path.basename(url)
        : name.startsWith("(")
          ? name
          : "(the runtime's functions)";
    perFile.set(file, (perFile.get(file) ?? 0) + us);
    if (!["(idle)", "(program)", "(garbage collector)"].includes(name)) active += us;
  }
  // For each function without a script (the runtime's: fetch, sendBatch, KV), who called it.
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  const callers = new Map();
  for (const [id, us] of perNode) {
    const node = byId.get(id);
    if (node.callFrame.url) continue;
    let parent = parentOf.get(id);
    // Past the runtime's own frames (workerd's node-internal timers: its `Timeout` wraps every setTimeout) to the code that called.
    const runtimeFrame = (frame) => !frame.url || frame.url.startsWith("node-internal:");
    while (parent && runtimeFrame(parent.callFrame) && parent.callFrame.functionName !== "(root)")
      parent = parentOf.get(parent.id);
    if (!parent || parent.callFrame.functionName === "(root)") continue;
    const { lineNumber, columnNumber, functionName, url } = parent.callFrame;
    // Only the bundle's frames map through its source map.
    const original =
      map && url === "index.js" ? originalPositionFor(map, { line: lineNumber + 1, column: columnNumber }) : undefined;
    const where = original?.source
      ? `${original.source.replace(/^.*?src\//, "src/").replace(/^.*node_modules\//, "")}:${original.line}`
      : `${url ? `${path.basename(url)}:` : ""}${lineNumber + 1}:${columnNumber + 1}`;
    const key = `${node.callFrame.functionName} <- ${functionName} ${where}`;
    callers.set(key, (callers.get(key) ?? 0) + us);
  }
  return { active, perFunction, perFile, callers };
}

/** The source map of the bundle wrangler dev serves (under .wrangler/tmp of the tree it runs in). */
function bundleMap(dir) {
  const tmp = path.join(dir, ".wrangler", "tmp");
  if (!existsSync(tmp)) return undefined;
  for (const name of readdirSync(tmp)) {
    const file = path.join(tmp, name, "index.js.map");
    if (existsSync(file)) return new TraceMap(readFileSync(file, "utf8"));
  }
  return undefined;
}

/** Starts the Worker to profile (the gateway of `snapshot`, or the pass-through) with its inspector on a free port. */
async function startRelay(upstream, snapshot) {
  const inspectorPort = await freePort();
  const inspectorArgs = ["--inspector-port", String(inspectorPort), ...(values.minify ? [] : ["--no-minify"])];
  if (!snapshot) {
    // The floor: the same calls through the bare pass-through Worker (bench/passthrough/).
    const passthrough = await startPassthrough(await freePort(), upstream.url, undefined, inspectorArgs);
    const target = await openTarget({
      name: "pass-through",
      upstream: "raw",
      via: "passthrough",
      url: `${passthrough.url}/`,
      tool: values.tool,
      args: toolArgs,
    }).catch(async (error) => {
      await passthrough.stop();
      throw error;
    });
    return { target, inspectorPort, stop: passthrough.stop };
  }
  const state = mkdtempSync(path.join(os.tmpdir(), "profile-gateway-"));
  const vars = {
    ...JSON.parse(values.vars),
    UPSTREAMS: [{ name: "raw", url: upstream.url }],
    SESSION_SECRET: randomBytes(32).toString("hex"),
  };
  const gateway = await startGateway({
    port: await freePort(),
    vars,
    persistTo: state,
    cwd: snapshot.dir,
    extraArgs: inspectorArgs,
  });
  const stop = async () => {
    await gateway.stop();
    rmSync(state, { recursive: true, force: true });
  };
  const route = values.route;
  const target = await openTarget({
    name: "gateway",
    upstream: "raw",
    via: route ? "gateway" : "gateway-aggregated",
    url: `${gateway.url}/mcp${route ? `/${route}` : ""}`,
    tool: route ? values.tool : `raw___${values.tool}`,
    args: toolArgs,
  }).catch(async (error) => {
    await stop();
    throw error;
  });
  return { target, inspectorPort, stop };
}

/**
 * Profiles `calls` calls to `target` in segments, each its own Profiler.start and stop;
 * undefined when the first segments held no JavaScript samples. Some starts are taken by
 * the inspector's own thread, and V8 then samples that thread, which runs no JavaScript
 * (profiles of only "(idle)"). Once that happens it happens to every start in that runtime
 * (ten segments in a row on 2026-11-28), so the caller starts another runtime instead.
 */
async function record(target, inspectorPort, map) {
  const cdp = await inspect(inspectorPort);
  try {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
    const times = {
      active: 0,
      perFunction: new Map(),
      perFile: new Map(),
      callers: new Map(),
      wallMs: 0,
      profile: undefined,
    };
    const add = (into, from) => {
      for (const [key, us] of from) into.set(key, (into.get(key) ?? 0) + us);
    };
    let profiled = 0;
    while (profiled < calls) {
      const segment = Math.min(SEGMENT_CALLS, calls - profiled);
      // Started while calls are in flight: sent to an idle isolate, Profiler.start is taken
      // by the inspector's own thread (BUSY_LOOPS).
      let busy = true;
      const background = Promise.all(
        Array.from({ length: BUSY_LOOPS }, async () => {
          while (busy) await target.call();
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, BUSY_BEFORE_START_MS));
      await cdp.send("Profiler.start");
      busy = false;
      await background;
      const started = performance.now();
      for (let i = 0; i < segment; i++) await target.call();
      const elapsed = performance.now() - started;
      const recorded = (await cdp.send("Profiler.stop")).profile;
      const segmentTimes = selfTimes(recorded, map);
      if (segmentTimes.active === 0) return undefined;
      times.profile ??= recorded;
      times.wallMs += elapsed;
      profiled += segment;
      times.active += segmentTimes.active;
      add(times.perFunction, segmentTimes.perFunction);
      add(times.perFile, segmentTimes.perFile);
      add(times.callers, segmentTimes.callers);
    }
    return times;
  } finally {
    cdp.close();
  }
}

const stops = [];
try {
  const upstream = await startUpstream("raw");
  stops.push(upstream.stop);
  const snapshot = values.passthrough ? undefined : snapshotTree(path.resolve(values["gateway-dir"]));
  if (snapshot) stops.push(async () => snapshot.remove());
  const label = snapshot
    ? `gateway ${snapshot.source} (${snapshot.commit.slice(0, 7)}${snapshot.changes.length ? ", with changes" : ""}), route /mcp${values.route ? `/${values.route}` : ""}`
    : "pass-through (bench/passthrough/)";
  let times;
  for (let attempt = 1; attempt <= RUNTIME_ATTEMPTS && !times; attempt++) {
    const relay = await startRelay(upstream, snapshot);
    try {
      for (let i = 0; i < Number(values.warmup); i++) await relay.target.call();
      times = await record(relay.target, relay.inspectorPort, snapshot && bundleMap(snapshot.dir));
    } finally {
      await relay.stop().catch(() => {});
    }
    if (!times)
      console.error(
        `[profile] runtime ${attempt}: its profile holds no JavaScript samples (the profiler samples another thread)${attempt < RUNTIME_ATTEMPTS ? "; starting another" : ""}`,
      );
  }
  if (!times) throw new Error(`no JavaScript samples in ${RUNTIME_ATTEMPTS} runtimes`);
  // The first segment's profile (DevTools opens one recording).
  if (values.out) writeFileSync(values.out, JSON.stringify(times.profile));
  const { active, perFunction, perFile, callers, wallMs } = times;
  console.log(
    `${label}, ${calls} calls in segments of ${SEGMENT_CALLS}, ${(wallMs / calls).toFixed(3)} ms per call (wall), load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    `JavaScript self time per call (samples outside idle/program/GC, each counted up to ${MAX_SAMPLE_US} us): ${(active / 1000 / calls).toFixed(3)} ms`,
  );
  console.log("us/call  %active  function");
  const rows = [...perFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
  for (const [key, us] of rows)
    console.log(`${(us / calls).toFixed(1).padStart(7)}  ${((100 * us) / active).toFixed(1).padStart(6)}%  ${key}`);
  console.log("\nself time by source file, us/call");
  for (const [file, us] of [...perFile].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
    console.log(`${(us / calls).toFixed(1).padStart(7)}  ${file}`);
  console.log("\nthe runtime's functions by caller, us/call");
  for (const [key, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`${(us / calls).toFixed(1).padStart(7)}  ${key}`);
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
}
