/**
 * What a client was told about the shape of each upstream's tools, so that a live filter
 * edit never hands it a result that contradicts an `outputSchema` it holds.
 *
 * `tools/list` removes the `outputSchema` of every tool an enforced set filters. Which
 * tools those are depends only on the keys of the enforced set that applies to each
 * upstream (a rule's content changes the result, never whether the schema is listed), so
 * the "shape" of an upstream is a digest of those keys. A client that listed tools under
 * one shape and calls a filtered tool under another may hold that tool's upstream schema
 * while the gateway now filters it: that call is answered with a tool error saying to
 * list tools again, before anything is forwarded.
 *
 * Stateless: the shapes at initialize are sealed into the session; a later `tools/list`
 * under other shapes records them in KV (`tools-listed/<sid>`, until the session
 * expires), so a write happens only when filters changed during the session. KV is
 * eventually consistent (docs/filters.md, "Live editing"): see there for the window this leaves.
 */
import { bytesToBase64Url } from "../../core/base64url";
import type { FilterSet } from "./filter-set";
import { activeFilters, type ActiveFilters } from "./filter-store";
import { readListedShapes, writeListedShapes } from "../../storage/listed-shapes-records";

/** An upstream whose tools the client got under more than one shape (pages of one walk): matches nothing. */
export const MIXED_SHAPE = "mixed";
/** KV's minimum expiration TTL. */
const MIN_KV_TTL_S = 60;
const DIGEST_BYTES = 9;
const SEPARATOR = "___";

/**
 * Upstream name → shape digest; an upstream that is absent has no tool reshaped. The
 * entry `*` (never an upstream name) stands for every upstream without its own entry.
 */
export type Shapes = Readonly<Record<string, string>>;
const EVERY_UPSTREAM = "*";
/** Shapes that match none: sealed when the filters cannot be read at initialize, and read from a damaged record. */
export const UNKNOWN_SHAPES: Shapes = { [EVERY_UPSTREAM]: MIXED_SHAPE };

/** The client session whose listings are recorded (the call context's `identity.session`). */
export type ListingSession = {
  readonly id: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
  readonly filterShapes?: Shapes;
};

const digests = new WeakMap<FilterSet, Map<string, Promise<string | undefined>>>();

async function digestOf(keys: readonly string[]): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(keys)));
  return bytesToBase64Url(new Uint8Array(hash).slice(0, DIGEST_BYTES));
}

/**
 * The shape of `upstream`'s tools under `active`: a digest of the enforced keys that can
 * name one of its tools (its own `<upstream>___…` keys and every glob), or undefined when
 * none of its tools is reshaped.
 */
export function shapeOf(active: ActiveFilters, upstream: string): Promise<string | undefined> {
  if (active.state !== "active" || active.set.mode !== "enforce") return Promise.resolve(undefined);
  const set = active.set;
  let perUpstream = digests.get(set);
  if (!perUpstream) {
    perUpstream = new Map();
    digests.set(set, perUpstream);
  }
  let shape = perUpstream.get(upstream);
  if (!shape) {
    const keys = Object.keys(set.tools)
      .filter((key) => key.startsWith(upstream + SEPARATOR) || key.includes("*") || key.includes("?"))
      .sort();
    shape = keys.length === 0 ? Promise.resolve(undefined) : digestOf(keys);
    perUpstream.set(upstream, shape);
  }
  return shape;
}

/** The shapes of `upstreams` as `setFor` resolves their filters now. */
export async function currentShapes(
  upstreams: readonly string[],
  setFor: (upstream: string) => Promise<ActiveFilters>,
): Promise<Shapes> {
  const entries = await Promise.all(
    upstreams.map(async (upstream) => [upstream, await shapeOf(await setFor(upstream), upstream)] as const),
  );
  const out: Record<string, string> = {};
  for (const [upstream, shape] of entries) if (shape !== undefined) out[upstream] = shape;
  return out;
}

/**
 * The shapes of a route's upstreams now, read as calls read them (through this isolate's
 * cache of filter documents); UNKNOWN_SHAPES when the documents cannot be read.
 */
