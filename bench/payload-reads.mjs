#!/usr/bin/env node
/**
 * `npm run bench:payload-reads` (and part of `npm run bench`): what pointer reads of a
 * large offloaded payload cost the gateway in memory, and what they do to another
 * client meanwhile.
 *
 * It starts the raw upstream (test/fixtures/raw-upstream.ts) in a child process and the
 * gateway the way README says (`npm start`, scripts/lib/gateway-process.mjs, in a copy
 * of the working tree taken at start, lib/snapshot.ts), all on 127.0.0.1. One session
 * calls `raw___huge` for a 30 MiB answer, which the gateway offloads to (local) R2;
 * then, in rounds, eight `sys___read_payload` pointer reads of it run at once (pages of
 * `/items` and single deep elements), while another session calls a small tool one
 * call at a time. Measured: the RSS of the gateway's process tree (wrangler dev: node,
 * workerd), sampled every 20 ms, peak minus the level just before the reads; and the
 * other client's latency before and during the reads; and, for the offload itself, its
 * time and the same RSS peak minus the level just before the call. Then the R2 writer
 * (bench/r2-writer/: the answer stored whole in local R2, nothing parsed) stores the same
 * answer, so that the gateway's share of the offload's growth can be told from what the
 * runtime and wrangler's local R2 simulator, in the same workerd process, cost for it.
 *
 *   npm run bench:payload-reads
 *   npm run bench:payload-reads -- --mb 30 --rounds 3 --readers 8 --gateway-dir ../other --r2-writer off
 *
 * Target: under 64 MB of extra RSS. Results are printed and written to
 * <out>/payload-reads-<timestamp>.json. Linux only (/proc). Hard limit: 10 minutes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { gatewayMemory, sampleMemory } from "./lib/memory.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { section, table, saveResult } from "./lib/report.ts";
import { snapshotTree } from "./lib/snapshot.ts";
import { summarize } from "./lib/stats.ts";
import { PROTOCOL_VERSION } from "./lib/target.ts";
import { startUpstream } from "./lib/upstream-process.ts";
import { startPassthrough } from "./lib/passthrough-process.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 10 * 60_000;
const TARGET_EXTRA_MB = 64;
const SAMPLE_INTERVAL_MS = 20;
const READ_TIMEOUT_MS = 120_000;
/** Items of the raw upstream's huge answer are 100 bytes each. */
const ITEM_BYTES = 100;

const OPTIONS = {
  mb: ["BENCH_PAYLOAD_MB", "30"],
  readers: ["BENCH_READERS", "8"],
  rounds: ["BENCH_READ_ROUNDS", "3"],
  "gateway-dir": ["BENCH_GATEWAY_DIR", ROOT],
  "r2-writer": ["BENCH_R2_WRITER", "on"],
  out: ["BENCH_OUT", path.join(ROOT, "bench", "results")],
};

function parseOptions(argv) {
  const raw = readOptions(OPTIONS, argv);
  const count = (key) => integerOption(raw, key, 1);
  if (raw["r2-writer"] !== "on" && raw["r2-writer"] !== "off")
    throw new Error(`--r2-writer must be on or off, got "${raw["r2-writer"]}"`);
  return {
    mb: count("mb"),
    readers: count("readers"),
    rounds: count("rounds"),
    gatewayDir: path.resolve(raw["gateway-dir"]),
    r2Writer: raw["r2-writer"] === "on",
    out: path.resolve(raw.out),
  };
}

// ---- an MCP session over plain fetch ------------------------------------------------------

let nextId = 1;

async function openSession(url) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const init = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method: "initialize",
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "bench-payload-reads", version: "0" },
      },
    }),
  });
  const text = await init.text();
  if (!init.ok) throw new Error(`initialize answered ${init.status}: ${text.slice(0, 300)}`);
  headers["mcp-session-id"] = init.headers.get("mcp-session-id");
  headers["mcp-protocol-version"] = PROTOCOL_VERSION;
  await (
    await fetch(url, { method: "POST", headers, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })
  ).body?.cancel();
  return async (name, args) => {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }),
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    });
    const body = await response.text();
    // An SSE answer: the last data line is the response.
    const json = response.headers.get("content-type")?.includes("text/event-stream")
      ? body
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .pop()
          ?.slice(6)
      : body;
    const message = JSON.parse(json ?? "null");
    if (!message?.result) throw new Error(`${name} answered ${response.status}: ${body.slice(0, 300)}`);
    return message.result;
  };
}

