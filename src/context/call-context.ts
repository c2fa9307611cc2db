/**
 * The method middleware onion. A middleware wraps the next handler, intercepts the
 * methods it cares about and passes every other one through unchanged. The order is
 * the list in `src/middleware/index.ts`, outermost first: nothing is implied by
 * registration side effects.
 */
import type { JsonRpcRequest, WireMessage } from "../core/jsonrpc";
import { qualifyName, splitName } from "../core/names";
import type { SessionState } from "../front/legacy/session-token";
import type { LargeAnswerConsumer } from "../upstream/client";
import type { UpstreamConfig } from "../config/upstreams";

export type { LargeAnswerConsumer };

/** Everything a handler needs to serve one client request. */
export type CallContext = {
  readonly env: Readonly<Record<string, unknown>>;
  /** The upstreams this route serves: all of them on /mcp, one on /mcp/<upstream>. */
  readonly upstreams: readonly UpstreamConfig[];
  /** True on /mcp, where names carry their upstream's prefix. */
  readonly aggregated: boolean;
  readonly session: SessionState;
  /** The gateway's own origin as the client reached it (for URLs handed to the client). */
  readonly origin: string;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /**
   * Sends a message to the client ahead of the answer (progress, logs, server requests).
   * Await it: it resolves when the client's stream has taken the message, which is how
   * a slow client slows the upstream down.
   */
  readonly emit: (text: string) => Promise<void> | void;
  /**
   * Told when an upstream answered with an SSE stream. On /mcp/<upstream> the client's
   * answer then comes as SSE too: the gateway keeps the framing the upstream chose.
   */
  readonly streamed?: () => void;
  /**
   * Set by offload for a call it may offload: takes an upstream answer too large to hold
   * (as a byte stream) and returns the text that answers the call instead.
   */
  readonly largeAnswer?: LargeAnswerConsumer;
  /** Keeps work running after the answer is sent (audit, cache fills). */
  readonly waitUntil: (promise: Promise<unknown>) => void;
};

/** Answers one client request with the text of its JSON-RPC response. */
export type MethodHandler = (ctx: CallContext, request: WireMessage<JsonRpcRequest>) => Promise<string>;

export type Middleware = (next: MethodHandler) => MethodHandler;

/**
 * The upstream and the `<upstream>___<tool>` key a tool is known by for policy (filters,
 * offload), the same whichever route the call came through; undefined for a name that
 * names no upstream.
 */
export function toolKey(ctx: Pick<CallContext, "aggregated" | "upstreams">, name: string): { upstream: string; key: string } | undefined {
  if (ctx.aggregated) {
    const split = splitName(name);
    return split && { upstream: split.upstream, key: name };
  }
  const upstream = ctx.upstreams[0]!.name;
  return { upstream, key: qualifyName(upstream, name) };
}

/** Wraps `handler` in `middleware`, the first of the list outermost. */
export function composeMiddleware(middleware: readonly Middleware[], handler: MethodHandler): MethodHandler {
  return middleware.reduceRight((next, wrap) => wrap(next), handler);
}
