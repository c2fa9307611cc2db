/**
 * Reads an admin request body as UTF-8 text or bytes, up to a limit: a body past the limit
 * is refused after reading `limit + 1` bytes (before reading any when its Content-Length
 * says so), never held whole. The rest of a refused body is drained, up to MAX_DRAIN_BYTES,
 * so that a client still sending it reads the 413 rather than a dropped connection
 * (core/bounded-text.ts).
 */
import { discardRequestBody, drainBody, MAX_DRAIN_BYTES, readRequestTextUpTo } from "../core/bounded-text";

/** The body's text, or `undefined` when it holds more than `limitBytes` bytes. */
export function readBodyText(request: Request, limitBytes: number): Promise<string | undefined> {
  return readRequestTextUpTo(request, limitBytes);
}

/** The body's bytes, or `undefined` when it holds more than `limit` bytes (refused after reading `limit + 1`). */
export async function readBodyBytes(request: Request, limit: number): Promise<ArrayBuffer | undefined> {
  if (!request.body) return new ArrayBuffer(0);
  if (Number(request.headers.get("content-length") ?? 0) > limit) {
    await discardRequestBody(request);
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      reader.releaseLock();
      await drainBody(request.body, length, MAX_DRAIN_BYTES);
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out.buffer;
}
