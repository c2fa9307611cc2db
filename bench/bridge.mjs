#!/usr/bin/env node
/**
 * `npm run bench:bridge`: what the bridge (eras/call-bridge.ts) costs a 2026-07-28 client.
 * Starts the SDK v1 "alpha" upstream (test/fixtures/sdk-upstream.ts) and the gateway
 * (`npm start`), then interleaves, after a warm-up:
 * - a small tools/call (echo) from a client that declares no capability the upstream
 *   may ask for: relayed directly;
 * - the same call from a client that declares elicitation: it runs in a BridgedCall
 *   Durable Object, in case the upstream asks;
 * - a whole elicitation (ask_user): the input_required answer and the retry that completes it.
 * Reports median latencies and the bridged call's as a multiple of the direct one's.
 *
 *   npm run bench:bridge
 *   npm run bench:bridge -- --iterations 400 --warmup 50
 *
 * Results are printed and written to bench/results/bridge-<timestamp>.json.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../test/fixtures/sdk-upstream.ts";
import { interleavedLatency } from "./lib/load.ts";
import { hardLimit } from "./lib/hard-limit.ts";
import { integerOption, readOptions } from "./lib/options.ts";
import { section, table, saveResult } from "./lib/report.ts";
import { summarize } from "./lib/stats.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MODERN = "2026-07-28";
const HARD_LIMIT_MS = 10 * 60_000;

const OPTIONS = { iterations: ["BENCH_ITERATIONS", "200"], warmup: ["BENCH_WARMUP", "30"] };

let nextId = 1;

/** One modern tools/call; returns its final JSON-RPC response, or throws. */
async function modernCall(url, name, args, capabilities, extra = {}) {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: nextId++,
    method: "tools/call",
    params: {
      name,
      arguments: args,
      ...extra,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  });
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body,
  });
  const text = await response.text();
  const last = text.startsWith("{")
    ? text
    : text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        .slice(6);
  const message = JSON.parse(last);
  if (response.status !== 200 || !message.result)
    throw new Error(`${name}: HTTP ${response.status} ${last.slice(0, 200)}`);
  return message;
}

async function main() {
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const raw = readOptions(OPTIONS, process.argv.slice(2));
  const iterations = integerOption(raw, "iterations", 1);
  const warmup = integerOption(raw, "warmup", 0);
  const stops = [];
  const disarm = hardLimit("bench:bridge", HARD_LIMIT_MS);
  try {
    const alpha = await startAlpha();
    stops.push(alpha.close);
    const state = mkdtempSync(path.join(os.tmpdir(), "bench-bridge-"));
    stops.push(async () => rmSync(state, { recursive: true, force: true }));
    const gateway = await startGateway({
      port: await freePort(),
      vars: { UPSTREAMS: [{ name: "alpha", url: alpha.url }], SESSION_SECRET: randomBytes(32).toString("hex") },
      persistTo: state,
    });
    stops.push(gateway.stop);
    const url = `${gateway.url}/mcp/alpha`;
    const targets = [
      { name: "echo, direct (no capability to bridge)", call: () => modernCall(url, "echo", { text: "hi" }, {}) },
      {
        name: "echo, bridged (elicitation declared)",
        call: () => modernCall(url, "echo", { text: "hi" }, { elicitation: {} }),
      },
      {
        name: "elicitation: input_required + retry",
        call: async () => {
          const first = await modernCall(url, "ask_user", {}, { elicitation: {} });
          const key = Object.keys(first.result.inputRequests)[0];
          const done = await modernCall(
            url,
            "ask_user",
            {},
            { elicitation: {} },
            {
              inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } },
              requestState: first.result.requestState,
            },
          );
          if (done.result.resultType !== "complete") throw new Error("the elicitation did not complete");
        },
      },
    ];
    const started = new Date().toISOString();
    const samples = await interleavedLatency(targets, iterations, warmup);
    const latency = Object.fromEntries([...samples].map(([name, values]) => [name, summarize(values)]));
    const direct = latency[targets[0].name].median;
    const bridged = latency[targets[1].name].median;
    const result = {
      startedAt: started,
      iterations,
      warmup,
      machine: { cpus: os.cpus().length, loadAvg: os.loadavg() },
      latency,
      bridgedOverDirect: bridged / direct,
      bridgeAddedMs: bridged - direct,
    };
    console.log(
      [
        `mcp-edge-gateway bridge benchmark, ${started}: SDK v1 upstream, 2026-07-28 requests, ${iterations} interleaved rounds after ${warmup} warm-up; load average ${os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")}`,
        section(
          "Latency through the gateway (npm start), ms",
          table(
            ["call", "median", "p90", "p99", "n"],
            Object.entries(latency).map(([name, s]) => [name, s.median, s.p90, s.p99, s.n]),
          ),
        ),
        section(
          "The Durable Object hop",
          table(["bridged / direct (median)", "added ms"], [[bridged / direct, bridged - direct]]),
        ),
      ].join("\n"),
    );
    saveResult(path.join(ROOT, "bench", "results"), "bridge", result, started);
  } finally {
    disarm();
    for (const stop of stops.reverse())
      await stop().catch((error) => console.error(`[bench:bridge] while stopping: ${error}`));
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`[bench:bridge] ${error.stack ?? error}`);
    process.exit(1);
  },
);
