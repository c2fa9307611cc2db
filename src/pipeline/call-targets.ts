/**
 * The pipeline's classifier of requests: each request that names a tool, prompt or
 * resource gets its target (context/call-target.ts) on the call context before any
 * layer sees it, once. It sits inside the catalog modes, so a `sys___call_tool` turned
 * into the direct call it runs is classified as that call.
 */
import type { Handler } from "../context/call-context";
import { callTarget } from "../context/call-target";

/**
 * `handler` with each request's target resolved first (and any target of an earlier
 * request dropped from a context handed on).
 *
 * @example
 * const handler = classifyTargets(composeMiddleware(middleware, relay));
 */
export function classifyTargets(handler: Handler): Handler {
  return async function classifyTarget(ctx, message) {
    const target = message.kind === "request" ? callTarget(ctx.route, message.wire.message) : undefined;
    if (target) return handler({ ...ctx, target }, message);
    // Copied with the earlier target left out only where there is one: a rest copy is the slow one.
    if (!("target" in ctx)) return handler({ ...ctx }, message);
    const { target: _earlier, ...rest } = ctx;
    return handler(rest, message);
  };
}
