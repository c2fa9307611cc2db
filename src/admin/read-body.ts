/**
 * Reads an admin request body as UTF-8 text, up to a limit: a body past the limit is
 * refused after reading `limit + 1` bytes, never held whole, whatever Content-Length says.
 */
import { readTextUpTo } from "../core/bounded-text";

/** The body's text, or `undefined` when it holds more than `limitBytes` bytes. */
export function readBodyText(request: Request, limitBytes: number): Promise<string | undefined> {
  return readTextUpTo(request.body, limitBytes);
}

/** The body's bytes, or `undefined` when it holds more than `limit` bytes (refused after reading `limit + 1`). */
export async function readBodyBytes(request: Request, limit: number): Promise<ArrayBuffer | undefined> {
  if (!request.body) return new ArrayBuffer(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel();
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
