/**
 * The memory of the streaming offload path alone, in Node with a capped heap: a
 * generated JSON-RPC answer of N MiB is fed to the gateway's own `offloadStream`, with
 * an R2 stand-in that counts the parts it receives and keeps none. If the path held the
 * payload, it could not finish under the cap.
 *
 *   node --max-old-space-size=64 bench/lib/stream-memory.ts 300
 */
import { loadSource } from "./bundle-src.ts";

type Offload = {
  offloadStream: (
    body: ReadableStream<Uint8Array>,
    bucket: unknown,
    id: string,
    metadataFor: (contentType: string) => unknown,
    previewChars: number,
  ) => Promise<{ size: number; schema: unknown }>;
};

const mb = Number(process.argv[2] ?? 300);
const { offloadStream } = await loadSource<Offload>(
  'export { offloadStream } from "./src/features/offload/stream-offload.ts";',
);

const count = Math.floor((mb * 1024 * 1024) / 100);
const item = (i: number) => {
  const head = `{"id":${i},"name":"item ${i}","tags":["a","b"],"score":1.5,"pad":"`;
  return `${head}${"x".repeat(100 - head.length - 2)}"}`;
};
const encoder = new TextEncoder();
let next = 0;
const body = new ReadableStream<Uint8Array>({
  pull(controller) {
    if (next === 0)
      controller.enqueue(
        encoder.encode(
          '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"items":[',
        ),
      );
    if (next >= count) {
      controller.enqueue(encoder.encode(`],"total":${count}}}}`));
      return controller.close();
    }
    const items: string[] = [];
    for (const end = Math.min(count, next + 600); next < end; next++) items.push(item(next));
    controller.enqueue(encoder.encode((next > 600 ? "," : "") + items.join(",")));
  },
});

let parts = 0;
let stored = 0;
const bucket = {
  createMultipartUpload: async () => ({
    uploadPart: async (partNumber: number, data: Uint8Array) => {
      parts++;
      stored += data.length;
      return { partNumber, etag: String(partNumber) };
    },
    complete: async () => ({}),
    abort: async () => {},
  }),
  // The payload's pointer index, written after the payload: counted, not kept.
  put: async (_key: string, value: string) => {
    stored += value.length;
    return {};
  },
};

let peakHeap = 0;
let peakRss = 0;
const sample = () => {
  const usage = process.memoryUsage();
  peakHeap = Math.max(peakHeap, usage.heapUsed + usage.arrayBuffers);
  peakRss = Math.max(peakRss, usage.rss);
};
const sampler = setInterval(sample, 10);
const start = Date.now();
const result = await offloadStream(body, bucket, "0".repeat(32), () => ({}), 500);
clearInterval(sampler);
sample();
console.log(
  JSON.stringify({
    mb,
    seconds: (Date.now() - start) / 1000,
    payloadBytes: result.size,
    stored,
    parts,
    peakHeapMB: peakHeap / 1024 / 1024,
    peakRssMB: peakRss / 1024 / 1024,
  }),
);
