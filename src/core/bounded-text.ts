/**
 * Reads a body as UTF-8 text up to a limit: a body past the limit is refused after
 * reading `limit + 1` bytes, never held whole, whatever Content-Length says. For bodies
 * someone else controls (an admin request, an identity provider's key set).
 */

/**
 * The body's text, or `undefined` when it holds more than `limitBytes` bytes (the rest
 * is cancelled, not read).
 *
 * @example
 * const text = await readTextUpTo(response.body, 64 * 1024);
 */
export async function readTextUpTo(body: ReadableStream<Uint8Array> | null, limitBytes: number): Promise<string | undefined> {
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
      await reader.cancel();
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}
