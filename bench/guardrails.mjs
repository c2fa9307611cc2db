#!/usr/bin/env node
/**
 * `npm run bench` (guardrails part): what guardrails add to a small call and to a 10 MB
 * result, beside the same answer without them.
 *
 * The gateway's guardrails code (src/features/guardrails/) is bundled with esbuild and run
 * in Node on the path a guarded result takes (`guardValue` over the answer's `result`:
 * every string read by the rule's detectors, matches spliced). Per case the time is given
 * beside `JSON.parse` of the same answer, which any gateway that reads the answer pays
 * (without guardrails the relay does not even do that: it passes the bytes on). Times
 * are wall clock (median and fastest run) and the fastest block's CPU time
 * (process.cpuUsage, which other processes do not inflate).
 *
 *   npm run bench:guardrails
 *   npm run bench:guardrails -- --runs 10 --mb 10
 */
import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const RUNS = option("runs", 10);
const TARGET_MB = option("mb", 10);

const { askOutside, checkGuardrails, guardValue, guardedStream, pathSpan, readStrings } = await loadSource(
  [
    'export { checkGuardrails } from "./src/features/guardrails/document.ts";',
    'export { guardValue } from "./src/features/guardrails/guard-json.ts";',
    'export { pathSpan } from "./src/core/raw-json.ts";',
    'export { readStrings } from "./src/features/guardrails/guard-json.ts";',
    'export { askOutside } from "./src/features/guardrails/outside-checks.ts";',
    'export { guardedStream } from "./src/features/guardrails/stream-guard.ts";',
  ].join(" "),
);
const SECRET_KEYS = ["password", "secret", "token", "api_key", "authorization", "private_key"];

function rulesOf(document) {
  const checked = checkGuardrails(document);
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return checked.value;
}

const ALL = rulesOf({ rules: [{ name: "all", action: "redact", detectors: ["secrets", "personal", "instructions"] }] });
const PATTERN = rulesOf({
  patterns: { order: { pattern: "ACME-[0-9]{6}" } },
  rules: [{ name: "orders", action: "redact", detectors: ["pattern:order"] }],
});

const answer = (result) => JSON.stringify({ jsonrpc: "2.0", id: 1, result });
const payload = githubLikePayload(TARGET_MB * 1024 * 1024);
const big = answer({ content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload });
const small = answer({
  content: [{ type: "text", text: "alpha: the build of main passed, 42 tests in 3.2 s; ada@example.com was told" }],
});

function guard(text, guardrails) {
  const span = pathSpan(text, ["result"]);
  return guardValue(text, span, guardrails.rules, "result", { secretKeys: SECRET_KEYS, patterns: guardrails.patterns });
}

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Median, fastest and fastest-block CPU ms of `fn`, each run repeated `inner` times (after a warm-up). */
function timeOf(fn, runs, inner = 1) {
  for (let i = 0; i < Math.min(3, runs); i++) fn();
  const times = [];
  let cpu = Infinity;
  for (let run = 0; run < runs; run++) {
    const [start, startCpu] = [process.hrtime.bigint(), cpuMs()];
    for (let i = 0; i < inner; i++) fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6 / inner);
    cpu = Math.min(cpu, (cpuMs() - startCpu) / inner);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], cpu };
}

const CASES = [
  ["small call, secrets+personal+instructions", small, ALL, 10, 200],
  ["small call, one pattern", small, PATTERN, 10, 200],
  [`${TARGET_MB} MB result, secrets+personal+instructions`, big, ALL, RUNS, 1],
  [`${TARGET_MB} MB result, one pattern`, big, PATTERN, RUNS, 1],
];

console.log(
  `\nGuardrails on a tools/call result (Node ${process.version}; ms per answer: median / fastest / fastest CPU)`,
);
console.log(
  `  case                                              answer bytes   JSON.parse           guardrails            hits`,
);
const fmt = (t) => `${t.median.toFixed(3)} / ${t.min.toFixed(3)} / ${t.cpu.toFixed(3)}`;
const results = [];
for (const [name, text, guardrails, runs, inner] of CASES) {
  const parse = timeOf(() => JSON.parse(text), runs, inner);
  let hits = [];
  const guarded = timeOf(() => (hits = guard(text, guardrails).hits), runs, inner);
  const found = hits.map((hit) => `${hit.kind}:${hit.count}`).join(" ") || "none";
  results.push({ name, bytes: text.length, parse, guarded, found });
  const size = String(text.length).padStart(12);
  console.log(`  ${name.padEnd(50)}${size}   ${fmt(parse).padEnd(20)} ${fmt(guarded).padEnd(21)} ${found}`);
}

// What a webhook adds: a local server answering allow, asked once per guarded answer.
const { createServer } = await import("node:http");
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"verdict":"allow"}'));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/check`;
const HOOKED = rulesOf({ rules: [{ name: "hook", action: "redact", detectors: ["personal"], webhook: { url } }] });
const PLAIN = rulesOf({ rules: [{ name: "plain", action: "redact", detectors: ["personal"] }] });
const scope = { upstream: "alpha", tool: "echo" };
async function hooked(text) {
  const span = pathSpan(text, ["result"]);
  const strings = readStrings(text, span, HOOKED.rules, SECRET_KEYS);
  const outside = await askOutside(HOOKED.rules, strings, "result", scope, {});
  if (outside.size > 0) throw new Error("the local webhook did not allow");
  return guardValue(
    text,
    span,
    HOOKED.rules,
    "result",
    { secretKeys: SECRET_KEYS, patterns: HOOKED.patterns },
    outside,
  );
}
async function timeAsync(fn, runs) {
  for (let i = 0; i < Math.min(20, runs); i++) await fn();
  const times = [];
  for (let run = 0; run < runs; run++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0] };
}
const bigBytes = new TextEncoder().encode(big);
const bigStream = () =>
  new ReadableStream({
    start(controller) {
      for (let at = 0; at < bigBytes.length; at += 65_536) controller.enqueue(bigBytes.subarray(at, at + 65_536));
      controller.close();
    },
  });
const context = { secretKeys: SECRET_KEYS, patterns: ALL.patterns };
const streamedBig = await timeAsync(
  () => new Response(guardedStream(bigStream(), ALL.rules, context, () => {})).text(),
  RUNS,
);
const memoryBig = await timeAsync(async () => guard(big, ALL), RUNS);
console.log(`\n${TARGET_MB} MB result, secrets+personal+instructions (ms, wall clock: median / fastest)`);
console.log(`  in memory (guardValue)          ${memoryBig.median.toFixed(1)} / ${memoryBig.min.toFixed(1)}`);
console.log(`  streamed (guardedStream)        ${streamedBig.median.toFixed(1)} / ${streamedBig.min.toFixed(1)}`);
results.push({ name: "10 MB streamed", memory: memoryBig, streamed: streamedBig });
const plainSmall = await timeAsync(async () => guard(small, PLAIN), 200);
const hookSmall = await timeAsync(() => hooked(small), 200);
server.close();
console.log("\nA rule's webhook on the small call (ms per answer, wall clock: median / fastest; webhook on loopback)");
console.log(`  detectors only                 ${plainSmall.median.toFixed(3)} / ${plainSmall.min.toFixed(3)}`);
console.log(`  detectors + webhook (allow)    ${hookSmall.median.toFixed(3)} / ${hookSmall.min.toFixed(3)}`);
results.push({ name: "small call, webhook", plain: plainSmall, webhook: hookSmall });
export { results };
