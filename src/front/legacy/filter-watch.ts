/**
 * Tells a client with an open GET stream that its tool list changed when the output
 * filters change what `tools/list` shows (a tool's `outputSchema` removed or given back).
 * Checked at most once per filter cache TTL (and never more often than once a second),
 * through the same cached documents calls read, so an open stream costs at most one KV
 * read per document and TTL.
 */
import type { SessionState } from "./session-token";
import { filterCacheTtlMs } from "../../policy/filter-store";
import { listedShapes, routeShapes, shapeFor, type Shapes } from "../../policy/listed-shapes";

/** The shortest interval between two checks, whatever FILTER_CACHE_TTL_MS says. */
export const MIN_FILTER_WATCH_INTERVAL_MS = 1_000;
export const TOOLS_LIST_CHANGED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });

export type FilterWatchOptions = {
  readonly env: Readonly<Record<string, unknown>>;
  readonly session: SessionState;
  readonly upstreams: readonly string[];
  /** Called once per change; the first check compares with what the client last listed. */
  readonly notify: () => void;
};

/**
 * Starts watching; returns the function that stops it.
 *
 * @example
 * const stop = watchFilterShapes({ env, session, upstreams: ["alpha"], notify: () => controller.enqueue(sseFrame(TOOLS_LIST_CHANGED)) });
 */
export function watchFilterShapes({ env, session, upstreams, notify }: FilterWatchOptions): () => void {
  const interval = Math.max(filterCacheTtlMs(env), MIN_FILTER_WATCH_INTERVAL_MS);
  const kv = env["GATEWAY_KV"] as KVNamespace | undefined;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let known: Shapes | undefined;
  const check = async () => {
    try {
      known ??= await listedShapes(kv, { id: session.sid, ...(session.filterShapes ? { filterShapes: session.filterShapes } : {}) });
      const now = await routeShapes(env, session.route, upstreams);
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
