/**
 * Forwarding one request to one upstream and streaming back what it says on the way:
 * progress, log messages and server-to-client requests reach the client as they
 * arrive; the upstream's answer is returned as its exact text.
 */
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR, kindOf, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { encodeServerRequestId, withMessageId } from "../core/server-requests";
import type { CallContext } from "../middleware/chain";
import type { UpstreamConfig } from "./config";
import { failureError } from "./failures";
import { resumeFromUpstream, sendToUpstream, upstreamMessages } from "./pool";

/** How often one answer may be resumed after its stream was cut, and the longest wait asked for. */
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
  for (let resumed = 0; ; resumed++) {
    if (!reply.ok) throw failureError(reply).withId(id);
    for await (const item of upstreamMessages(reply.value, upstream.name)) {
      if (!item.ok) throw failureError(item).withId(id);
      const wire = item.value;
      if (kindOf(wire.message) === "response" && "id" in wire.message && sameId(wire.message.id, id)) return wire.text;
      ctx.emit(toClient(ctx, upstream.name, wire));
    }
    // The stream ended before the answer: an upstream that gave event ids may be polled
    // for the rest (Streamable HTTP resumability), after the delay it asked for.
    const { lastEventId, retryMs } = reply.value.resume;
    if (lastEventId === undefined || resumed >= MAX_RESUMPTIONS || ctx.signal.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(retryMs ?? DEFAULT_RESUME_DELAY_MS, MAX_RESUME_DELAY_MS)));
    reply = await resumeFromUpstream(upstream, lastEventId, ctx);
  }
  throw new GatewayError(
    200,
    INTERNAL_ERROR,
    `upstream "${upstream.name}" closed its stream without answering the request`,
    { upstream: upstream.name, reason: "no-response" },
    id,
  );
}
