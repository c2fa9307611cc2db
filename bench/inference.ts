/**
 * `npm run bench` (offload part): what inferring a payload's schema (and cutting its
 * preview) costs, beside JSON.parse alone and beside the reference jq filter run by a jq
 * engine from npm (jq-wasm), on the same bytes; and the peak memory of the streaming
 * path, measured on the gateway itself under `npm start` while it offloads a result far
 * larger than an isolate.
 *
 *   npm run bench:inference
 *   npm run bench:inference -- --sizes 1,10 --stream-mb 300 --runs 5
 *   npm run bench:inference -- --no-stream        # skip the memory measurement
 *   npm run bench:inference -- --jq-max-mb 10     # also run jq on 10 MB (slow: jq-wasm takes ~90 s a MB)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import jq from "jq-wasm";
import { freePort, startGateway } from "../scripts/lib/gateway-process.mjs";
import { loadSource } from "./lib/bundle-src.ts";
import { githubLikePayload } from "./lib/payloads.ts";
import { workerdPids } from "./lib/proc.ts";
import { table } from "./lib/report.ts";
import { startUpstream } from "./lib/upstream-process.ts";

/** The reference filter (jqschema): objects by sorted keys, arrays by their first element, scalars by type. */
const JQ_SCHEMA =
  'def walk(f): . as $in | if type == "object" then reduce keys[] as $k ({}; . + {($k): ($in[$k] | walk(f))}) elif type == "array" then if length == 0 then [] else [.[0] | walk(f)] end else type end; walk(.)';
const PREVIEW_CHARS = 500;
const HEAP_CAP_MB = 64;

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1]! : fallback;
};
const SIZES_MB = option("sizes", "1,10,100").split(",").map(Number);
const RUNS = Number(option("runs", "5"));
const STREAM_MB = Number(option("stream-mb", "300"));
/** jq-wasm needs about 90 s for 1 MB of this payload here; larger sizes only on request. */
const JQ_MAX_MB = Number(option("jq-max-mb", "1"));

type Inference = {
  inferSchema: (value: unknown) => unknown;
  SchemaBuilder: new () => { schema(): unknown };
  JsonStreamTokenizer: new (handler: object) => { write(chunk: string): void; end(): void };
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed(runs: number, fn: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(times);
}

async function throughput(inference: Inference): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  for (const mb of SIZES_MB) {
    const text = JSON.stringify(githubLikePayload(mb * 1024 * 1024));
    const bytes = Buffer.byteLength(text);
    const runs = mb >= 100 ? Math.min(RUNS, 3) : RUNS;
    const parse = await timed(runs, () => JSON.parse(text));
    // What offload adds for a payload it holds (the answer is parsed already): infer, cut the preview.
    const parsed: unknown = JSON.parse(text);
    const infer = await timed(runs, () => [inference.inferSchema(parsed), text.slice(0, PREVIEW_CHARS)]);
    // What it does with one it streams: tokenize in 64 KiB pieces, build the schema.
    const stream = await timed(runs, () => {
      const builder = new inference.SchemaBuilder();
      const tokenizer = new inference.JsonStreamTokenizer(builder);
      for (let at = 0; at < text.length; at += 65_536) tokenizer.write(text.slice(at, at + 65_536));
      tokenizer.end();
      return [builder.schema(), text.slice(0, PREVIEW_CHARS)];
    });
    const jqMs = mb <= JQ_MAX_MB ? await timed(1, () => jq.raw(text, JQ_SCHEMA, ["-c"])) : undefined;
    const mbps = (ms: number) => bytes / 1024 / 1024 / (ms / 1000);
    rows.push([
      `${mb} MB`,
      mbps(parse),
      mbps(infer),
      mbps(stream),
      jqMs === undefined ? "not run" : mbps(jqMs),
      infer / parse,
      jqMs === undefined ? "-" : jqMs / infer,
      stream / parse,
    ]);
  }
  return rows;
}

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

