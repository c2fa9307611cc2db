/**
 * The body of an MCP POST, read with a bound: the gateway never holds more than
 * `limitBytes` of one client's message, whatever the platform would accept. A declared
 * Content-Length past the bound is refused before anything is held; a chunked body is
 * counted as it arrives and refused at the first byte past the bound. A declared length
 * within the bound is read in one `text()` (the runtime holds a body to its Content-Length).
 * Both eras' POSTs come through here; the bound is MAX_MESSAGE_BYTES
 * (config/gateway-config.ts).
 *
 * A refused body is drained (read and dropped, never held) up to MAX_DRAIN_BYTES before the
 * 413 goes out: an HTTP server that answers while the client is still sending closes the
 * connection under it, and the client (Node's fetch: "terminated") never reads the answer.
 * A body larger than that is cancelled as before: past the drain bound the client gets the
 * dropped connection rather than the gateway reading without end.
 */
import { drainBody, MAX_DRAIN_BYTES, readTextUpTo } from "../core/bounded-text";
import { GatewayError } from "../core/errors";
import { INVALID_REQUEST } from "../core/jsonrpc";

/** The most bytes of a refused body read and dropped so that the client, done sending, reads the 413. */
export { MAX_DRAIN_BYTES };

/** The bound as a person reads it: "4 MiB (4194304 bytes)". */
function describeLimit(limitBytes: number): string {
  const mib = limitBytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB (${limitBytes} bytes)` : `${limitBytes} bytes`;
}

function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError(
    413,
    INVALID_REQUEST,
    `Payload Too Large: an MCP message body may hold at most ${describeLimit(limitBytes)}; send a smaller message (large content belongs in a resource or a file the tool fetches)`,
    { maxBytes: limitBytes },
  );
}

/**
 * The request's body as text, or a 413 `GatewayError` naming the limit when it holds
 * more than `limitBytes` bytes.
 *
 * @example
 * const text = await readMessageBody(c.req.raw, config.maxMessageBytes);
 */
export async function readMessageBody(request: Request, limitBytes: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    await drainBody(request.body, 0, declared <= MAX_DRAIN_BYTES ? MAX_DRAIN_BYTES : 0);
    throw tooLarge(limitBytes);
  }
  // A declared length within the bound: the runtime delivers exactly that many bytes (the
  // HTTP framing), so one text() is bounded already and costs less than a reader loop.
  if (Number.isFinite(declared)) return request.text();
  const text = await readTextUpTo(request.body, limitBytes, { drainBytes: MAX_DRAIN_BYTES });
  if (text === undefined) throw tooLarge(limitBytes);
  return text;
}
