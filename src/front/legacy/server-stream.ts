/**
 * The GET stream as HTTP: an SSE response fed by what the pipeline emits for a listening
 * client (the upstreams' own streams, merged, and the gateway's own notifications). It is
 * read from the upstreams only as fast as the client reads: each message waits until the
 * client's stream has room. Answered with the pipeline's error (405 when no upstream
 * offers a stream) when the stream cannot be opened.
 */
import { GatewayError } from "../../core/errors";
import { messageFrame, SSE_HEADERS, SSE_KEEPALIVE } from "../../core/sse";
import { MessageQueue, SSE_KEEPALIVE_INTERVAL_MS, type Emit } from "../http/reply-stream";

/** Messages held for a client that is not reading before the upstreams are read no further. */
const STREAM_BUFFER_MESSAGES = 4;

/**
 * Runs `listen` (which calls `opened` once its stream is open, then emits until it ends)
 * and answers with the stream; `onCancel` is called when the client goes away.
 */
export async function streamToClient(
  listen: (emit: Emit, opened: () => void) => Promise<unknown>,
  onCancel: () => void,
): Promise<Response> {
  const queue = new MessageQueue<Uint8Array | null>();
  let markOpen!: () => void;
  const open = new Promise<"open">((resolve) => (markOpen = () => resolve("open")));
  const done = listen((message) => queue.push(messageFrame(message)), markOpen).then(
    () => void queue.push(null),
    (error: unknown) => {
      void queue.push(null);
      throw error;
    },
  );
  // Until the stream is open, a failure is the answer (405 and the like).
  if ((await Promise.race([open, done])) !== "open")
    throw new GatewayError(
      405,
      -32000,
      "Method Not Allowed: there is no stream of server messages on this route",
      undefined,
      null,
      { allow: "POST, DELETE" },
    );
  done.catch((error: unknown) =>
    console.warn(`mcp-edge-gateway: the GET stream ended: ${error instanceof Error ? error.message : String(error)}`),
  );

  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        timer = setInterval(() => controller.enqueue(SSE_KEEPALIVE), SSE_KEEPALIVE_INTERVAL_MS);
      },
      async pull(controller) {
        const frame = await queue.next();
        if (frame !== null) return controller.enqueue(frame);
        stop();
        controller.close();
      },
      cancel() {
        stop();
        queue.close();
        onCancel();
      },
    },
    { highWaterMark: STREAM_BUFFER_MESSAGES },
  );
  return new Response(body, { headers: SSE_HEADERS });
}
