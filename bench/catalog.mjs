#!/usr/bin/env node
/**
 * `npm run bench:catalog`: what the catalog modes save and how well tool search finds
 * (issue 19, docs/tool-search.md).
 *
 * The catalog is real: MCP servers installed from npm at bench time and asked for their
 * tools over stdio (bench/catalog/servers.mjs), served to the gateway (`npm start`, i.e.
 * wrangler dev, so workerd) by fixture upstreams on 127.0.0.1. It reports:
 *
 *   - tokens of the tools/list answer on /mcp per mode (full, compact, search), counted
 *     with gpt-tokenizer (o200k_base, the GPT-4o encoding);
 *   - recall@1, recall@5 and MRR (within 20) of sys___search_tools over the labeled
 *     tasks of bench/catalog/tasks.json, per half: a task's half is fixed by a hash of its
 *     text (FNV-1a, even: tuning, odd: untuned), so it was decided before any tuning. The
 *     untuned half is the figure that counts; only the tuning half's misses are printed,
 *     with those of bench/catalog/dev-tasks.json (more tasks tuned on, reported apart);
 *     bench/catalog/validation-tasks.json is a held-out batch scored beside them, its
 *     misses never printed (an estimate of how far a change carries, never tuned on);
 *     each of these two is also scored "clean", without its tasks of which a task tuned on
 *     is a copy or near copy (80% of the same words): ten tasks of the untuned half were
 *     later written again, word for word, into dev-tasks.json and tuned on;
 *   - search latency at 100 and 1,000 tools: sys___search_tools through the gateway in
 *     workerd (HTTP round trip on loopback, which includes the tools/list fan-out to the
 *     fixture upstream that every search does), tools/list alone on the same route for
 *     comparison, and the index query alone in Node (the same code, bundled by esbuild),
 *     because workerd's clock does not advance during computation; the first search (its
 *     index built) is timed after the route's first tools/list (its upstream's first contact).
 *
 *   npm run bench:catalog
 *   npm run bench:catalog -- --searches 100
 *   npm run bench:catalog -- --skip-latency      (tokens and recall only)
 *   npm run bench:catalog -- --set tuning,dev    (only these sets: untuned, tuning, dev,
 *                                                 validation; while tuning, leave the
 *                                                 untuned half and validation out)
 *
 * Results are printed and written to bench/results/catalog-<timestamp>.json.
 */
import { build } from "esbuild";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { countTokens } from "gpt-tokenizer";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { installServers, listServers, serveFixtures } from "./catalog/servers.mjs";
import { listAll, session } from "./lib/mcp-session.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HARD_LIMIT_MS = 15 * 60_000;
const RANK_DEPTH = 20;
const LATENCY_SIZES = [100, 1_000];
const SETS = ["untuned", "tuning", "dev", "validation"];
const { values: options } = parseArgs({
  options: {
    searches: { type: "string", default: "60" },
    "skip-latency": { type: "boolean", default: false },
    set: { type: "string", default: SETS.join(",") },
    out: { type: "string", default: path.join(ROOT, "bench", "results") },
  },
});
const SEARCHES = Number(options.searches);
/** The sets of tasks scored (all by default); misses are printed for the tuning half and dev tasks only. */
const CHOSEN_SETS = new Set(options.set.split(",").map((set) => set.trim()));
for (const set of CHOSEN_SETS)
  if (!SETS.includes(set)) throw new Error(`--set: ${set} is not one of ${SETS.join(", ")}`);
/** The sets whose misses are printed: those tuned on. */
const TUNED_SETS = new Set(["tuning", "dev"]);

const hardLimit = setTimeout(() => {
  console.error(`[catalog] over ${HARD_LIMIT_MS / 60_000} minutes: stopping`);
  process.exit(1);
}, HARD_LIMIT_MS);
hardLimit.unref();

/** FNV-1a of a text (32 bits): decides a task's half. */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

const search = async (client, query, limit) =>
  JSON.parse(
    (await client.send("tools/call", { name: "sys___search_tools", arguments: { query, limit } })).message.result
      .content[0].text,
  );

function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timed(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function tokensPerMode(base) {
  const out = {};
  for (const mode of ["full", "compact", "search"]) {
    const tools = await listAll(await session(`${base}/mcp?catalog=${mode}`));
    const json = JSON.stringify({ tools });
    out[mode] = { tools: tools.length, bytes: Buffer.byteLength(json), tokens: countTokens(json) };
  }
  for (const mode of ["compact", "search"]) out[mode].ofFull = out[mode].tokens / out.full.tokens;
  return out;
}

/** A task's words, as a set (lower case, letters and digits). */
function wordsOf(task) {
  return new Set(
    task
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, " ")
      .trim()
      .split(" "),
  );
}

/**
 * Whether `task` is a copy or near copy of a task tuned on: at least NEAR_COPY of their
 * words in common (Jaccard). Some tasks of the untuned half were later written again,
 * word for word, into dev-tasks.json and tuned on; they are scored apart.
 */
