/**
 * Forwarding one request to one upstream and streaming back what it says on the way:
 * progress, log messages and server-to-client requests reach the client as they
 * arrive; the upstream's answer is returned as its exact text.
 */
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR, kindOf, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { pathSpan, splice } from "../core/raw-json";
import { encodeServerRequestId, withMessageId } from "../core/server-requests";
import type { CallContext } from "../middleware/chain";
import type { UpstreamConfig } from "./config";
import { failureError } from "./failures";
import { resumeFromUpstream, sendToUpstream, upstreamMessages } from "./pool";

/** How often in a row a cut stream may be resumed with nothing new on it, and the longest wait asked for. */
const MAX_RESUMPTIONS = 10;
const MAX_RESUME_DELAY_MS = 5_000;
const DEFAULT_RESUME_DELAY_MS = 100;


/** A message from an upstream as the client must see it. */
export function toClient(ctx: Pick<CallContext, "aggregated">, upstream: string, wire: WireMessage): string {
  // Server-to-client requests get ids that say where the answer goes (aggregated only:
  // on /mcp/<upstream> there is one place it can go, and ids pass unchanged).
  if (ctx.aggregated && kindOf(wire.message) === "request") {
    return withMessageId(wire.text, encodeServerRequestId(upstream, (wire.message as JsonRpcRequest).id));
  }
  // An upstream cancelling one of its own requests names it by the id the client knows.
  const requestId = "method" in wire.message && wire.message.method === "notifications/cancelled" ? wire.message.params?.["requestId"] : undefined;
  if (ctx.aggregated && (typeof requestId === "string" || typeof requestId === "number")) {
    const span = pathSpan(wire.text, ["params", "requestId"]);
    if (span) return splice(wire.text, [{ span, raw: JSON.stringify(encodeServerRequestId(upstream, requestId)) }]);
  }
  return wire.text;
}

function sameId(a: JsonRpcId | null, b: JsonRpcId): boolean {
  return a === b;
}

/**
 * Sends `text` (a request with id `id`) to `upstream` and returns the text of its
 * response. Failures become a `GatewayError` answering `id`.
 */
export async function forward(ctx: CallContext, upstream: UpstreamConfig, text: string, id: JsonRpcId): Promise<string> {
  // With a consumer for answers too large to hold (offload), JSON bodies past the bound are streamed to it.
  let reply = await sendToUpstream(upstream, text, ctx, ctx.largeAnswer);
  // Resumptions count only while nothing arrives: an upstream that polls (closing its
  // stream after each event) may take as long as the call does.
  for (let idle = 0; ; idle++) {
    if (!reply.ok) throw failureError(reply).withId(id);
    if (reply.value.mode === "sse") ctx.streamed?.();
    for await (const item of upstreamMessages(reply.value, upstream.name)) {
      if (!item.ok) throw failureError(item).withId(id);
      idle = 0;
      const wire = item.value;
      if (kindOf(wire.message) === "response" && "id" in wire.message && sameId(wire.message.id, id)) return wire.text;
      await ctx.emit(toClient(ctx, upstream.name, wire)); // at the client's pace
    }
    // The stream ended before the answer: an upstream that gave event ids may be polled
    // for the rest (Streamable HTTP resumability), after the delay it asked for.
    const { lastEventId, retryMs } = reply.value.resume;
    if (lastEventId === undefined || idle >= MAX_RESUMPTIONS || ctx.signal.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(retryMs ?? DEFAULT_RESUME_DELAY_MS, MAX_RESUME_DELAY_MS)));
    reply = await resumeFromUpstream(upstream, lastEventId, ctx, ctx.largeAnswer);
  }
  throw new GatewayError(
    200,
    INTERNAL_ERROR,
    `upstream "${upstream.name}" closed its stream without answering the request`,
    { upstream: upstream.name, reason: "no-response" },
    id,
  );
}
