/**
 * A request body of junk that counts how much of it was read: for checking that a refused
 * body is drained to its end before the answer (so a client still sending reads it), and
 * no further than MAX_DRAIN_BYTES (src/core/bounded-text.ts); in Node (test/e2e/), a body
 * Node's fetch sends chunked, with no Content-Length.
 */

const CHUNK_BYTES = 64 * 1024;

/** `bytes` of junk in 64 KiB chunks, counting how many were read. */
export function countedJunk(bytes: number): { body: ReadableStream<Uint8Array>; read: () => number } {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const chunk = Math.min(CHUNK_BYTES, bytes - sent);
      sent += chunk;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
  return { body, read: () => sent };
}

/** The most a drain bounded by `maxBytes` may read: the bound, plus the chunks in flight. */
export function drainedAtMost(maxBytes: number): number {
  return maxBytes + 2 * CHUNK_BYTES;
}
