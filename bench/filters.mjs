#!/usr/bin/env node
/**
 * `npm run bench` (filters part): what an output filter costs on a large result, and
 * what it saves on a GitHub-like payload.
 *
 * The gateway's own filter code (src/policy/*) is bundled with esbuild and run in Node,
 * on the exact path a filtered tools/call takes (`filterAnswer`: the answer's text in,
 * the filtered answer's text out), beside the path before it (parse the response,
 * `filterToolResult`, serialise), per case: rules (a few pointers, wildcards, variants)
 * and answer layouts (the SDK's structuredContent plus the same JSON as text, pretty
 * text, text only, structuredContent only). Each time is reported as a ratio to
 * `JSON.parse` of the same answer, measured in the same run; both paths must answer the
 * same bytes.
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
    'export { filterToolResult, selectFilter } from "./src/policy/apply-filter.ts"; export { filterAnswer, filterAnswerText } from "./src/policy/filter-answer.ts"; export { checkFilterSet } from "./src/policy/filter-set.ts";',
  );
}

/** What a user keeps of a search: number, title, state, author, label names. */
const SEARCH_RULE = {
  retain: ["/total_count", "/items/*/number", "/items/*/title", "/items/*/state", "/items/*/user/login", "/items/*/labels/*/name", "/items/*/comments"],
  patches: [{ op: "add", path: "/note", value: "filtered by the gateway" }],
};
const FEW_POINTERS = { retain: ["/total_count", "/incomplete_results", "/items/0/title", "/items/1/user/login"] };
const VARIANTS = [
  { test: { path: "/incomplete_results", value: true }, retain: ["/total_count"] },
  { test: { path: "/incomplete_results", value: false }, retain: ["/total_count", "/items/*/number", "/items/*/title"] },
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const { filterToolResult, filterAnswer, filterAnswerText, selectFilter, checkFilterSet } = await loadFilters();
const payload = githubLikePayload(TARGET_MB * 1024 * 1024);
const payloadText = JSON.stringify(payload);
const answer = (result) => JSON.stringify({ jsonrpc: "2.0", id: 1, result });
// The upstream's answer: structuredContent and the same JSON as text (what SDK servers send), or variations.
const SHAPES = {
  sdk: answer({ content: [{ type: "text", text: payloadText }], structuredContent: payload }),
  pretty: answer({ content: [{ type: "text", text: JSON.stringify(payload, null, 2) }], structuredContent: payload }),
  "text only": answer({ content: [{ type: "text", text: payloadText }] }),
  "structured only": answer({ content: [], structuredContent: payload }),
};
const CASES = [
  ["search rule (7 pointers, wildcards, 1 patch)", SEARCH_RULE, "sdk"],
  ["4 pointers, no wildcard", FEW_POINTERS, "sdk"],
  ["search rule, structuredContent only", SEARCH_RULE, "structured only"],
  ["search rule, text pretty-printed", SEARCH_RULE, "pretty"],
  ["search rule, text only", SEARCH_RULE, "text only"],
  ["variants (2, retain)", VARIANTS, "sdk"],
];

function ruleFor(filter) {
  const checked = checkFilterSet("bench", { tools: { github___search_issues: filter } });
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return selectFilter(checked.value, "github___search_issues").filter;
}

/** The path before this change: parse the answer, filter the result, write it. */
function parsedPath(response, filter) {
  const parsed = JSON.parse(response);
  return JSON.stringify({ jsonrpc: "2.0", id: 1, result: filterToolResult(parsed.result, filter, "bench") });
}

/**
 * Median and fastest time of `fn` over RUNS runs (after 3 warm-up runs), run back to
 * back: each path pays for its own garbage. On a shared, loaded machine the fastest run
 * is the steadier figure (other processes only ever add time).
 */
function timesOf(fn) {
  const times = [];
  for (let run = 0; run < RUNS + 3; run++) {
    const took = time(fn);
    if (run >= 3) times.push(took);
  }
  return { median: median(times), min: Math.min(...times) };
}

function measure(response, filter) {
  let oldText = "", newText = "";
  const parse = timesOf(() => JSON.parse(response));
  const old = timesOf(() => (oldText = parsedPath(response, filter)));
  const now = timesOf(() => (newText = filterAnswer(response, 1, filter, "bench").text));
  if (oldText !== newText) throw new Error("the one-pass path answered differently from the parsed path");
  const payloadAfter = JSON.stringify(JSON.parse(newText).result.structuredContent ?? null).length;
  return { responseBytes: response.length, payloadAfter, onePass: filterAnswerText(response, 1, filter, "bench") !== undefined, jsonParseMs: parse, parsedPathMs: old, newPathMs: now, parsedRatio: old.median / parse.median, newRatio: now.median / parse.median, parsedRatioMin: old.min / parse.min, newRatioMin: now.min / parse.min, bytesAfter: newText.length };
}

const cases = CASES.map(([name, filter, shape]) => ({ name, shape, ...measure(SHAPES[shape], ruleFor(filter)) }));
const results = { runs: RUNS, node: process.version, cases };
console.log(`\nOutput filters on a GitHub-like search result (Node ${process.version}, ${RUNS} runs; ratio = time / JSON.parse of the same answer, of medians and of fastest runs)`);
console.log("  case                                          answer MB  JSON.parse ms (median/min)  parsed path (med/min)  new path (med/min)  one-pass taken");
const ratio = (median, min) => `${median.toFixed(2)}x / ${min.toFixed(2)}x`;
for (const c of cases) {
  console.log(
    `  ${c.name.padEnd(46)}${(c.responseBytes / 1024 / 1024).toFixed(2).padStart(9)}  ${`${c.jsonParseMs.median.toFixed(2)} / ${c.jsonParseMs.min.toFixed(2)}`.padStart(26)}  ${ratio(c.parsedRatio, c.parsedRatioMin).padStart(21)}  ${ratio(c.newRatio, c.newRatioMin).padStart(18)}  ${c.onePass ? "yes" : "no (parsed path)"}`,
  );
}
const first = cases[0];
console.log(`  payload (first case): ${payloadText.length} bytes -> ${first.payloadAfter} bytes of structuredContent (${(100 * (1 - first.payloadAfter / payloadText.length)).toFixed(1)}% saved)`);
export { results };
