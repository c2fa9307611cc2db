/**
 * Upstream list answers held at the edge, so a client's `tools/list` (and prompts,
 * resources, templates; the tool-search catalog, which lists on every search) need not
 * reach the upstream every time.
 *
 * What is held is the upstream's answer, byte for byte as the relay got it; personas, pins,
 * overrides, visibility and catalog modes apply after it, as to a fresh answer. An answer
 * is held only as long as its upstream allows: a 2026-07-28 upstream's own caching hints
 * (`ttlMs`, `cacheScope`), or for one that gives none (2025) the operator's
 * `UPSTREAMS[].listCache`. Every copy goes when the upstream says its list changed
 * (`notifications/*\/list_changed`, on any stream the gateway reads from it: `noteListChange`).
 *
 * Where: this isolate's memory (bounded in bytes, least recently used first out) and, for
 * `public` answers, the data centre's Cache API, which other isolates read. A `private`
 * answer is held under a key that names its principal (with roles and persona), so no
 * other principal is ever answered from it. The Cache API copies this isolate did not
 * write or read are not reachable by its list_changed; they last their ttl at most.
 */
import { member, members, parseSpan, rootSpan } from "../core/raw-json";
import type { JsonRpcMessage } from "../core/jsonrpc";
import { MAX_LIST_CACHE_TTL_MS, type ListCacheScope, type UpstreamConfig } from "../config/upstreams";

/** The lists that are held. */
export const CACHED_LIST_METHODS: ReadonlySet<string> = new Set([
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
]);
/** Which lists each list_changed notification makes stale. */
const STALE_AFTER: ReadonlyMap<string, readonly string[]> = new Map([
  ["notifications/tools/list_changed", ["tools/list"]],
  ["notifications/prompts/list_changed", ["prompts/list"]],
  ["notifications/resources/list_changed", ["resources/list", "resources/templates/list"]],
]);
/** Memory this isolate gives held lists (UTF-16 code units × 2, keys included): a few large catalogs. */
export const LIST_CACHE_MAX_BYTES = 8 * 1024 * 1024;
/** One list past this is not held: it would push out everything else. */
const MAX_HELD_LIST_BYTES = 2 * 1024 * 1024;
/** Bookkeeping per held list beside its text (a rough figure, so many tiny lists still count). */
const ENTRY_OVERHEAD_BYTES = 256;
/** Cache API copies this isolate remembers, so a list_changed can delete them. */
const MAX_SHARED_COPIES = 2_048;
/** The Cache API keeps whole seconds: a shorter hold stays in memory only. */
const MIN_SHARED_TTL_MS = 1_000;
/** Not a real host: Cache API keys only. */
const SHARED_KEY_ORIGIN = "https://list-cache.mcp-edge-gateway.invalid/";
/** When a Cache API copy stops being good, ms since the epoch (its max-age keeps whole seconds only). */
const EXPIRES_HEADER = "x-list-expires-at";
/** When a Cache API copy was written, ms since the epoch: one written before a list_changed seen here is stale. */
const WRITTEN_HEADER = "x-list-written-at";
/** Upstream-and-method pairs whose list changes (and upstreams whose last scope) are remembered; names come from configuration, this only bounds them. */
const MAX_CHANGE_RECORDS = 4_096;

/** How long one answer may be held, and for whom. */
export type ListHold = { readonly ttlMs: number; readonly scope: ListCacheScope };

/**
 * Where one list request's answer is held: digests of everything the answer depends on
 * (upstream and its configuration, method, parameters, the client's revision and
 * capabilities), one of them with the principal in it.
 */
export type ListKeys = {
  readonly upstream: string;
  readonly method: string;
  readonly shared: string;
  readonly own: string;
};

type Entry = {
  readonly upstream: string;
  readonly method: string;
  readonly expiresAt: number;
  readonly text: string;
  readonly bytes: number;
};

/** Held lists by key (`public:<digest>` or `private:<digest>`), least recently used first. */
const entries = new Map<string, Entry>();
let heldBytes = 0;
/** Cache API copies this isolate wrote or read: key URL → its upstream and method. */
const sharedCopies = new Map<string, { readonly upstream: string; readonly method: string }>();
/** Per upstream and method, bumped by each list_changed: an answer asked for before one is not held after it. */
const generations = new Map<string, number>();
/** Per upstream and method, when this isolate last saw its list change (ms since the epoch). */
const changedAt = new Map<string, number>();
/**
 * How each upstream's last answer to each list method here could be held: a list known
 * not to be `public` is not looked up in the Cache API, one known not to be holdable at
 * all (no hints, no `listCache`) not even in memory (`mayBeHeld`).
 */
