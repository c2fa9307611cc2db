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
    const { target: _earlier, ...rest } = ctx;
    const target = message.kind === "request" ? callTarget(ctx.route, message.wire.message) : undefined;
    return handler(target ? { ...rest, target } : rest, message);
  };
}
