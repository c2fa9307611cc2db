/**
 * Tells a client with an open stream of server messages that its tool list changed when
 * the output filters change what `tools/list` shows (a tool's `outputSchema` removed or
 * given back). Checked at most once per document cache TTL (and never more often than
 * once a second), through the same cached documents calls read, so an open stream costs
 * at most one KV read per document and TTL.
 */
import { listedShapes, routeShapes, shapeFor, type ListingSession, type Shapes } from "../policy/listed-shapes";

/** The shortest interval between two checks, whatever FILTER_CACHE_TTL_MS says. */
export const MIN_FILTER_WATCH_INTERVAL_MS = 1_000;
export const TOOLS_LIST_CHANGED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });

export type FilterWatchOptions = {
  readonly kv: KVNamespace | undefined;
  /** How long an isolate trusts its copy of a filter document. */
  readonly cacheTtlMs: number;
  readonly session: ListingSession;
  /** The route ("" for /mcp) and its upstreams. */
  readonly route: string;
  readonly upstreams: readonly string[];
  /** Called once per change; the first check compares with what the client last listed. */
  readonly notify: () => void;
};

/**
 * Starts watching; returns the function that stops it.
 *
 * @example
 * const stop = watchFilterShapes({ kv, cacheTtlMs, session, route: "", upstreams: ["alpha"], notify: () => void ctx.emit(TOOLS_LIST_CHANGED) });
 */
export function watchFilterShapes({ kv, cacheTtlMs, session, route, upstreams, notify }: FilterWatchOptions): () => void {
  const interval = Math.max(cacheTtlMs, MIN_FILTER_WATCH_INTERVAL_MS);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let known: Shapes | undefined;
  const check = async () => {
    try {
      known ??= await listedShapes(kv, session);
      const now = await routeShapes(kv, cacheTtlMs, route, upstreams);
      if (!stopped && upstreams.some((upstream) => shapeFor(known!, upstream) !== shapeFor(now, upstream))) {
        known = now;
        notify();
      }
    } catch (error) {
      console.warn(`mcp-edge-gateway: watching the output filters: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!stopped) timer = setTimeout(check, interval);
  };
  void check();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
