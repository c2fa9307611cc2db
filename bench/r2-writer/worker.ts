/**
 * The offload benchmark's floor (`npm run bench:payload-reads`): a Worker that forwards a
 * request to the URL in its TARGET var and, instead of streaming the answer back, stores
 * it whole in R2 as a multipart upload of PART_BYTES parts read into one reused buffer,
 * the part size and buffering the gateway's offload uses, with nothing parsed, indexed
 * or previewed; it answers with the size stored.
 *
 * Under `wrangler dev` the local R2 simulator runs in the Worker's own workerd process and
 * keeps memory of its own for what it stores, so the gateway's growth while offloading
 * says little alone: beside this Worker's, it tells the gateway's share from the runtime's
 * and the simulator's. Not part of the gateway; never deployed.
 */

import type {
  R2Bucket,
  R2UploadedPart,
  ReadableStreamBYOBReader as WorkersByobReader,
} from "@cloudflare/workers-types";

/** The bindings wrangler.toml and `--var TARGET:<url>` give this Worker. */
export type R2WriterEnv = { readonly TARGET?: string; readonly STORE: R2Bucket };

/** The gateway's offload part size (src/features/offload/stream-offload.ts). */
const PART_BYTES = 8 * 1024 * 1024;

/** Reads `body` into `part` until it is full or the body ends; the bytes read (the part may have moved: see `view`). */
async function fillPart(reader: WorkersByobReader, part: { view: Uint8Array }): Promise<number> {
  let filled = 0;
  while (filled < PART_BYTES) {
    const { done, value } = await reader.readAtLeast(
      PART_BYTES - filled,
      new Uint8Array(part.view.buffer, filled, PART_BYTES - filled),
    );
    if (!value) break;
    part.view = new Uint8Array(value.buffer, 0, PART_BYTES);
    filled += value.byteLength;
    if (done || value.byteLength === 0) break;
  }
  return filled;
}

/** Stores `body` under `key` in parts of PART_BYTES; resolves with its size. */
export async function storeWhole(body: ReadableStream<Uint8Array>, bucket: R2Bucket, key: string): Promise<number> {
  // workerd's reader has readAtLeast (a part read in few reads); the DOM's type does not say so.
  const reader = body.getReader({ mode: "byob" }) as unknown as WorkersByobReader;
  const upload = await bucket.createMultipartUpload(key);
  const part = { view: new Uint8Array(PART_BYTES) };
  const parts: R2UploadedPart[] = [];
  let size = 0;
  for (;;) {
    const filled = await fillPart(reader, part);
    if (filled === 0) break;
    parts.push(
      await upload.uploadPart(parts.length + 1, filled === PART_BYTES ? part.view : part.view.subarray(0, filled)),
    );
    size += filled;
    if (filled < PART_BYTES) break;
  }
  await upload.complete(parts);
  return size;
}

// wrangler needs the module's default export to be the handler.
export default {
  async fetch(request: Request, env: R2WriterEnv): Promise<Response> {
    if (!env.TARGET) return new Response("r2-writer: set the TARGET var (--var TARGET:<url>)\n", { status: 500 });
    if (request.method !== "POST") return new Response("r2-writer: POST the request to forward\n", { status: 405 });
    const answer = await fetch(env.TARGET, { method: "POST", headers: request.headers, body: request.body });
    if (!answer.body) return new Response("r2-writer: the target answered without a body\n", { status: 502 });
    const size = await storeWhole(answer.body, env.STORE, `whole-${crypto.randomUUID()}`);
    return Response.json({ size });
  },
};
