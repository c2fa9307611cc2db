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
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const RUNS = option("runs", 30);
const TARGET_MB = option("mb", 1);

async function loadFilters() {
  // Inside node_modules, so that the bundle's external packages resolve.
  const dir = mkdtempSync(path.join(ROOT, "node_modules", ".bench-"));
  const outfile = path.join(dir, "filters.mjs");
  await build({
    stdin: {
      contents: 'export { filterToolResult, selectFilter } from "./src/policy/apply-filter.ts"; export { checkFilterSet } from "./src/policy/filter-set.ts";',
      resolveDir: ROOT,
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    external: ["yaml"],
    mainFields: ["module", "main"],
    outfile,
    logLevel: "error",
  });
  const module = await import(pathToFileURL(outfile).href);
  rmSync(dir, { recursive: true, force: true });
  return module;
}

/** A GitHub-like "search issues" answer: many fields per item, nested users and labels, long URLs. */
function githubLikePayload(targetBytes) {
  const items = [];
  const user = (i) => ({
    login: `user${i}`, id: 1000 + i, node_id: `MDQ6VXNlcj${i}`, avatar_url: `https://avatars.githubusercontent.com/u/${1000 + i}?v=4`,
    gravatar_id: "", url: `https://api.github.com/users/user${i}`, html_url: `https://github.com/user${i}`,
    followers_url: `https://api.github.com/users/user${i}/followers`, following_url: `https://api.github.com/users/user${i}/following{/other_user}`,
    gists_url: `https://api.github.com/users/user${i}/gists{/gist_id}`, starred_url: `https://api.github.com/users/user${i}/starred{/owner}{/repo}`,
    subscriptions_url: `https://api.github.com/users/user${i}/subscriptions`, organizations_url: `https://api.github.com/users/user${i}/orgs`,
    repos_url: `https://api.github.com/users/user${i}/repos`, events_url: `https://api.github.com/users/user${i}/events{/privacy}`,
    received_events_url: `https://api.github.com/users/user${i}/received_events`, type: "User", site_admin: false,
  });
  for (let i = 0; JSON.stringify(items).length < targetBytes; i++) {
    items.push({
      url: `https://api.github.com/repos/acme/widgets/issues/${i}`, repository_url: "https://api.github.com/repos/acme/widgets",
      labels_url: `https://api.github.com/repos/acme/widgets/issues/${i}/labels{/name}`, comments_url: `https://api.github.com/repos/acme/widgets/issues/${i}/comments`,
      events_url: `https://api.github.com/repos/acme/widgets/issues/${i}/events`, html_url: `https://github.com/acme/widgets/issues/${i}`,
      id: 5_000_000 + i, node_id: `I_kwDOA${i}`, number: i, title: `Widget ${i} breaks when the gadget is rotated`,
      user: user(i % 50), labels: [{ id: 1, node_id: "LA_1", url: "https://api.github.com/repos/acme/widgets/labels/bug", name: "bug", color: "d73a4a", default: true, description: "Something isn't working" }],
      state: i % 3 === 0 ? "closed" : "open", locked: false, assignee: null, assignees: [], milestone: null, comments: i % 7,
      created_at: "2026-10-01T12:00:00Z", updated_at: "2026-11-01T12:00:00Z", closed_at: null, author_association: "CONTRIBUTOR",
      active_lock_reason: null, body: `Steps to reproduce issue ${i}: rotate the gadget by ninety degrees and watch the widget fall over. `.repeat(3),
      reactions: { url: `https://api.github.com/repos/acme/widgets/issues/${i}/reactions`, total_count: 0, "+1": 0, "-1": 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
      timeline_url: `https://api.github.com/repos/acme/widgets/issues/${i}/timeline`, performed_via_github_app: null, state_reason: null, score: 1.0,
    });
  }
  return { total_count: items.length, incomplete_results: false, items };
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