export async function routeShapes(
  kv: KVNamespace | undefined,
  ttl: number,
  route: string,
  upstreams: readonly string[],
): Promise<Shapes> {
  try {
    return await currentShapes(upstreams, (upstream) => activeFilters(kv, route, upstream, ttl));
  } catch (error) {
    console.warn(
      `mcp-edge-gateway: the filter documents could not be read: ${error instanceof Error ? error.message : String(error)}`,
    );
    return UNKNOWN_SHAPES;
  }
}

/** One upstream's entry, own properties only (an upstream may be named `constructor`). */
export function shapeFor(shapes: Shapes, upstream: string): string | undefined {
  if (Object.hasOwn(shapes, upstream)) return shapes[upstream];
  return Object.hasOwn(shapes, EVERY_UPSTREAM) ? shapes[EVERY_UPSTREAM] : undefined;
}

function sameShapes(a: Shapes, b: Shapes, upstreams: readonly string[]): boolean {
  return upstreams.every((upstream) => shapeFor(a, upstream) === shapeFor(b, upstream));
}

function parseShapes(text: string): Shapes | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    const out: Record<string, string> = {};
    for (const [key, shape] of Object.entries(value)) if (typeof shape === "string") out[key] = shape;
    return out;
  } catch {
    return undefined;
  }
}

async function recorded(kv: KVNamespace | undefined, session: Pick<ListingSession, "id">): Promise<Shapes | undefined> {
  const text = kv ? await readListedShapes(kv, session.id) : null;
  if (text === null) return undefined;
  // A record that cannot be read says only that the client listed under something else.
  return parseShapes(text) ?? UNKNOWN_SHAPES;
}

function sealedShapes(session: Pick<ListingSession, "filterShapes">): Shapes {
  return session.filterShapes ?? {};
}

/**
 * The shapes of the client's latest `tools/list`: the KV record of a list made under
 * other shapes than the session's start, else the shapes sealed at initialize (also when
 * the client never listed tools in this session).
 */
export async function listedShapes(
  kv: KVNamespace | undefined,
  session: Pick<ListingSession, "id" | "filterShapes">,
): Promise<Shapes> {
  return (await recorded(kv, session)) ?? sealedShapes(session);
}

/**
 * Notes that the client was just given a page of `tools/list` under `now`. A first page
 * replaces what it held; a later page (`continued`) of another shape makes the upstreams
 * that differ `mixed`. Written only when it changes what `listedShapes` answers; awaited,
 * so the client's next call finds it (a failed write fails the list, never the check).
 */
export async function recordListing(
  kv: KVNamespace | undefined,
  session: ListingSession,
  upstreams: readonly string[],
  now: Shapes,
  continued: boolean,
): Promise<void> {
  if (!kv) return;
  const record = await recorded(kv, session);
  const held = record ?? sealedShapes(session);
  const next: Record<string, string> = {};
  for (const upstream of upstreams) {
    const shape = shapeFor(now, upstream);
    const before = shapeFor(held, upstream);
    const chosen = !continued || before === shape ? shape : MIXED_SHAPE;
    if (chosen !== undefined) next[upstream] = chosen;
  }
  if (sameShapes(held, next, upstreams)) return;
  const ttl = Math.max(MIN_KV_TTL_S, session.expiresAt - Math.floor(Date.now() / 1000));
  await writeListedShapes(kv, session.id, JSON.stringify(next), ttl);
}

/**
 * True when the client may hold `upstream`'s tool schemas from a list made under other
 * filters than `active` (which reshapes the tool being called): the call must not be
 * answered with a filtered result.
 */
export async function mayHoldUpstreamSchema(
  kv: KVNamespace | undefined,
  session: ListingSession,
  upstream: string,
  active: ActiveFilters,
): Promise<boolean> {
  const [listed, current] = await Promise.all([listedShapes(kv, session), shapeOf(active, upstream)]);
  return shapeFor(listed, upstream) !== current;
}
