/**
 * The GET stream: messages upstreams send outside any request (list_changed, resource
 * updates, server-to-client requests), merged from every upstream of the session into
 * one SSE stream for the client, read from the upstreams only as fast as the client
 * reads. The gateway adds its own `notifications/tools/list_changed` when the output
 * filters change what the session's tool list shows (filter-watch.ts).
 */
import { GatewayError } from "../../core/errors";
import type { SessionState } from "./session-token";
import { heldSession } from "../../upstream/upstream-session";
import { SSE_HEADERS, SSE_KEEPALIVE, sseFrame } from "../../core/sse";
import { exchange } from "../../upstream/client";
import type { UpstreamConfig } from "../../config/upstreams";
import { toClient } from "../../relay/forward";
import { upstreamMessages } from "../../upstream/pool";
import { TOOLS_LIST_CHANGED, watchFilterShapes } from "./filter-watch";
import { SSE_KEEPALIVE_INTERVAL_MS } from "./reply-stream";

/** Messages held for a client that is not reading before the upstreams are read no further. */
const STREAM_BUFFER_MESSAGES = 4;

export type ServerStreamRequest = {
  readonly env: Readonly<Record<string, unknown>>;
  readonly session: SessionState;
  readonly upstreams: readonly UpstreamConfig[];
  readonly aggregated: boolean;
};

/** Opens each upstream's GET stream and merges them; 405 when no upstream offers one. */
export async function openServerStream(request: ServerStreamRequest): Promise<Response> {
  const abort = new AbortController();
  const opened = await Promise.all(
    request.upstreams.map(async (upstream) => {
      const session = heldSession(request.session, upstream.name);
      // Without a session an upstream has no way to address messages to this client.
      if (!session?.sessionId) return undefined;
      const reply = await exchange({
        upstream,
        env: request.env,
        method: "GET",
        sessionId: session.sessionId,
        protocolVersion: session.protocolVersion,
        signal: abort.signal,
      });
      if (!reply.ok) {
        if (reply.reason !== "http-status") console.warn(`mcp-edge-gateway: GET stream of "${upstream.name}": ${reply.reason}`);
        return undefined;
      }
      if (reply.value.mode !== "sse") {
        for await (const _ of reply.value.messages) break; // not a stream: read (and so release) its body
        return undefined;
      }
      return { upstream, reply: reply.value };
    }),
  );
  const streams = opened.filter((entry) => entry !== undefined);
  if (streams.length === 0) {
    throw new GatewayError(405, -32000, "Method Not Allowed: no upstream of this session offers a server-to-client stream", undefined, null, { allow: "POST, DELETE" });
  }

  let timer: ReturnType<typeof setInterval> | undefined;
  let stopWatching: (() => void) | undefined;
  // Each upstream is read only while the client's stream wants more: when its buffer is
  // full, the readers wait for the next pull (the client reading) before reading on.
  let demand: (() => void) | undefined;
  let wanted = Promise.resolve();
  const waitForDemand = (controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> => {
    if ((controller.desiredSize ?? 0) > 0 || abort.signal.aborted) return Promise.resolve();
    if (!demand) wanted = new Promise((resolve) => (demand = resolve));
    return wanted;
  };
  const release = () => {
    demand?.();
    demand = undefined;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        timer = setInterval(() => controller.enqueue(SSE_KEEPALIVE), SSE_KEEPALIVE_INTERVAL_MS);
        // At most one message per check interval: bounded whatever the client's pace.
        stopWatching = watchFilterShapes({
          env: request.env,
          session: request.session,
          upstreams: request.upstreams.map((upstream) => upstream.name),
          notify: () => controller.enqueue(sseFrame(TOOLS_LIST_CHANGED)),
        });
        let open = streams.length;
        for (const { upstream, reply } of streams) {
          void (async () => {
            try {
              for await (const item of upstreamMessages(reply, upstream.name)) {
                if (!item.ok || abort.signal.aborted) break;
                controller.enqueue(sseFrame(toClient({ aggregated: request.aggregated }, upstream.name, item.value)));
                while ((controller.desiredSize ?? 0) <= 0 && !abort.signal.aborted) await waitForDemand(controller);
              }
            } catch {
              // The client went away while a message was in flight; nothing to deliver it to.
            }
            open--;
            if (open === 0 && !abort.signal.aborted) {
              if (timer !== undefined) clearInterval(timer);
              stopWatching?.();
              controller.close();
            }
          })();
        }
      },
      pull() {
        release();
      },
      cancel() {
        if (timer !== undefined) clearInterval(timer);
        stopWatching?.();
        abort.abort();
        release();
      },
    },
    { highWaterMark: STREAM_BUFFER_MESSAGES },
  );
  return new Response(body, { headers: SSE_HEADERS });
}
