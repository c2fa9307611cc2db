#!/usr/bin/env node
/**
 * `npm run bench:cold-start` (chained into `npm run bench`): how long a fresh isolate of the
 * gateway takes to answer its first request (issue 18, "cold start"), beside the
 * pass-through Worker's (bench/passthrough/) under the same runtime.
 *
 * Both Workers are built as `wrangler deploy` builds them (`--dry-run --outdir`: the
 * minified bundle that is uploaded) and loaded, round after round, into a new Miniflare
 * (a new workerd process, so a new isolate that has never run the script). Per round:
 *   - start: from `new Miniflare` until it is ready (workerd starts, the script is
 *     compiled and its top level runs);
 *   - first: the first request's answer, read to its end (a 2025 `initialize` on
 *     /mcp/raw for the gateway: era discovery, session sealing, the upstream's handshake;
 *     the same request forwarded by the pass-through);
 *   - warm: the same request again, on the now warm isolate.
 * The figure that counts is the gateway's start + first minus the pass-through's: what the
 * gateway's size and its first request's own work add to a cold start. The targets
 * alternate round by round so load changes hit both.
 *
 *   npm run bench:cold-start
 *   npm run bench:cold-start -- --rounds 20 --gateway-dir /tmp/old-tree
 *
 * Options (flag or env var): --rounds 10 (BENCH_ROUNDS), --gateway-dir . (the tree whose
 * bundle is measured), --out bench/results (BENCH_OUT). Only loopback; hard limit 10 minutes.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { hardLimit } from './lib/hard-limit.ts';
import { integerOption, readOptions } from './lib/options.ts';
import { saveResult, section, table } from './lib/report.ts';
import { summarize } from './lib/stats.ts';
import { startUpstream } from './lib/upstream-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HARD_LIMIT_MS = 10 * 60_000;
const OPTIONS = { rounds: ['BENCH_ROUNDS', '10'], 'gateway-dir': ['BENCH_GATEWAY_DIR', ROOT], out: ['BENCH_OUT', path.join(ROOT, 'bench', 'results')] };
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-cold-start', version: '1' } } });
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Builds the Worker of `config` (a wrangler.toml) as `wrangler deploy` would, into a new directory. */
async function build(cwd, config) {
  const outdir = mkdtempSync(path.join(os.tmpdir(), 'cold-start-'));
  await promisify(execFile)(path.join(ROOT, 'node_modules', '.bin', 'wrangler'), ['deploy', '--dry-run', '--outdir', outdir, ...(config ? ['-c', config] : [])], { cwd });
  const script = readdirSync(outdir).find((name) => name.endsWith('.js'));
  if (!script) throw new Error(`wrangler built no script into ${outdir}`);
  return { outdir, script: path.join(outdir, script), bytes: statSync(path.join(outdir, script)).size };
}

/** One cold isolate: times its start, its first request and a second one. */
async function round(options, url) {
  const started = performance.now();
  // Miniflare's classic (v4) options, converted: the form its README documents.
  const mf = new Miniflare(convertV4MiniflareOptions({ workers: [{ name: 'worker', ...options }] }));
  try {
    await mf.ready;
    const ready = performance.now();
    const ask = async () => {
      const response = await mf.dispatchFetch(url, { method: 'POST', headers: HEADERS, body: INITIALIZE });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 200)}`);
    };
    await ask();
    const first = performance.now();
    await ask();
    return { start: ready - started, first: first - ready, warm: performance.now() - first };
  } finally {
    await mf.dispose();
  }
}

const values = readOptions(OPTIONS, process.argv.slice(2));
const rounds = integerOption(values, 'rounds', 1);
const cleanUps = [];
const stopAll = async () => {
  for (const stop of cleanUps.reverse()) await Promise.resolve(stop()).catch(() => {});
};
const disarm = hardLimit('bench:cold-start', HARD_LIMIT_MS, stopAll);
try {
  const upstream = await startUpstream('raw');
  cleanUps.push(upstream.stop);
  const gatewayDir = path.resolve(values['gateway-dir']);
  const gatewayBundle = await build(gatewayDir);
  cleanUps.push(() => rmSync(gatewayBundle.outdir, { recursive: true, force: true }));
  const passthroughBundle = await build(path.join(ROOT, 'bench', 'passthrough'), 'wrangler.toml');
  cleanUps.push(() => rmSync(passthroughBundle.outdir, { recursive: true, force: true }));
  const worker = ({ outdir, script }, bindings, extra = {}) => ({
    modules: true,
    scriptPath: script,
    modulesRoot: outdir,
    compatibilityDate: '2026-11-01',
    compatibilityFlags: ['nodejs_compat'],
    bindings,
    ...extra,
  });
  const targets = [
    { name: 'pass-through', bytes: passthroughBundle.bytes, url: 'http://127.0.0.1/', options: worker(passthroughBundle, { TARGET: upstream.url }) },
    {
      name: 'gateway',
      bytes: gatewayBundle.bytes,
      url: 'http://127.0.0.1/mcp/raw',
      options: worker(
        gatewayBundle,
        { UPSTREAMS: JSON.stringify([{ name: 'raw', url: upstream.url }]), SESSION_SECRET: randomBytes(32).toString('hex'), AUTH: '{"mode":"off"}' },
        {
          kvNamespaces: ['GATEWAY_KV'],
          r2Buckets: ['PAYLOADS'],
          queueProducers: { AUDIT_QUEUE: 'mcp-edge-gateway-audit' },
          durableObjects: { BRIDGED_CALLS: { className: 'BridgedCall', useSQLite: true }, INPUT_RENDEZVOUS: { className: 'InputRendezvous', useSQLite: true } },
        },
      ),
    },
  ];
  const samples = new Map(targets.map((t) => [t.name, { start: [], first: [], warm: [], total: [] }]));
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg();
  for (let i = 0; i < rounds; i++) {
    for (const target of i % 2 === 0 ? targets : [...targets].reverse()) {
      const { start, first, warm } = await round(target.options, target.url);
      const s = samples.get(target.name);
      s.start.push(start);
      s.first.push(first);
      s.warm.push(warm);
      s.total.push(start + first);
    }
  }
  const loadAfter = os.loadavg();
  const summary = Object.fromEntries([...samples].map(([name, s]) => [name, Object.fromEntries(Object.entries(s).map(([k, v]) => [k, summarize(v)]))]));
  const rows = targets.map((t) => [t.name, Math.round(t.bytes / 1024), summary[t.name].start.median, summary[t.name].first.median, summary[t.name].warm.median, summary[t.name].total.median, summary[t.name].total.p90]);
  const added = summary.gateway.total.median - summary['pass-through'].total.median;
  console.log(
    section(
      `Cold start, ${rounds} fresh isolates each (medians, ms; load ${loadBefore.map((l) => l.toFixed(2)).join(' ')} → ${loadAfter.map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} cores)`,
      table(['worker', 'KiB', 'start', 'first request', 'warm request', 'start + first', 'p90 start + first'], rows),
    ),
  );
  console.log(`the gateway's cold start adds ${added.toFixed(1)} ms (median start + first request) over the pass-through's; its first request takes ${(summary.gateway.first.median - summary.gateway.warm.median).toFixed(1)} ms more than a warm one`);
  const file = saveResult(values.out, 'cold-start', { startedAt, rounds, gatewayDir, load: { before: loadBefore, after: loadAfter }, bundles: Object.fromEntries(targets.map((t) => [t.name, t.bytes])), summary, addedMs: added }, startedAt);
  console.log(`[cold-start] written to ${path.relative(ROOT, file)}`);
} finally {
  disarm();
  await stopAll();
}