/**
 * The floor of the offload's figure: the same answer stored whole in local R2 by the R2
 * writer (bench/r2-writer/), in the gateway's part size, nothing parsed. Its workerd's
 * growth is what the runtime and the R2 simulator (in the same process) cost for it.
 */
async function storeThroughR2Writer(upstreamUrl, mb, stops) {
  const writer = await startPassthrough(
    await freePort(),
    upstreamUrl,
    path.join("bench", "r2-writer", "wrangler.toml"),
  );
  stops.push(writer.stop);
  const before = gatewayMemory(writer.pid);
  const stopSampling = sampleMemory(writer.pid, SAMPLE_INTERVAL_MS);
  const started = performance.now();
  const response = await fetch(writer.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "huge", arguments: { mb } } }),
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  const text = await response.text();
  const seconds = (performance.now() - started) / 1000;
  const peak = stopSampling();
  if (!response.ok) throw new Error(`the R2 writer answered ${response.status}: ${text.slice(0, 300)}`);
  await writer.stop();
  return { storedBytes: JSON.parse(text).size, seconds, extraMB: (peak.workerd - before.workerd) / 1024 / 1024 };
}

// ---- the run ------------------------------------------------------------------------------

async function run(options, stops) {
  const upstream = await startUpstream("raw");
  stops.push(upstream.stop);
  const state = mkdtempSync(path.join(os.tmpdir(), "bench-payload-reads-"));
  stops.push(async () => rmSync(state, { recursive: true, force: true }));
  const snapshot = snapshotTree(options.gatewayDir);
  stops.push(async () => snapshot.remove());
  const vars = {
    UPSTREAMS: [{ name: "raw", url: upstream.url, timeoutMs: READ_TIMEOUT_MS }],
    SESSION_SECRET: randomBytes(32).toString("hex"),
  };
  const gateway = await startGateway({ port: await freePort(), vars, persistTo: state, cwd: snapshot.dir });
  stops.push(gateway.stop);
  const mcp = `${gateway.url}/mcp`;

  const reader = await openSession(mcp);
  const other = await openSession(mcp);
  console.error(`[bench] offloading a ${options.mb} MiB answer`);
  const beforeOffload = gatewayMemory(gateway.pid);
  const stopOffloadSampling = sampleMemory(gateway.pid, SAMPLE_INTERVAL_MS);
  const started = performance.now();
  const offloaded = await reader("raw___huge", { mb: options.mb });
  const envelope = JSON.parse(offloaded.content[0].text);
  const offloadSeconds = (performance.now() - started) / 1000;
  const offloadPeak = stopOffloadSampling();
  if (!/^[0-9a-f]{32}$/.test(envelope.payloadId ?? ""))
    throw new Error(`no payload: ${offloaded.content[0].text.slice(0, 300)}`);
  const items = Math.floor((options.mb * 1024 * 1024) / ITEM_BYTES);

  // The other client's latency alone, then the level the reads start from.
  const idle = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    await other("raw___trap", { n: 1 });
    idle.push(performance.now() - t);
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = gatewayMemory(gateway.pid);

  const stopSampling = sampleMemory(gateway.pid, SAMPLE_INTERVAL_MS);
  let reading = true;
  const during = [];
  const otherClient = (async () => {
    while (reading) {
      const t = performance.now();
      await other("raw___trap", { n: 1 });
      during.push(performance.now() - t);
    }
  })();
  const reads = [];
  const failures = [];
  for (let round = 0; round < options.rounds; round++) {
    await Promise.all(
      Array.from({ length: options.readers }, async (_, k) => {
        // Half read a page of items, half one deep element; all at different places.
        const at = Math.floor(((round * options.readers + k + 1) / (options.rounds * options.readers + 1)) * items);
        const args =
          k % 2 === 0
            ? { id: envelope.payloadId, pointer: "/items", offset: at, limit: 100 }
            : { id: envelope.payloadId, pointer: `/items/${at}/name` };
        const t = performance.now();
        const result = await reader("sys___read_payload", args);
        reads.push(performance.now() - t);
        if (result.isError) failures.push(result.content[0].text);
      }),
    );
  }
  reading = false;
  await otherClient;
  const peak = stopSampling();
  const mb = (bytes) => bytes / 1024 / 1024;
  await gateway.stop();
  const r2Writer = options.r2Writer ? await storeThroughR2Writer(upstream.url, options.mb, stops) : undefined;
  return {
    gateway: { dir: snapshot.source, commit: snapshot.commit, changes: snapshot.changes },
    payloadMiB: options.mb,
    payloadBytes: envelope.originalSize,
    offloadSeconds,
    offloadExtraMB: {
      total: (offloadPeak.tree - beforeOffload.tree) / 1024 / 1024,
      workerd: (offloadPeak.workerd - beforeOffload.workerd) / 1024 / 1024,
    },
    r2Writer: r2Writer ?? null,
    offloadBeyondR2WriterMB: r2Writer
      ? (offloadPeak.workerd - beforeOffload.workerd) / 1024 / 1024 - r2Writer.extraMB
      : null,
    readers: options.readers,
    rounds: options.rounds,
    failedReads: failures.length,
    firstFailure: failures[0],
    rssBeforeMB: { total: mb(before.tree), workerd: mb(before.workerd) },
    rssPeakMB: { total: mb(peak.tree), workerd: mb(peak.workerd) },
    extraMB: { total: mb(peak.tree - before.tree), workerd: mb(peak.workerd - before.workerd) },
    readLatencyMs: summarize(reads),
    otherClientMs: { idle: summarize(idle), duringReads: { ...summarize(during), max: Math.max(...during) } },
  };
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const stops = [];
  const cleanup = async () => {
    for (const stop of stops.reverse())
      await stop().catch((error) => console.error(`[bench] while stopping: ${error}`));
  };
  const limit = setTimeout(() => {
    console.error(`[bench] still running after ${HARD_LIMIT_MS / 60_000} minutes`);
    void cleanup().then(() => process.exit(1));
  }, HARD_LIMIT_MS);
  try {
    const result = await run(options, stops);
    const pass = result.failedReads === 0 && result.extraMB.total < TARGET_EXTRA_MB;
    console.log(
      section(
        `Pointer reads of a ${result.payloadMiB} MiB offloaded payload: ${result.readers} at once, ${result.rounds} rounds (gateway ${result.gateway.commit.slice(0, 10)}${result.gateway.changes.length ? " + changes" : ""})`,
        table(
          ["measure", "value"],
          [
            ["offload of the answer (s)", result.offloadSeconds],
            [
              "extra RSS while offloading, tree / workerd (MB)",
              `${result.offloadExtraMB.total.toFixed(1)} / ${result.offloadExtraMB.workerd.toFixed(1)}`,
            ],
            ...(result.r2Writer
              ? [
                  ["the same answer stored whole by the R2 writer (s)", result.r2Writer.seconds],
                  ["extra RSS of its workerd (runtime + local R2) (MB)", result.r2Writer.extraMB.toFixed(1)],
                  ["the gateway's offload beyond it, workerd (MB)", result.offloadBeyondR2WriterMB.toFixed(1)],
                ]
              : []),
            ["reads failed", result.failedReads],
            [
              "RSS before reads, tree / workerd (MB)",
              `${result.rssBeforeMB.total.toFixed(1)} / ${result.rssBeforeMB.workerd.toFixed(1)}`,
            ],
            [
              "extra RSS at peak, tree / workerd (MB)",
              `${result.extraMB.total.toFixed(1)} / ${result.extraMB.workerd.toFixed(1)}`,
            ],
            [
              "read latency median / p99 (ms)",
              `${result.readLatencyMs.median.toFixed(1)} / ${result.readLatencyMs.p99.toFixed(1)}`,
            ],
            [
              "other client idle median / p99 (ms)",
              `${result.otherClientMs.idle.median.toFixed(1)} / ${result.otherClientMs.idle.p99.toFixed(1)}`,
            ],
            [
              "other client during reads median / max (ms)",
              `${result.otherClientMs.duringReads.median.toFixed(1)} / ${result.otherClientMs.duringReads.max.toFixed(1)}`,
            ],
            [`target: extra RSS < ${TARGET_EXTRA_MB} MB`, pass ? "met" : "NOT met"],
          ],
        ),
      ),
    );
    if (result.firstFailure) console.log(`first failed read: ${result.firstFailure.slice(0, 300)}`);
    saveResult(options.out, "payload-reads", result);
  } finally {
    clearTimeout(limit);
    await cleanup();
  }
}

await main();
