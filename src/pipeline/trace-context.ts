/**
 * Trace context for every request: the client's W3C `traceparent` (in
 * `params._meta.traceparent`, where the MCP conventions put it, else the HTTP header)
 * is continued with a span of the gateway's own; without one a trace is started. The
 * relay sends it to the upstream (header and `_meta`), and the call record keeps it
 * for the audit event, so gateway and upstream logs join on the trace id.
 */
import { isObject } from "../core/jsonrpc";
import { continueTrace } from "../core/traceparent";
import type { Middleware } from "../context/call-context";

/**
 * The trace-context middleware.
 *
 * @example
 * const list = [traceContext(), sysTools(), offload()];
 */
export function traceContext(): Middleware {
  return (next) =>
    async function traceContext(ctx, message) {
      if (message.kind !== "request") return next(ctx, message);
      const meta = message.wire.message.params?.["_meta"];
      const fromMeta = isObject(meta) ? meta["traceparent"] : undefined;
      const trace = continueTrace(typeof fromMeta === "string" ? fromMeta : ctx.incomingTraceparent);
      ctx.record.trace = trace;
      return next({ ...ctx, trace }, message);
    };
}