const NEAR_COPY = 0.8;
function nearCopyOf(tunedWords, task) {
  const words = wordsOf(task);
  return tunedWords.some((other) => {
    let shared = 0;
    for (const word of words) if (other.has(word)) shared++;
    return shared / (words.size + other.size - shared) >= NEAR_COPY;
  });
}

async function accuracy(base, tasks, devTasks, validationTasks) {
  const client = await session(`${base}/mcp?catalog=search`);
  const halves = { tuning: [], untuned: [], "untuned, clean": [], dev: [], validation: [], "validation, clean": [] };
  const tunedWords = [...tasks.filter(([task]) => fnv1a(task) % 2 === 0), ...devTasks].map(([task]) => wordsOf(task));
  const misses = [];
  const labeled = [
    ...tasks.map(([task, expected]) => [task, expected, fnv1a(task) % 2 === 0 ? "tuning" : "untuned"]),
    ...devTasks.map(([task, expected]) => [task, expected, "dev"]),
    ...validationTasks.map(([task, expected]) => [task, expected, "validation"]),
  ].filter(([, , half]) => CHOSEN_SETS.has(half));
  for (const [task, expected, half] of labeled) {
    const found = await search(client, task, RANK_DEPTH);
    const names = found.tools.map((tool) => tool.name);
    const rank = names.findIndex((name) => expected.includes(name)) + 1;
    halves[half].push(rank);
    if ((half === "untuned" || half === "validation") && !nearCopyOf(tunedWords, task))
      halves[`${half}, clean`].push(rank);
    if (TUNED_SETS.has(half) && rank !== 1)
      misses.push({ task, expected, rank: rank || `>${RANK_DEPTH}`, top: names.slice(0, 3) });
  }
  const score = (ranks) => ({
    tasks: ranks.length,
    recallAt1: ranks.filter((r) => r === 1).length / ranks.length,
    recallAt5: ranks.filter((r) => r >= 1 && r <= 5).length / ranks.length,
    mrr: ranks.reduce((sum, r) => sum + (r > 0 ? 1 / r : 0), 0) / ranks.length,
  });
  const scored = Object.fromEntries(
    Object.entries(halves)
      .filter(([half]) => CHOSEN_SETS.has(half.split(",")[0]))
      .map(([half, ranks]) => [half, score(ranks)]),
  );
  const all =
    CHOSEN_SETS.has("tuning") && CHOSEN_SETS.has("untuned")
      ? { all: score([...halves.tuning, ...halves.untuned]) }
      : {};
  return { ...scored, ...all, tuningMisses: misses };
}

/** `size` tools from the real ones, copied under new names where there are not enough. */
function sized(catalog, size) {
  const all = Object.entries(catalog).flatMap(([upstream, tools]) =>
    tools.map((tool) => ({ ...tool, name: `${upstream}_${tool.name}` })),
  );
  return Array.from({ length: size }, (_, i) => {
    const tool = all[i % all.length];
    const copy = Math.floor(i / all.length);
    return copy === 0 ? tool : { ...tool, name: `${tool.name}_${copy}` };
  });
}

async function latencyInGateway(catalog, tasks) {
  const fixtures = await serveFixtures(
    Object.fromEntries(LATENCY_SIZES.map((size) => [`size${size}`, sized(catalog, size)])),
  );
  const gateway = await startGateway({ port: await freePort(), vars: { UPSTREAMS: fixtures.upstreams } });
  try {
    const out = {};
    for (const size of LATENCY_SIZES) {
      const route = `${gateway.url}/mcp/size${size}`;
      const searcher = await session(`${route}?catalog=search`);
      const lister = await session(route);
      // A tools/list first takes the route's first contact with its upstream, so the first search times the index.
      const firstList = await timed(() => listAll(lister));
      const first = await timed(() => search(searcher, tasks[0][0], 5));
      const searches = [];
      const lists = [];
      for (let i = 0; i < SEARCHES; i++) {
        searches.push(await timed(() => search(searcher, tasks[(i + 1) % tasks.length][0], 5)));
        lists.push(await timed(() => listAll(lister)));
      }
      out[size] = {
        firstListMs: firstList,
        firstSearchMs: first,
        searchP50Ms: percentile(searches, 50),
        searchP90Ms: percentile(searches, 90),
        listP50Ms: percentile(lists, 50),
      };
    }
    return out;
  } finally {
    await gateway.stop();
    await fixtures.close();
  }
}

