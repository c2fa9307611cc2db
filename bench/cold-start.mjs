#!/usr/bin/env node
/**
 * `npm run bench:cold-start` (chained into `npm run bench`): how long a fresh isolate of the
 * gateway takes to answer its first request (issue 18, "cold start"), beside the
 * pass-through Worker's (bench/passthrough/) under the same runtime.
 *
 * Both Workers are built as `wrangler deploy` builds them (`--dry-run --outdir`: the
 * minified modules that are uploaded, scripts/lib/bundle-modules.mjs) and loaded, round
 * after round, into a new Miniflare (a new workerd process, so a new isolate that has never
 * run the script). Per round:
 *   - start: from `new Miniflare` until it is ready (workerd starts, the main module is
 *     compiled and its top level runs);
 *   - first: the first request's answer, read to its end (a 2025 `initialize` on
 *     /mcp/raw for the gateway: era discovery, session sealing, the upstream's handshake;
 *     the same request forwarded by the pass-through);
 *   - warm: the same request again, on the now warm isolate;
 *   - gateway only, then: first YAML, an admin GET of a filter set stored as YAML in KV,
 *     the isolate's first YAML document (yaml is imported then: src/storage/yaml-module.mjs),
 *     and next YAML, the same GET of another such set. Their difference is what the
 *     isolate's first YAML document costs once.
 * The figure that counts is the gateway's start + first minus the pass-through's: what the
 * gateway's size and its first request's own work add to a cold start. With
 * --baseline-dir, another tree's gateway (say, before a change) runs as a third target, so
 * the two are compared under the same load. The targets take turns in an order that
 * rotates round by round, so load changes hit all. The KiB column is the main module;
 * "uploaded" adds the modules loaded on demand.
 *
 *   npm run bench:cold-start
 *   npm run bench:cold-start -- --rounds 20 --gateway-dir /tmp/old-tree   # an older tree's bundle (its own build), this bench
 *   npm run bench:cold-start -- --rounds 40 --baseline-dir /tmp/old-tree  # this tree's gateway and an older one's, interleaved
 *
 * Options (flag or env var): --rounds 10 (BENCH_ROUNDS), --gateway-dir . (the tree whose
 * bundle is measured), --baseline-dir (BENCH_BASELINE_DIR; none by default), --out
 * bench/results (BENCH_OUT). Only loopback; hard limit 10 minutes.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { bundleModules } from "../scripts/lib/bundle-modules.mjs";
import { gatewayWorkerOptions } from "../scripts/lib/worker-options.mjs";
import { hardLimit } from "./lib/hard-limit.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { saveResult, section, table } from "./lib/report.ts";
import { summarize } from "./lib/stats.ts";
import { startUpstream } from "./lib/upstream-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 10 * 60_000;
const OPTIONS = {
  rounds: ["BENCH_ROUNDS", "10"],
  "gateway-dir": ["BENCH_GATEWAY_DIR", ROOT],
  "baseline-dir": ["BENCH_BASELINE_DIR", ""],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-cold-start", version: "1" } },
});
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const ADMIN_TOKEN = "bench-cold-start-admin-token-0123456789";
/** Two filter sets as an operator writes them into KV by hand: YAML. */
const YAML_SETS = ["bench-first", "bench-next"];
const yamlSet = (name) => `description: ${name}\ntools:\n  raw___echo:\n    retain: [/content]\n`;

/** Builds the Worker of `config` (a wrangler.toml; its main module `mainModule`) as `wrangler deploy` would, into a new directory; with the Miniflare options its wrangler.toml gives. */
async function build(cwd, config, mainModule) {
  const outdir = mkdtempSync(path.join(os.tmpdir(), "cold-start-"));
  await promisify(execFile)(
    path.join(ROOT, "node_modules", ".bin", "wrangler"),
    ["deploy", "--dry-run", "--outdir", outdir, ...(config ? ["-c", config] : [])],
    { cwd },
  );
  const { main, modules, totalBytes } = bundleModules(outdir, mainModule);
  return {
    outdir,
    modules: modules.map(({ type, path }) => ({ type, path })),
    bytes: main.bytes,
    totalBytes,
    config: gatewayWorkerOptions(path.join(cwd, config ?? "wrangler.toml")),
  };
}

/** Times an admin GET of each YAML set stored in KV (before the isolate has read any YAML). */
async function yamlReads(mf) {
  const kv = await mf.getKVNamespace("GATEWAY_KV");
  for (const name of YAML_SETS) await kv.put(`filter-sets/${name}`, yamlSet(name));
  const times = [];
  for (const name of YAML_SETS) {
    const started = performance.now();
    const response = await mf.dispatchFetch(`http://127.0.0.1/admin/filter-sets/${name}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await response.text();
    if (response.status !== 200 || !text.includes(name))
      throw new Error(`GET /admin/filter-sets/${name} answered ${response.status}: ${text.slice(0, 200)}`);
    times.push(performance.now() - started);
  }
  return { yamlFirst: times[0], yamlNext: times[1] };
}

/** One cold isolate: times its start, its first request and a second one (then `after`'s own timings). */
async function round(options, url, after) {
  const started = performance.now();
  // Miniflare's classic (v4) options, converted: the form its README documents.
  const mf = new Miniflare(convertV4MiniflareOptions({ workers: [{ name: "worker", ...options }] }));
  try {
    await mf.ready;
    const ready = performance.now();
    const ask = async () => {
      const response = await mf.dispatchFetch(url, { method: "POST", headers: HEADERS, body: INITIALIZE });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 200)}`);
    };
    await ask();
    const first = performance.now();
    await ask();
    const warm = performance.now() - first;
    return { start: ready - started, first: first - ready, warm, ...(after ? await after(mf) : {}) };
  } finally {
    await mf.dispose();
  }
}

