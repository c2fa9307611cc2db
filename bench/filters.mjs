#!/usr/bin/env node
/**
 * `npm run bench` (filters part): what an output filter costs on a large result, and
 * what it saves on a GitHub-like payload.
 *
 * The gateway's own filter code (src/policy/*) is bundled with esbuild and run in Node,
 * on the exact path a filtered tools/call takes: parse the upstream's response, filter
 * `structuredContent` and the JSON text block, serialise the answer. Its time is
 * reported as a ratio to `JSON.parse` of the same bytes, measured in the same run.
 *
 *   npm run bench:filters
 *   npm run bench:filters -- --runs 50 --mb 1
 */
import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const RUNS = option("runs", 30);
const TARGET_MB = option("mb", 1);

function loadFilters() {
  return loadSource(
    'export { filterToolResult, selectFilter } from "./src/policy/apply-filter.ts"; export { checkFilterSet } from "./src/policy/filter-set.ts";',
  );
}

/** What a user keeps of a search: number, title, state, author, label names. */
const SET = {
  tools: {
    github___search_issues: {
      retain: ["/total_count", "/items/*/number", "/items/*/title", "/items/*/state", "/items/*/user/login", "/items/*/labels/*/name", "/items/*/comments"],
      patches: [{ op: "add", path: "/note", value: "filtered by the gateway" }],
    },
  },
};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const { filterToolResult, selectFilter, checkFilterSet } = await loadFilters();
const checked = checkFilterSet("bench", SET);
if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
const rule = selectFilter(checked.value, "github___search_issues");
const payload = githubLikePayload(TARGET_MB * 1024 * 1024);
const payloadText = JSON.stringify(payload);
// The upstream's answer: structuredContent and the same JSON as text (what SDK servers send).
const response = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: payloadText }], structuredContent: payload } });

const parseTimes = [];
const filterTimes = [];
let filteredText = "";
for (let run = 0; run < RUNS + 3; run++) {
  const parse = time(() => JSON.parse(response));
  const filter = time(() => {
    const parsed = JSON.parse(response);
    const out = filterToolResult(parsed.result, rule.filter, "bench");
    filteredText = JSON.stringify({ jsonrpc: "2.0", id: 1, result: out });
  });
  if (run >= 3) {
    parseTimes.push(parse);
    filterTimes.push(filter);
  }
}
if (process.env.BENCH_FILTER_DETAIL) {
  const parsed = JSON.parse(response);
  const textTimes = [], applyTimes = [];
  for (let run = 0; run < 10; run++) {
    textTimes.push(time(() => JSON.parse(payloadText)));
    applyTimes.push(time(() => filterToolResult({ structuredContent: JSON.parse(payloadText) }, rule.filter, "bench")));
  }
  console.log("detail: parse payload", median(textTimes), "parse+filter structured", median(applyTimes));
}
const filteredPayload = JSON.stringify(JSON.parse(filteredText).result.structuredContent);
const results = {
  runs: RUNS,
  responseBytes: response.length,
  jsonParseMedianMs: median(parseTimes),
  filterPathMedianMs: median(filterTimes),
  ratioToJsonParse: median(filterTimes) / median(parseTimes),
  payloadBytesBefore: payloadText.length,
  payloadBytesAfter: filteredPayload.length,
  bytesSavedPercent: 100 * (1 - filteredPayload.length / payloadText.length),
};
console.log("\nOutput filter on a GitHub-like search result (Node " + process.version + ")");
console.log(`  response: ${(results.responseBytes / 1024 / 1024).toFixed(2)} MB (structuredContent + the same JSON as text), ${RUNS} runs`);
console.log(`  JSON.parse of the response:              median ${results.jsonParseMedianMs.toFixed(2)} ms`);
console.log(`  filter path (parse, filter both, write): median ${results.filterPathMedianMs.toFixed(2)} ms`);
console.log(`  ratio to JSON.parse:                     ${results.ratioToJsonParse.toFixed(2)}x`);
console.log(`  payload: ${results.payloadBytesBefore} bytes -> ${results.payloadBytesAfter} bytes (${results.bytesSavedPercent.toFixed(1)}% saved)`);
export { results };
