/**
 * Tells a client with an open stream of server messages that its tool list changed when
 * the output filters change what `tools/list` shows (a tool's `outputSchema` removed or
 * given back). Checked at most once per document cache TTL (and never more often than
 * once a second), through the same cached documents calls read, so an open stream costs
 * at most one KV read per document and TTL. A 2026-07-28 listen that asked for
 * `toolsListChanged` is told the same way, once its acknowledgement has gone out
 * (`announceFilterEditsDuringListen`).
 */
import { isObject, type OutgoingMessage } from "../../core/jsonrpc";
import type { CallContext } from "../../context/call-context";
import { listedShapes, routeShapes, shapeFor, type ListingSession, type Shapes } from "./listed-shapes";
import { withSubscriptionId } from "../../relay/subscription-notifications";

/** The shortest interval between two checks, whatever FILTER_CACHE_TTL_MS says. */
export const MIN_FILTER_WATCH_INTERVAL_MS = 1_000;
export const TOOLS_LIST_CHANGED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });

export type FilterWatchOptions = {
  readonly kv: KVNamespace | undefined;
  /** How long an isolate trusts its copy of a filter document. */
  readonly cacheTtlMs: number;
  /** The 2025 session, whose last listing the first check compares with. */
  readonly session?: ListingSession;
  /** Without a session (a 2026-07-28 listen): the shapes the client was last told of. */
  readonly known?: Shapes;
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
export function watchFilterShapes({
  kv,
  cacheTtlMs,
  session,
  known: told,
  route,
  upstreams,
  notify,
}: FilterWatchOptions): () => void {
  const interval = Math.max(cacheTtlMs, MIN_FILTER_WATCH_INTERVAL_MS);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let known: Shapes | undefined = told;
  const check = async () => {
    try {
      known ??= session ? await listedShapes(kv, session) : await routeShapes(kv, cacheTtlMs, route, upstreams);
      const now = await routeShapes(kv, cacheTtlMs, route, upstreams);
      if (!stopped && upstreams.some((upstream) => shapeFor(known!, upstream) !== shapeFor(now, upstream))) {
        known = now;
        notify();
      }
    } catch (error) {
      console.warn(
        `mcp-edge-gateway: watching the output filters: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!stopped) timer = setTimeout(check, interval);
  };
  void check();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}

/** True when `text` is a listen's acknowledgement that agreed to `toolsListChanged`. */
function acknowledgesToolsListChanged(text: string): boolean {
  if (!text.includes("notifications/subscriptions/acknowledged")) return false;
  const message: unknown = JSON.parse(text);
  const params =
    isObject(message) && message["method"] === "notifications/subscriptions/acknowledged"
      ? message["params"]
      : undefined;
  const agreed = isObject(params) ? params["notifications"] : undefined;
  return isObject(agreed) && agreed["toolsListChanged"] === true;
}

/**
 * Runs a `subscriptions/listen` (through `run`, given the context to use) and, once its
 * acknowledgement agreed to `toolsListChanged`, tells it of output-filter edits that
 * change what `tools/list` shows, stamped with its subscription id, until it ends.
 *
 * @example
 * return announceFilterEditsDuringListen(ctx, id, cacheTtlMs, (inner) => next(inner, message));
 */
export async function announceFilterEditsDuringListen<T>(
  ctx: CallContext,
  id: string | number,
  cacheTtlMs: number,
  run: (ctx: CallContext) => Promise<T>,
): Promise<T> {
  let stop: (() => void) | undefined;
  let ended = false;
  const upstreams = ctx.route.upstreams.map((upstream) => upstream.name);
  const emit = async (text: OutgoingMessage): Promise<void> => {
    // An acknowledgement is the gateway's own text, never an upstream's bytes.
    if (stop !== undefined || ended || typeof text !== "string" || !acknowledgesToolsListChanged(text))
      return ctx.emit(text);
    // The shapes as the acknowledgement goes out: an edit made once the client has it is announced.
    const known = await routeShapes(ctx.services.kv, cacheTtlMs, ctx.route.name, upstreams);
    await ctx.emit(text);
    if (ended) return;
    stop = watchFilterShapes({
      kv: ctx.services.kv,
      cacheTtlMs,
      known,
      route: ctx.route.name,
      upstreams,
      notify: () => void ctx.emit(withSubscriptionId(TOOLS_LIST_CHANGED, id)),
    });
  };
  try {
    return await run({ ...ctx, emit });
  } finally {
    ended = true;
    stop?.();
  }
}
