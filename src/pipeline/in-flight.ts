/**
 * What a 2025 client has in flight, as far as this isolate knows: its requests the
 * gateway is relaying now, and the progress tokens of the requests an upstream sent it
 * through the gateway (sampling, elicitation) while they wait for its answer. A client's
 * `notifications/cancelled` or `notifications/progress` means something upstream only for
 * one of these (client-notifications.ts).
 *
 * This is a cache in isolate memory, never the only copy of anything: the request a
 * cancellation names may be relayed by another isolate. What the registry does not know is
 * therefore not refused as unknown; it is counted against the principal's rate limit like
 * any message that reaches an upstream (features/personas/rate-limit.ts). Memory is bounded: at
 * most MAX_IN_FLIGHT_ENTRIES entries per isolate, ids longer than MAX_ID_CHARS are not
 * kept (both fall back to being counted).
 */
import type { JsonRpcId } from "../core/jsonrpc";
import type { CallContext } from "../context/call-context";

/** Entries kept per isolate; past it, new ones are not kept. */
export const MAX_IN_FLIGHT_ENTRIES = 10_000;
/** Ids (request ids, progress tokens) longer than this, in UTF-16 code units, are not kept. */
export const MAX_ID_CHARS = 256;

/** What an entry names: a client request in flight, or a progress token an upstream handed the client. */
export type InFlightKind = "request" | "progress";

/** The client's own requests and the upstreams' progress tokens, by session; each entry counted (an id may repeat). */
const entries = new Map<string, number>();

/** The key of `id` of `kind` for the client of `ctx`; undefined when there is nothing to key it by. */
function keyOf(ctx: Pick<CallContext, "identity">, kind: InFlightKind, id: JsonRpcId): string | undefined {
  const session = ctx.identity.session;
  if (!session || String(id).length > MAX_ID_CHARS) return undefined;
  return `${kind}\u0000${session.id}\u0000${typeof id}\u0000${id}`;
}

/**
 * Notes `id` as in flight for the client of `ctx`; returns the function that forgets it
 * (call it once the request or the upstream's request is done).
 *
 * @example
 * const done = holdInFlight(ctx, "request", request.id);
 * try { return await next(ctx, message); } finally { done(); }
 */
export function holdInFlight(ctx: Pick<CallContext, "identity">, kind: InFlightKind, id: JsonRpcId): () => void {
  const key = keyOf(ctx, kind, id);
  if (key === undefined || (!entries.has(key) && entries.size >= MAX_IN_FLIGHT_ENTRIES)) return () => {};
  entries.set(key, (entries.get(key) ?? 0) + 1);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    const count = entries.get(key);
    if (count === undefined) return;
    if (count <= 1) entries.delete(key);
    else entries.set(key, count - 1);
  };
}

/** True when this isolate knows `id` of `kind` to be in flight for the client of `ctx`. */
export function isInFlight(ctx: Pick<CallContext, "identity">, kind: InFlightKind, id: JsonRpcId): boolean {
  const key = keyOf(ctx, kind, id);
  return key !== undefined && entries.has(key);
}

/**
 * Takes the one free cancellation of request `id`: true the first time the client of `ctx`
 * cancels a request this isolate knows in flight, which is forgotten then (a repeat is
 * counted like any other notification, so one long request cannot carry a flood of them).
 */
export function takeCancellation(ctx: Pick<CallContext, "identity">, id: JsonRpcId): boolean {
  const key = keyOf(ctx, "request", id);
  return key !== undefined && entries.delete(key);
}
