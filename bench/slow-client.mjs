#!/usr/bin/env node
/**
 * `npm run bench:slow-client` (and part of `npm run bench`): what a client that stops
 * reading costs the gateway. An upstream on loopback (test/fixtures/flood-upstream.ts)
 * answers a tools/call with a 150 MiB SSE stream of 64 KiB log notifications, written only
 * as fast as its socket drains; the client reads the first chunk, stops reading for 15 s,
 * then reads the rest. The gateway runs the way README says (`npm start`, i.e. wrangler
 * dev, via scripts/lib/gateway-process.mjs, in a copy of the working tree, lib/snapshot.ts).
 *
 * Measured: the resident memory (VmRSS) of the gateway's workerd processes before the
 * call, at its peak while the client pauses and while it reads the rest, and after; and
 * how much of the answer the upstream managed to write while the client paused. Target:
 * under 64 MiB of growth while the client pauses. Exits 1 when the target is missed or
 * the answer arrives broken.
 *
 *   npm run bench:slow-client
 *   npm run bench:slow-client -- --mb 150 --pause-ms 15000 --gateway-dir ../other-checkout
 *
 * Options (flag, or env var): --mb 150 (BENCH_SLOW_MB), --pause-ms 15000
 * (BENCH_SLOW_PAUSE_MS), --gateway-dir . (BENCH_GATEWAY_DIR), --out bench/results
 * (BENCH_OUT). Results are printed and written to <out>/slow-client-<timestamp>.json.
 * Linux only (/proc). Hard limit: 5 minutes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startGateway } from '../scripts/lib/gateway-process.mjs';
import { startFloodUpstream } from '../test/fixtures/flood-upstream.ts';
import { gatewayMemory, sampleMemory } from './lib/memory.ts';
import { integerOption, readOptions } from './lib/options.ts';
import { section, table, saveResult } from './lib/report.ts';
import { snapshotTree } from './lib/snapshot.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HARD_LIMIT_MS = 5 * 60_000;
const TARGET_GROWTH_MB = 64;
const SAMPLE_INTERVAL_MS = 100;
const MB = 1024 * 1024;

const OPTIONS = {
  mb: ['BENCH_SLOW_MB', '150'],
  'pause-ms': ['BENCH_SLOW_PAUSE_MS', '15000'],
  'gateway-dir': ['BENCH_GATEWAY_DIR', ROOT],
  out: ['BENCH_OUT', path.join(ROOT, 'bench', 'results')],
};

function parseOptions(argv) {
  try {
    const raw = readOptions(OPTIONS, argv);
    return { mb: integerOption(raw, 'mb', 1), pauseMs: integerOption(raw, 'pause-ms', 1), gatewayDir: path.resolve(raw['gateway-dir']), out: path.resolve(raw.out) };
  } catch (error) {
    return usage(error.message);
  }
}

function usage(problem) {
  console.error(`[bench] ${problem}`);
  console.error('usage: npm run bench:slow-client -- [--mb 150] [--pause-ms 15000] [--gateway-dir DIR] [--out DIR]');
  process.exit(2);
}


async function rpc(url, session, body) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' });
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function openSession(url) {
  const init = await rpc(url, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
  if (!init.ok) throw new Error(`initialize answered ${init.status}: ${await init.text()}`);
  const session = init.headers.get('mcp-session-id');
  await init.body?.cancel();
  await (await rpc(url, session, { jsonrpc: '2.0', method: 'notifications/initialized' })).body?.cancel();
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

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const stops = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
  const limit = setTimeout(() => {
    console.error(`[bench] still running after ${HARD_LIMIT_MS / 60_000} minutes`);
    void stopAll().then(() => process.exit(1));
  }, HARD_LIMIT_MS);
  try {
    const upstream = await startFloodUpstream();
    stops.push(upstream.close);
    const key = `slow-${Date.now()}`;
    const upstreams = [
      { name: 'flood', url: `${upstream.url}?key=${key}&mb=${options.mb}` },
      { name: 'warm', url: `${upstream.url}?key=warm&mb=2` },
    ];
    const state = mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-'));
    stops.push(async () => rmSync(state, { recursive: true, force: true }));
    const snapshot = snapshotTree(options.gatewayDir);
    stops.push(async () => snapshot.remove());
    console.log(`[bench] gateway of ${snapshot.source} at ${snapshot.commit.slice(0, 12)}${snapshot.changes.length ? ` (+${snapshot.changes.length} changed files)` : ''}`);
    const gateway = await startGateway({ port: await freePort(), vars: { UPSTREAMS: upstreams, SESSION_SECRET: randomBytes(32).toString('hex') }, persistTo: state, cwd: snapshot.dir });
    stops.push(gateway.stop);

    // Warm up: one whole small flood, so the baseline includes a Worker that has streamed.
    const warmUrl = `${gateway.url}/mcp/warm`;
    const warm = await rpc(warmUrl, await openSession(warmUrl), { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', arguments: {} } });
    await readAll(warm.body.getReader());

    const url = `${gateway.url}/mcp/flood`;
    const session = await openSession(url);
    const before = gatewayMemory(gateway.pid);
    const started = Date.now();
    const response = await rpc(url, session, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', arguments: {} } });
    const reader = response.body.getReader();
    const first = await reader.read();
    const pausePeak = sampleMemory(gateway.pid, SAMPLE_INTERVAL_MS);
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    const duringPause = pausePeak();
    const statsUrl = new URL('/stats', upstream.url);
    statsUrl.searchParams.set('key', key);
    statsUrl.searchParams.set('quietMs', '0');
    const paused = await (await fetch(statsUrl)).json();
    const readPeak = sampleMemory(gateway.pid, SAMPLE_INTERVAL_MS);
    const read = await readAll(reader, first.value);
    const duringRead = readPeak();
    const seconds = (Date.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = gatewayMemory(gateway.pid);

    const growth = { pause: (duringPause.workerd - before.workerd) / MB, read: (duringRead.workerd - before.workerd) / MB };
    const intact = read.answered && read.bytes >= paused.total;
    const result = {
      options: { mb: options.mb, pauseMs: options.pauseMs },
      gateway: { commit: snapshot.commit, changes: snapshot.changes },
      upstreamWrittenWhilePausedMB: paused.written / MB,
      upstreamTotalMB: paused.total / MB,
      receivedMB: read.bytes / MB,
      answered: read.answered,
      seconds,
      workerdRssMB: { before: before.workerd / MB, peakWhilePaused: duringPause.workerd / MB, peakWhileReading: duringRead.workerd / MB, after: after.workerd / MB },
      treeRssMB: { before: before.tree / MB, peakWhilePaused: duringPause.tree / MB, peakWhileReading: duringRead.tree / MB, after: after.tree / MB },
      growthMB: growth,
      targetGrowthMB: TARGET_GROWTH_MB,
    };
    console.log(
      section(
        `Slow client: ${options.mb} MiB answer, client paused ${options.pauseMs / 1000} s after its first chunk`,
        table(
          ['RSS, MiB', 'before', 'peak paused', 'peak reading', 'after'],
          [
            ['workerd', result.workerdRssMB.before, result.workerdRssMB.peakWhilePaused, result.workerdRssMB.peakWhileReading, result.workerdRssMB.after],
            ['whole tree', result.treeRssMB.before, result.treeRssMB.peakWhilePaused, result.treeRssMB.peakWhileReading, result.treeRssMB.after],
          ],
          1,
        ),
      ),
    );
    console.log(`upstream wrote ${result.upstreamWrittenWhilePausedMB.toFixed(1)} of ${result.upstreamTotalMB.toFixed(0)} MiB while the client paused`);
    console.log(`client then received ${result.receivedMB.toFixed(1)} MiB in ${seconds.toFixed(1)} s in all, ${read.answered ? 'ending with the answer' : 'WITHOUT the answer'}`);
    // The target is about what a paused client costs. Reading at full speed afterwards
    // shows allocation churn the GC collects late (it grows far less than the answer).
    const verdict = growth.pause < TARGET_GROWTH_MB ? 'within' : 'OVER';
    console.log(`workerd growth while the client paused: ${growth.pause.toFixed(1)} MiB (${verdict} the ${TARGET_GROWTH_MB} MiB target)`);
    console.log(`workerd peak growth while it then read at full speed: ${growth.read.toFixed(1)} MiB`);
    saveResult(options.out, 'slow-client', result);
    if (!intact || growth.pause >= TARGET_GROWTH_MB) process.exitCode = 1;
  } finally {
    clearTimeout(limit);
    await stopAll();
  }
}

await main();
