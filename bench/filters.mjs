#!/usr/bin/env node
/**
 * `npm run bench` (filters part): what an output filter costs on a large result, and
 * what it saves on a GitHub-like payload.
 *
 * The gateway's own filter code (src/features/filters/) is bundled with esbuild and run in Node,
 * on the exact path a filtered tools/call takes (`filterAnswer`: the answer's text in,
 * the filtered answer's text out), beside the path before it (parse the response,
 * `filterToolResult`, serialise), per case: rules (a few pointers, wildcards, variants)
 * and answer layouts (the SDK's structuredContent plus the same JSON as text, pretty
 * text, text only, structuredContent only). Each time is reported as a ratio to
 * `JSON.parse` of the same answer, measured in the same run; both paths must answer the
 * same bytes.
 *
 * With `--base <tree>` (a worktree of another commit, node_modules linked), that tree's
 * `filterAnswer` is bundled too and timed in the same run, its blocks of runs alternating
 * with this tree's: on a loaded machine an A/B in one process is the comparison that
 * holds. Times are wall clock; the fastest block's CPU time (process.cpuUsage, which
 * other processes do not inflate) is reported beside them as a ratio too.
 *
 *   npm run bench:filters
 *   npm run bench:filters -- --runs 50 --mb 1
 *   npm run bench:filters -- --runs 50 --base ../s8-filters-base
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const RUNS = option("runs", 30);
const TARGET_MB = option("mb", 1);
const BASE = args.includes("--base") ? path.resolve(args[args.indexOf("--base") + 1]) : undefined;
/** Runs timed back to back before the next path's turn: each path pays for its own garbage. */
const BLOCK_RUNS = 5;

/** The filter modules of a tree: in src/features/filters/ since features have folders, in src/policy/ before. */
function filtersSource(tree) {
  const dir = existsSync(path.join(tree, "src/features/filters/apply-filter.ts"))
    ? "./src/features/filters"
    : "./src/policy";
  return `export { filterToolResult, selectFilter } from "${dir}/apply-filter.ts"; export { filterAnswer, filterAnswerText } from "${dir}/filter-answer.ts"; export { checkFilterSet } from "${dir}/filter-set.ts";`;
}

function loadFilters() {
  return loadSource(filtersSource(fileURLToPath(new URL("..", import.meta.url))));
}

/** The filter code of another tree, bundled by that tree's own loader (its src/, its node_modules). */
async function loadBase(tree) {
  const { loadSource: loadThere } = await import(pathToFileURL(path.join(tree, "bench/lib/bundle-src.ts")).href);
  return loadThere(filtersSource(tree));
}

