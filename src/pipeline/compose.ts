/**
 * Composing the pipeline: a middleware wraps the next handler, intercepts the messages
 * it cares about and passes every other one through unchanged.
 */
import type { MethodHandler, Middleware } from "../context/call-context";

/**
 * Wraps `handler` in `middleware`, the first of the list outermost.
 *
 * @example
 * const handle = composeMiddleware([sysTools(), offload()], relay);
 */
export function composeMiddleware(middleware: readonly Middleware[], handler: MethodHandler): MethodHandler {
  return middleware.reduceRight((next, wrap) => wrap(next), handler);
}
