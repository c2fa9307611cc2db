/**
 * Reads a body as UTF-8 text up to a limit: a body past the limit is refused after
 * reading `limit + 1` bytes, never held whole, whatever Content-Length says. For bodies
 * someone else controls (an admin request, an identity provider's key set).
 *
 * A request's body that is refused is drained (read and dropped, never held) up to
 * MAX_DRAIN_BYTES before the answer goes out: an HTTP server that answers while the client
 * is still sending closes the connection under it, and the client (Node's fetch:
 * "terminated") never reads the answer. Past that bound, or when the declared
 * Content-Length is past it, the body is cancelled: the client gets the dropped connection
 * rather than the gateway reading without end.
 */

/** The most bytes of a refused request body read and dropped so that the client, done sending, reads the answer. */
export const MAX_DRAIN_BYTES = 16 * 1024 * 1024;

/** The request's declared Content-Length, if it declares one. */
function declaredLength(request: Request): number | undefined {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  return Number.isFinite(declared) ? declared : undefined;
}

/**
 * Drops the body of a request about to be refused unread: read and dropped up to
 * MAX_DRAIN_BYTES, cancelled at once when its declared length is past that.
 *
 * @example
 * await discardRequestBody(request);
 * return page(400, "Not a sign-in form", text);
 */
export async function discardRequestBody(request: Request): Promise<void> {
  const declared = declaredLength(request);
  await drainBody(request.body, 0, declared !== undefined && declared > MAX_DRAIN_BYTES ? 0 : MAX_DRAIN_BYTES);
}

/**
 * A request's body as text, or `undefined` when it holds more than `limitBytes` bytes: a
 * declared length past the limit is refused before anything is read, and a refused body is
 * drained as `discardRequestBody` does, so the client reads the answer.
 *
 * @example
 * const text = await readRequestTextUpTo(c.req.raw, 64 * 1024);
 * if (text === undefined) return c.json({ error: "at most 64 KiB" }, 413);
 */
export async function readRequestTextUpTo(request: Request, limitBytes: number): Promise<string | undefined> {
  const declared = declaredLength(request);
  if (declared !== undefined && declared > limitBytes) {
    await discardRequestBody(request);
    return undefined;
  }
  return readTextUpTo(request.body, limitBytes, { drainBytes: MAX_DRAIN_BYTES });
}

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
