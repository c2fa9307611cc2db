/**
 * Composing the pipeline: a middleware wraps the next handler, intercepts the messages
 * it cares about and passes every other one through unchanged.
 */
import type { Handler, Middleware } from "../context/call-context";

/**
 * Wraps `handler` in `middleware`, the first of the list outermost.
 *
 * @example
 * const handle = composeMiddleware([sysTools(), offload()], relay);
 */
export function composeMiddleware(middleware: readonly Middleware[], handler: Handler): Handler {
  return middleware.reduceRight((next, wrap) => wrap(next), handler);
}