/** The index query alone, in Node: src/features/catalog/search-index.ts bundled by esbuild. */
async function latencyOfIndex(catalog, tasks) {
  const dir = mkdtempSync(path.join(ROOT, "node_modules", ".bench-catalog-"));
  const outfile = path.join(dir, "index.mjs");
  try {
    await build({
      entryPoints: [path.join(ROOT, "src", "features", "catalog", "search-index.ts")],
      bundle: true,
      format: "esm",
      platform: "node",
      outfile,
      logLevel: "error",
    });
    const { searchCatalog } = await import(pathToFileURL(outfile).href);
    const out = {};
    for (const size of LATENCY_SIZES) {
      const tools = sized(catalog, size).map((definition) => ({
        name: definition.name,
        upstream: definition.name.split("_")[0],
        definition,
        raw: JSON.stringify(definition),
      }));
      const indexed = { tools, digest: `bench-${size}`, truncated: false };
      const buildMs = await timed(async () => searchCatalog(indexed, { query: "warm up", limit: 5 }));
      const samples = [];
      for (let i = 0; i < Math.max(SEARCHES, 200); i++)
        samples.push(await timed(async () => searchCatalog(indexed, { query: tasks[i % tasks.length][0], limit: 5 })));
      out[size] = { buildMs, queryP50Ms: percentile(samples, 50), queryP90Ms: percentile(samples, 90) };
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fixed = (n, digits = 3) => Number(n.toFixed(digits));

async function main() {
  const tasks = JSON.parse(readFileSync(path.join(ROOT, "bench", "catalog", "tasks.json"), "utf8")).tasks;
  const devTasks = JSON.parse(readFileSync(path.join(ROOT, "bench", "catalog", "dev-tasks.json"), "utf8")).tasks;
  const validationTasks = JSON.parse(
    readFileSync(path.join(ROOT, "bench", "catalog", "validation-tasks.json"), "utf8"),
  ).tasks;
  installServers();
  const catalog = await listServers();
  const counts = Object.fromEntries(Object.entries(catalog).map(([name, tools]) => [name, tools.length]));
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(`[catalog] ${total} tools from ${Object.keys(counts).length} servers: ${JSON.stringify(counts)}`);

  const fixtures = await serveFixtures(catalog);
  const gateway = await startGateway({ port: await freePort(), vars: { UPSTREAMS: fixtures.upstreams } });
  let tokens;
  let scores;
  try {
    tokens = await tokensPerMode(gateway.url);
    scores = await accuracy(gateway.url, tasks, devTasks, validationTasks);
  } finally {
    await gateway.stop();
    await fixtures.close();
  }
  const skip = options["skip-latency"];
  const inGateway = skip ? {} : await latencyInGateway(catalog, tasks);
  const index = skip ? {} : await latencyOfIndex(catalog, tasks);

  console.log("\n## tools/list on /mcp, per mode (o200k_base tokens)");
  for (const [mode, t] of Object.entries(tokens))
    console.log(
      `${mode.padEnd(8)} ${String(t.tools).padStart(4)} tools ${String(t.bytes).padStart(8)} bytes ${String(t.tokens).padStart(7)} tokens${t.ofFull !== undefined ? `  (${(t.ofFull * 100).toFixed(1)}% of full)` : ""}`,
    );
  console.log(
    `\n## sys___search_tools over ${tasks.length} labeled tasks (and ${devTasks.length} more tuned on, dev-tasks.json; ${validationTasks.length} held out, validation-tasks.json)`,
  );
  console.log(
    `("clean": without the tasks of which a task tuned on is a copy or near copy, ${NEAR_COPY * 100}% of the same words or more)`,
  );
  for (const half of ["untuned", "untuned, clean", "tuning", "all", "dev", "validation", "validation, clean"]) {
    const s = scores[half];
    if (s === undefined) continue;
    console.log(
      `${half.padEnd(17)} ${String(s.tasks).padStart(4)} tasks  recall@1 ${s.recallAt1.toFixed(3)}  recall@5 ${s.recallAt5.toFixed(3)}  MRR ${s.mrr.toFixed(3)}`,
    );
  }
  console.log(`\ntuning half and dev tasks, not first (${scores.tuningMisses.length}):`);
  for (const miss of scores.tuningMisses) console.log(`  ${miss.rank}\t${miss.task}\t→ ${miss.top.join(", ")}`);
  console.log("\n## search latency");
  for (const size of skip ? [] : LATENCY_SIZES) {
    const g = inGateway[size];
    const i = index[size];
    console.log(
      `${String(size).padStart(5)} tools: through the gateway p50 ${fixed(g.searchP50Ms, 1)} ms (p90 ${fixed(g.searchP90Ms, 1)}, first ${fixed(g.firstSearchMs, 1)}, after the route's first tools/list, ${fixed(g.firstListMs, 1)}; tools/list alone p50 ${fixed(g.listP50Ms, 1)} ms); index query alone p50 ${fixed(i.queryP50Ms)} ms (p90 ${fixed(i.queryP90Ms)}, build ${fixed(i.buildMs, 1)} ms)`,
    );
  }
  const result = {
    startedAt: new Date().toISOString(),
    servers: counts,
    tools: total,
    tokens,
    scores,
    latency: { inGateway, index },
    searches: SEARCHES,
  };
  mkdirSync(options.out, { recursive: true });
  const file = path.join(options.out, `catalog-${result.startedAt.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\n[catalog] written to ${path.relative(ROOT, file)}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