const lastScope = new Map<string, ListCacheScope | "none">();

function sharedCache(): Cache | undefined {
  return typeof caches === "undefined" ? undefined : caches.default;
}

function drop(key: string): void {
  const entry = entries.get(key);
  if (!entry) return;
  entries.delete(key);
  heldBytes -= entry.bytes;
}

/** The entry at `key` if still good, made the most recently used. */
function fresh(key: string, now: number): Entry | undefined {
  const entry = entries.get(key);
  if (!entry) return undefined;
  drop(key);
  if (entry.expiresAt <= now) return undefined;
  entries.set(key, entry);
  heldBytes += entry.bytes;
  return entry;
}

function keep(key: string, entry: Entry): void {
  drop(key);
  entries.set(key, entry);
  heldBytes += entry.bytes;
  for (const [oldest] of entries) {
    if (heldBytes <= LIST_CACHE_MAX_BYTES) break;
    drop(oldest);
  }
}

function rememberShared(url: string, upstream: string, method: string): void {
  sharedCopies.delete(url);
  if (sharedCopies.size >= MAX_SHARED_COPIES) sharedCopies.delete(sharedCopies.keys().next().value!);
  sharedCopies.set(url, { upstream, method });
}

function generationKey(upstream: string, method: string): string {
  return `${upstream}\n${method}`;
}

/**
 * Records how `upstream`'s last `method` answer could be held (undefined: not at all).
 * `holdList` does it for the answers it is given.
 */
export function noteHold(upstream: string, method: string, hold: ListHold | undefined): void {
  if (lastScope.size >= MAX_CHANGE_RECORDS) lastScope.clear();
  lastScope.set(generationKey(upstream, method), hold?.scope ?? "none");
}

/**
 * Whether a `method` list of `upstream` may be held here: false while its last answer
 * here could not be held (no hints, no `listCache`), so such a list costs no key.
 */
export function mayBeHeld(upstream: string, method: string): boolean {
  return lastScope.get(generationKey(upstream, method)) !== "none";
}

/** The list_changed count of `upstream`'s `method` lists seen here: take it before asking the upstream, give it to `holdList`. */
export function listGeneration(upstream: string, method: string): number {
  return generations.get(generationKey(upstream, method)) ?? 0;
}

/**
 * The held answer for `keys`, if one is good: this principal's own, else a public one from
 * this isolate, else (for an upstream that may answer `public`) from the Cache API.
 *
 * @example
 * const held = await heldList(keys);
 * if (held !== undefined) return withMessageId(held, id);
 */
export async function heldList(keys: ListKeys, now = Date.now()): Promise<string | undefined> {
  const local = fresh(`private:${keys.own}`, now) ?? fresh(`public:${keys.shared}`, now);
  if (local) return local.text;
  const cache = sharedCache();
  const scope = lastScope.get(generationKey(keys.upstream, keys.method));
  if (!cache || (scope !== undefined && scope !== "public")) return undefined;
  const url = SHARED_KEY_ORIGIN + keys.shared;
  const copy = await cache.match(url);
  if (!copy) return undefined;
  const expiresAt = Number(copy.headers.get(EXPIRES_HEADER));
  const writtenAt = Number(copy.headers.get(WRITTEN_HEADER));
  const text = await copy.text();
  const changed = changedAt.get(generationKey(keys.upstream, keys.method));
  if (!(expiresAt > now) || !Number.isFinite(writtenAt) || (changed !== undefined && writtenAt <= changed))
    return undefined;
  rememberShared(url, keys.upstream, keys.method);
  const bytes = sizeOf(keys.shared, text);
  if (bytes <= MAX_HELD_LIST_BYTES)
    keep(`public:${keys.shared}`, { upstream: keys.upstream, method: keys.method, expiresAt, text, bytes });
  return text;
}

function sizeOf(key: string, text: string): number {
  return (key.length + text.length) * 2 + ENTRY_OVERHEAD_BYTES;
}

/**
 * How long `answer` (an upstream's list answer) may be held: by its own hints
 * (`ttlMs` and `cacheScope` of a complete result), else by the operator's `listCache`;
 * undefined for an error, an unfinished result or a ttl of 0.
 *
 * @example
 * holdOf('{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resultType":"complete","ttlMs":60000,"cacheScope":"public"}}');
 * // { ttlMs: 60000, scope: "public" }
 */
