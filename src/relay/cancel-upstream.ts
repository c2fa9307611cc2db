/**
 * Cancellation toward a 2025 upstream when the client's era cancels by closing its
 * stream (2026-07-28, basic/patterns/cancellation: "closing the SSE response stream is
 * the cancellation signal"). A 2025 upstream does not take a closed connection as
 * cancellation (2025-11-25 says it SHOULD NOT), so the gateway sends it
 * `notifications/cancelled` for the request it was serving, in the same upstream session.
 */
import type { JsonRpcId } from "../core/jsonrpc";
import { poolRequest, type CallContext } from "../context/call-context";
import type { UpstreamConfig } from "../config/upstreams";
import { sendToUpstream, upstreamMessages } from "../upstream/pool";

/** Why the upstream is told to stop, as the notification's `reason`. */
const CANCEL_REASON = "The client closed its response stream";

async function sendCancelled(ctx: CallContext, upstream: UpstreamConfig, id: JsonRpcId): Promise<void> {
  const text = JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: id, reason: CANCEL_REASON },
  });
  // The client's signal is aborted already: the notification goes out without it, within the upstream's own deadlines.
  const { signal: _aborted, ...request } = poolRequest(ctx);
  const reply = await sendToUpstream(upstream, text, request);
  if (!reply.ok) return;
  for await (const item of upstreamMessages(reply.value, upstream.name)) if (!item.ok) break;
}

/**
 * While a request `id` is with `upstream`: when the client goes away (and its era
 * cancels that way, `ctx.cancelsOnClose`), tells the upstream. Returns the function that
 * stops watching, for when the answer has come.
 *
 * @example
 * const stop = cancelWhenClientGoes(ctx, upstream, id);
 * try { ... } finally { stop(); }
 */
export function cancelWhenClientGoes(ctx: CallContext, upstream: UpstreamConfig, id: JsonRpcId): () => void {
  if (!ctx.cancelsOnClose || ctx.signal.aborted) return () => {};
  const onAbort = () =>
    ctx.waitUntil(
      sendCancelled(ctx, upstream, id).catch((error: unknown) =>
        console.warn(
          `mcp-edge-gateway: cancelling at "${upstream.name}": ${error instanceof Error ? error.message : String(error)}`,
        ),
      ),
    );
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  return () => ctx.signal.removeEventListener("abort", onAbort);
}