const values = readOptions(OPTIONS, process.argv.slice(2));
const rounds = integerOption(values, "rounds", 1);
const cleanUps = [];
const stopAll = async () => {
  for (const stop of cleanUps.reverse()) await Promise.resolve(stop()).catch(() => {});
};
const disarm = hardLimit("bench:cold-start", HARD_LIMIT_MS, stopAll);
try {
  const upstream = await startUpstream("raw");
  cleanUps.push(upstream.stop);
  const gatewayDir = path.resolve(values["gateway-dir"]);
  const baselineDir = values["baseline-dir"] ? path.resolve(values["baseline-dir"]) : undefined;
  const gatewayBundle = await build(gatewayDir);
  cleanUps.push(() => rmSync(gatewayBundle.outdir, { recursive: true, force: true }));
  const baselineBundle = baselineDir ? await build(baselineDir) : undefined;
  if (baselineBundle) cleanUps.push(() => rmSync(baselineBundle.outdir, { recursive: true, force: true }));
  const passthroughBundle = await build(path.join(ROOT, "bench", "passthrough"), "wrangler.toml", "worker.js");
  cleanUps.push(() => rmSync(passthroughBundle.outdir, { recursive: true, force: true }));
  const worker = ({ outdir, modules, config }, bindings) => ({ ...config, modules, modulesRoot: outdir, bindings });
  const gateway = (name, bundle) => ({
    name,
    bytes: bundle.bytes,
    totalBytes: bundle.totalBytes,
    url: "http://127.0.0.1/mcp/raw",
    after: yamlReads,
    options: worker(bundle, {
      UPSTREAMS: JSON.stringify([{ name: "raw", url: upstream.url }]),
      SESSION_SECRET: randomBytes(32).toString("hex"),
      AUTH: '{"mode":"off"}',
      ADMIN_TOKEN,
    }),
  });
  const targets = [
    {
      name: "pass-through",
      bytes: passthroughBundle.bytes,
      totalBytes: passthroughBundle.totalBytes,
      url: "http://127.0.0.1/",
      options: worker(passthroughBundle, { TARGET: upstream.url }),
    },
    gateway("gateway", gatewayBundle),
    ...(baselineBundle ? [gateway("baseline", baselineBundle)] : []),
  ];
  const samples = new Map(
    targets.map((t) => [
      t.name,
      { start: [], first: [], warm: [], total: [], ...(t.after ? { yamlFirst: [], yamlNext: [] } : {}) },
    ]),
  );
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg();
  for (let i = 0; i < rounds; i++) {
    for (const target of [...targets.slice(i % targets.length), ...targets.slice(0, i % targets.length)]) {
      const { start, first, warm, yamlFirst, yamlNext } = await round(target.options, target.url, target.after);
      const s = samples.get(target.name);
      s.start.push(start);
      s.first.push(first);
      s.warm.push(warm);
      s.total.push(start + first);
      if (target.after) {
        s.yamlFirst.push(yamlFirst);
        s.yamlNext.push(yamlNext);
      }
    }
  }
  const loadAfter = os.loadavg();
  const summary = Object.fromEntries(
    [...samples].map(([name, s]) => [name, Object.fromEntries(Object.entries(s).map(([k, v]) => [k, summarize(v)]))]),
  );
  const rows = targets.map((t) => [
    t.name,
    Math.round(t.bytes / 1024),
    Math.round(t.totalBytes / 1024),
    summary[t.name].start.median,
    summary[t.name].first.median,
    summary[t.name].warm.median,
    summary[t.name].total.median,
    summary[t.name].total.p90,
    summary[t.name].yamlFirst?.median ?? "n/a",
    summary[t.name].yamlNext?.median ?? "n/a",
  ]);
  const added = summary.gateway.total.median - summary["pass-through"].total.median;
  console.log(
    section(
      `Cold start, ${rounds} fresh isolates each (medians, ms; load ${loadBefore.map((l) => l.toFixed(2)).join(" ")} → ${loadAfter.map((l) => l.toFixed(2)).join(" ")}, ${os.cpus().length} cores)`,
      table(
        [
          "worker",
          "KiB",
          "uploaded",
          "start",
          "first request",
          "warm request",
          "start + first",
          "p90 start + first",
          "first YAML",
          "next YAML",
        ],
        rows,
      ),
    ),
  );
  const yamlOnce = summary.gateway.yamlFirst.median - summary.gateway.yamlNext.median;
  console.log(
    `the gateway's cold start adds ${added.toFixed(1)} ms (median start + first request) over the pass-through's; its first request takes ${(summary.gateway.first.median - summary.gateway.warm.median).toFixed(1)} ms more than a warm one; its first YAML document ${yamlOnce.toFixed(1)} ms more than the next`,
  );
  if (baselineBundle) {
    const baselineAdded = summary.baseline.total.median - summary["pass-through"].total.median;
    console.log(
      `the baseline's (${baselineDir}) adds ${baselineAdded.toFixed(1)} ms; its first YAML document ${(summary.baseline.yamlFirst.median - summary.baseline.yamlNext.median).toFixed(1)} ms more than the next`,
    );
  }
  const file = saveResult(
    values.out,
    "cold-start",
    {
      startedAt,
      rounds,
      gatewayDir,
      baselineDir,
      load: { before: loadBefore, after: loadAfter },
      bundles: Object.fromEntries(targets.map((t) => [t.name, { main: t.bytes, uploaded: t.totalBytes }])),
      summary,
      addedMs: added,
      yamlOnceMs: yamlOnce,
    },
    startedAt,
  );
  console.log(`[cold-start] written to ${path.relative(ROOT, file)}`);
} finally {
  disarm();
  await stopAll();
}