type Memory = { payloadMB: number; seconds: number; baselineMB: number; peakMB: number; addedMB: number };

async function streamingMemory(): Promise<Memory> {
  const upstream = await startUpstream("raw");
  const state = mkdtempSync(path.join(tmpdir(), "bench-offload-"));
  const port = await freePort();
  const gateway = await startGateway({
    port,
    vars: { UPSTREAMS: [{ name: "raw", url: upstream.url, timeoutMs: 120_000 }] },
    persistTo: state,
  });
  try {
    const workerd = () => workerdPids(gateway.pid);
    const post = async (body: unknown, session?: string) =>
      fetch(`${gateway.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
    });
    const session = init.headers.get("mcp-session-id")!;
    await init.text();
    const baseline = Math.max(...workerd().map(rssKb));
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, ...workerd().map(rssKb))), 25);
    const start = Date.now();
    const answer = (await (
      await post(
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "raw___huge", arguments: { mb: STREAM_MB } } },
        session,
      )
    ).json()) as { result: { content: { text: string }[] } };
    const seconds = (Date.now() - start) / 1000;
    clearInterval(sampler);
    const size = JSON.parse(answer.result.content[0]!.text).originalSize as number;
    return {
      payloadMB: size / 1024 / 1024,
      seconds,
      baselineMB: baseline / 1024,
      peakMB: peak / 1024,
      addedMB: (peak - baseline) / 1024,
    };
  } finally {
    await gateway.stop();
    await upstream.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

const inference = await loadSource<Inference>(
  'export { inferSchema, SchemaBuilder } from "./src/core/schema-inference.ts"; export { JsonStreamTokenizer } from "./src/core/json-stream.ts";',
);
console.log(
  `\nSchema inference on GitHub-like payloads (Node ${process.version}, median of ${RUNS} runs; MB/s of payload)`,
);
console.log(
  table(
    [
      "payload",
      "JSON.parse",
      "infer+preview",
      "streaming infer",
      "jq (jq-wasm)",
      "infer+preview / parse (≤ 1.5)",
      "jq / infer+preview (≥ 20)",
      "streaming / parse",
    ],
    await throughput(inference),
  ),
);
console.log(
  "  infer+preview: the merged inference and the preview on the parsed payload (what offload adds to a payload it holds).",
);
console.log("  streaming infer: the push tokenizer and the same inference, for payloads too large to hold.");
if (!args.includes("--no-stream")) {
  // The path alone, in Node with the old generation capped well under an isolate's 128 MB.
  const alone = JSON.parse(
    execFileSync(
      process.execPath,
      [
        `--max-old-space-size=${HEAP_CAP_MB}`,
        path.join(import.meta.dirname, "lib", "stream-memory.ts"),
        String(STREAM_MB),
      ],
      { encoding: "utf8" },
    )
      .trim()
      .split("\n")
      .pop()!,
  ) as { seconds: number; payloadBytes: number; parts: number; peakHeapMB: number };
  console.log(
    `\nStreaming offload path alone (Node, --max-old-space-size=${HEAP_CAP_MB}, R2 stand-in that keeps nothing):`,
  );
  console.log(
    `  ${(alone.payloadBytes / 1024 / 1024).toFixed(0)} MB payload in ${alone.seconds.toFixed(1)} s, ${alone.parts} parts; peak heap + array buffers ${alone.peakHeapMB.toFixed(0)} MB`,
  );
  const memory = await streamingMemory();
  console.log(
    `\nStreaming offload under npm start: ${memory.payloadMB.toFixed(0)} MB result in ${memory.seconds.toFixed(1)} s`,
  );
  console.log(
    `  workerd RSS: ${memory.baselineMB.toFixed(0)} MB before, ${memory.peakMB.toFixed(0)} MB at peak (+${memory.addedMB.toFixed(0)} MB)`,
  );
  console.log(
    "  (the whole process: both Workers, wrangler's local R2 simulator that stores the parts, and garbage V8 had not yet collected)",
  );
}