export function holdOf(answer: string, configured?: UpstreamConfig["listCache"]): ListHold | undefined {
  if (configured?.ttlMs === 0) return undefined;
  const result = member(answer, rootSpan(answer), "result");
  if (!result || answer.charCodeAt(result.start) !== 0x7b) return undefined;
  let ttlMs: unknown;
  let scope: unknown;
  for (const { key, value } of members(answer, result)) {
    if (key === "resultType" && parseSpan(answer, value) !== "complete") return undefined;
    if (key === "ttlMs") ttlMs = parseSpan(answer, value);
    if (key === "cacheScope") scope = parseSpan(answer, value);
  }
  const hold: ListHold | undefined =
    typeof ttlMs === "number" && Number.isFinite(ttlMs)
      ? { ttlMs: Math.min(Math.floor(ttlMs), MAX_LIST_CACHE_TTL_MS), scope: scope === "public" ? "public" : "private" }
      : configured && { ttlMs: configured.ttlMs, scope: configured.cacheScope };
  return hold && hold.ttlMs > 0 ? hold : undefined;
}

/**
 * Holds `answer` for `keys` as `hold` allows, unless the list changed since `generation`
 * was taken. A public answer is also put in the Cache API, through `waitUntil`.
 */
export function holdList(
  keys: ListKeys,
  hold: ListHold | undefined,
  answer: string,
  generation: number,
  waitUntil: (work: Promise<unknown>) => void,
  now = Date.now(),
): void {
  noteHold(keys.upstream, keys.method, hold);
  if (!hold || listGeneration(keys.upstream, keys.method) !== generation) return;
  const key = hold.scope === "public" ? keys.shared : keys.own;
  const bytes = sizeOf(key, answer);
  if (bytes > MAX_HELD_LIST_BYTES) return;
  const expiresAt = now + hold.ttlMs;
  keep(`${hold.scope}:${key}`, { upstream: keys.upstream, method: keys.method, expiresAt, text: answer, bytes });
  const cache = sharedCache();
  if (hold.scope !== "public" || hold.ttlMs < MIN_SHARED_TTL_MS || !cache) return;
  const url = SHARED_KEY_ORIGIN + keys.shared;
  rememberShared(url, keys.upstream, keys.method);
  const headers = {
    "content-type": "application/json",
    "cache-control": `max-age=${Math.floor(hold.ttlMs / 1000)}`,
    [EXPIRES_HEADER]: String(expiresAt),
    [WRITTEN_HEADER]: String(now),
  };
  waitUntil(
    cache
      .put(url, new Response(answer, { headers }))
      .catch((error: unknown) =>
        console.warn(`mcp-edge-gateway: list cache: ${error instanceof Error ? error.message : String(error)}`),
      ),
  );
}

/**
 * Drops every held copy of the lists `message` says changed, when it is an upstream's
 * list_changed notification; any other message is left alone. The pool calls it for
 * every message an upstream sends, on every stream.
 *
 * @example
 * noteListChange("github", { jsonrpc: "2.0", method: "notifications/tools/list_changed" });
 */
export function noteListChange(upstream: string, message: JsonRpcMessage, now = Date.now()): void {
  if (!("method" in message) || "id" in message) return;
  const stale = STALE_AFTER.get(message.method);
  if (!stale) return;
  if (generations.size >= MAX_CHANGE_RECORDS) {
    // Only a bound: an answer in flight across this is simply not held (its generation no longer matches).
    generations.clear();
    changedAt.clear();
  }
  for (const method of stale) {
    const key = generationKey(upstream, method);
    generations.set(key, (generations.get(key) ?? 0) + 1);
    changedAt.set(key, now);
    for (const [held, entry] of entries) if (entry.upstream === upstream && entry.method === method) drop(held);
    for (const [url, copy] of sharedCopies) {
      if (copy.upstream !== upstream || copy.method !== method) continue;
      sharedCopies.delete(url);
      sharedCache()
        ?.delete(url)
        .catch(() => {}); // best effort: the copy's own max-age ends it anyway
    }
  }
}

/** Forgets every list this isolate holds (not the Cache API's copies): a fresh isolate's view. */
export function forgetHeldLists(): void {
  entries.clear();
  heldBytes = 0;
  sharedCopies.clear();
  generations.clear();
  changedAt.clear();
  lastScope.clear();
}
