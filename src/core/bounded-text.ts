/**
 * Reads a body as UTF-8 text up to a limit: a body past the limit is refused after
 * reading `limit + 1` bytes, never held whole, whatever Content-Length says. For bodies
 * someone else controls (an admin request, an identity provider's key set).
 */

/**
 * The body's text, or `undefined` when it holds more than `limitBytes` bytes. The rest of
 * such a body is cancelled, not read, unless `drainBytes` asks for it to be read and dropped
 * (never held) until the body ends or `drainBytes` have been read in all ({@link drainBody}).
 *
 * @example
 * const text = await readTextUpTo(response.body, 64 * 1024);
 */
export async function readTextUpTo(
  body: ReadableStream<Uint8Array> | null,
  limitBytes: number,
  { drainBytes = 0 } = {},
): Promise<string | undefined> {
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let length = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text + decoder.decode();
    length += value.byteLength;
    if (length > limitBytes) {
      reader.releaseLock();
      await drainBody(body, length, drainBytes);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Reads and drops the rest of `body`, `readBytes` of which were read already, until it ends
 * or `maxBytes` have been read in all; the rest past that is cancelled. An HTTP server that
 * answers a client still sending its body closes the connection under it, and the client
 * never reads the answer: draining a bounded amount first lets it.
 */
export async function drainBody(
  body: ReadableStream<Uint8Array> | null,
  readBytes: number,
  maxBytes: number,
): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  let length = readBytes;
  while (length < maxBytes) {
    const { value, done } = await reader.read();
    if (done) return;
    length += value.byteLength;
  }
  await reader.cancel();
}