/** What a user keeps of a search: number, title, state, author, label names. */
const SEARCH_RULE = {
  retain: [
    "/total_count",
    "/items/*/number",
    "/items/*/title",
    "/items/*/state",
    "/items/*/user/login",
    "/items/*/labels/*/name",
    "/items/*/comments",
  ],
  patches: [{ op: "add", path: "/note", value: "filtered by the gateway" }],
};
const FEW_POINTERS = { retain: ["/total_count", "/incomplete_results", "/items/0/title", "/items/1/user/login"] };
const VARIANTS = [
  { test: { path: "/incomplete_results", value: true }, retain: ["/total_count"] },
  {
    test: { path: "/incomplete_results", value: false },
    retain: ["/total_count", "/items/*/number", "/items/*/title"],
  },
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

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Median and fastest time of each of `fns` over RUNS runs (after 3 warm-up runs each),
 * in blocks of BLOCK_RUNS runs that take turns; and the fastest block's CPU time per run.
 * On a shared, loaded machine the fastest figures are the steadier ones (other
 * processes only ever add time).
 */
function timesOf(fns) {
  const times = fns.map(() => []);
  const cpu = fns.map(() => Infinity);
  fns.forEach((fn) => {
    for (let run = 0; run < 3; run++) fn();
  });
  for (let done = 0; done < RUNS; done += BLOCK_RUNS) {
    fns.forEach((fn, index) => {
      const start = cpuMs();
      for (let run = 0; run < BLOCK_RUNS; run++) times[index].push(time(fn));
      cpu[index] = Math.min(cpu[index], (cpuMs() - start) / BLOCK_RUNS);
    });
  }
  return times.map((all, index) => ({ median: median(all), min: Math.min(...all), cpu: cpu[index] }));
}

function measure(response, filter, baseFilter) {
  let oldText = "",
    newText = "",
    baseText = "";
  const fns = [
    () => JSON.parse(response),
    () => (oldText = parsedPath(response, filter)),
    () => (newText = filterAnswer(response, 1, filter, "bench").text),
  ];
  if (base) fns.push(() => (baseText = base.filterAnswer(response, 1, baseFilter, "bench").text));
  const [parse, old, now, then] = timesOf(fns);
  if (oldText !== newText) throw new Error("the one-pass path answered differently from the parsed path");
  if (base && baseText !== newText) throw new Error("the base tree answered differently");
  const payloadAfter = JSON.stringify(JSON.parse(newText).result.structuredContent ?? null).length;
  const ratios = (t) => t && { median: t.median / parse.median, min: t.min / parse.min, cpu: t.cpu / parse.cpu };
  return {
    responseBytes: response.length,
    payloadAfter,
    onePass: filterAnswerText(response, 1, filter, "bench") !== undefined,
    jsonParseMs: parse,
    parsedPathMs: old,
    newPathMs: now,
    baseMs: then,
    parsedRatio: old.median / parse.median,
    newRatio: now.median / parse.median,
    parsedRatioMin: old.min / parse.min,
    newRatioMin: now.min / parse.min,
    ratios: { parsed: ratios(old), now: ratios(now), base: ratios(then) },
    bytesAfter: newText.length,
  };
}

const base = BASE ? await loadBase(BASE) : undefined;
const baseRuleFor = (filter) => {
  const checked = base.checkFilterSet("bench", { tools: { github___search_issues: filter } });
  return base.selectFilter(checked.value, "github___search_issues").filter;
};
const cases = CASES.map(([name, filter, shape]) => ({
  name,
  shape,
  ...measure(SHAPES[shape], ruleFor(filter), base && baseRuleFor(filter)),
}));
const results = { runs: RUNS, node: process.version, base: BASE, cases };
console.log(
  `\nOutput filters on a GitHub-like search result (Node ${process.version}, ${RUNS} runs; ratio = time / JSON.parse of the same answer: of medians / of fastest runs / of fastest blocks' CPU time)`,
);
if (BASE) console.log(`  base: the filter code of ${BASE}, timed in the same run`);
console.log(
  `  case                                          answer MB  JSON.parse ms (med/min)  parsed path (med/min/cpu)  new path (med/min/cpu)${BASE ? "   base (med/min/cpu)" : ""}  one-pass taken`,
);
const ratio = (r) => `${r.median.toFixed(2)}x / ${r.min.toFixed(2)}x / ${r.cpu.toFixed(2)}x`;
for (const c of cases) {
  console.log(
    `  ${c.name.padEnd(46)}${(c.responseBytes / 1024 / 1024).toFixed(2).padStart(9)}  ${`${c.jsonParseMs.median.toFixed(2)} / ${c.jsonParseMs.min.toFixed(2)}`.padStart(23)}  ${ratio(c.ratios.parsed).padStart(25)}  ${ratio(c.ratios.now).padStart(22)}${BASE ? `  ${ratio(c.ratios.base).padStart(19)}` : ""}  ${c.onePass ? "yes" : "no (parsed path)"}`,
  );
}
const first = cases[0];
console.log(
  `  payload (first case): ${payloadText.length} bytes -> ${first.payloadAfter} bytes of structuredContent (${(100 * (1 - first.payloadAfter / payloadText.length)).toFixed(1)}% saved)`,
);
export { results };
