#!/usr/bin/env node
/**
 * Where the one-pass output filter pays: CPU time and heap peak of the two paths a filtered
 * tools/call can take (`filterAnswer`, one pass over the answer's text, against parsing the
 * answer and `filterToolResult`), on GitHub-like answers of 1 and 10 MiB. Each case runs in
 * a fresh process (its own heap); the peak is the most heap in use before any collection
 * while the filter runs (v8.GCProfiler), above what was in use before it.
 *
 *   node bench/filter-memory.mjs             (every case, a table)
 *   node --expose-gc bench/filter-memory.mjs <MiB> <parsed|onepass> <sdk|structured> <search|variants>
 */
import { execFileSync } from "node:child_process";
import v8 from "node:v8";
import { fileURLToPath } from "node:url";
import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";

const RULES = {
  search: {
    retain: ["/total_count", "/items/*/number", "/items/*/title", "/items/*/user/login", "/items/*/labels/*/name"],
    patches: [{ op: "add", path: "/note", value: "filtered by the gateway" }],
  },
  variants: [
    { test: { path: "/incomplete_results", value: true }, retain: ["/total_count"] },
    { test: { path: "/incomplete_results", value: false }, retain: ["/total_count", "/items/*/title"] },
  ],
};
/** Runs per case after three warm-up runs: the CPU time reported is the median. */
const RUNS = 7;

async function measureOne([mb, path, shape, rule]) {
  const dir = "./src/features/filters";
  const f = await loadSource(
    `export { filterToolResult, selectFilter } from "${dir}/apply-filter.ts"; export { filterAnswer } from "${dir}/filter-answer.ts"; export { checkFilterSet } from "${dir}/filter-set.ts";`,
  );
  const filter = f.selectFilter(f.checkFilterSet("bench", { tools: { t: RULES[rule] } }).value, "t").filter;
  // The SDK layout carries the payload twice (structuredContent, and the same JSON as text).
  const payload = githubLikePayload((Number(mb) * 2 ** 20) / (shape === "sdk" ? 2 : 1));
  const content = shape === "sdk" ? [{ type: "text", text: JSON.stringify(payload) }] : [];
  const answer = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content, structuredContent: payload } });
  const run =
    path === "onepass"
      ? () => f.filterAnswer(answer, 1, filter, "bench").text
      : () =>
          JSON.stringify({ jsonrpc: "2.0", id: 1, result: f.filterToolResult(JSON.parse(answer).result, filter, "b") });
  for (let i = 0; i < 3; i++) run();
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const profiler = new v8.GCProfiler();
  profiler.start();
  run();
  let peak = process.memoryUsage().heapUsed;
  for (const gc of profiler.stop().statistics) peak = Math.max(peak, gc.beforeGC.heapStatistics.usedHeapSize);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    times.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  const answerMiB = answer.length / 2 ** 20;
  return { answerMiB, cpuMs: times[RUNS >> 1], heapPeakMiB: (peak - before) / 2 ** 20 };
}

if (process.argv.length > 2) console.log(JSON.stringify(await measureOne(process.argv.slice(2))));
else {
  console.log("MiB  layout      rule      path     CPU ms (median)  heap peak MiB");
  for (const mb of ["1", "10"])
    for (const [shape, rule] of [
      ["sdk", "search"],
      ["structured", "search"],
      ["sdk", "variants"],
    ])
      for (const path of ["parsed", "onepass"]) {
        const args = ["--expose-gc", fileURLToPath(import.meta.url), mb, path, shape, rule];
        const r = JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8" }));
        console.log(
          `${mb.padEnd(5)}${shape.padEnd(12)}${rule.padEnd(10)}${path.padEnd(9)}${r.cpuMs.toFixed(1).padStart(15)}  ${r.heapPeakMiB.toFixed(1).padStart(13)}`,
        );
      }
}
