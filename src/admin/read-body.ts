/**
 * Reads an admin request body as UTF-8 text, up to a limit: a body past the limit is
 * refused after reading `limit + 1` bytes, never held whole, whatever Content-Length says.
 */

/** The body's text, or `undefined` when it holds more than `limitBytes` bytes. */
export async function readBodyText(request: Request, limitBytes: number): Promise<string | undefined> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let length = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text + decoder.decode();
    length += value.byteLength;
    if (length > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
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
