/**
 * The KV document store: one validated JSON (or YAML) document per key, read from KV at
 * most once per TTL per isolate and checked on every read, so a document written straight
 * into KV (`wrangler kv key put`) gets the same checks as one written through the admin
 * API. An invalid document is logged and reported as broken, never half-applied. Filter
 * sets and the plan use it; so will personas, visibility and the other live-edited
 * documents.
 */
import { parse as parseYaml } from "yaml";

/** One problem, located by a JSON Pointer into the document. */
export type DocumentProblem = { readonly path: string; readonly message: string };

export type Checked<T> = { ok: true; value: T } | { ok: false; problems: DocumentProblem[] };

/** A stored document: absent, valid, or broken with its problems (and what was parsed of it, if it parsed). */
export type Stored<T> =
  | { readonly state: "absent" }
  | { readonly state: "valid"; readonly value: T }
  | { readonly state: "broken"; readonly problems: readonly DocumentProblem[]; readonly parsed?: unknown };

/** A document as this isolate last read it (a settled value: never a read still under way). */
type CacheEntry = { readonly at: number; readonly value: Stored<unknown> };
const cache = new Map<string, CacheEntry>();
/** Keys whose stale copy one request is reading again, since when (ms). */
const refreshing = new Map<string, number>();
/** A refresh not done after this long (its request went away) no longer holds others to the stale copy. */
const REFRESH_GIVE_UP_MS = 5_000;
/** Bumped by `forgetDocument`: a read begun before a write through the admin API never stores what it read. */
const generations = new Map<string, number>();

/** Reads a document written as JSON or YAML (JSON first: it is also YAML, but faster). */
export function parseDocument(text: string): Checked<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // Not JSON; try YAML.
  }
  try {
    return { ok: true, value: parseYaml(text, { maxAliasCount: 100 }) };
  } catch (error) {
    return { ok: false, problems: [{ path: "", message: `neither JSON nor YAML: ${(error as Error).message.split("\n")[0]}` }] };
  }
}

/** Problems as one line, each with where it is. */
export function formatProblems(problems: readonly DocumentProblem[]): string {
  return problems.map((p) => `${p.path || "/"}: ${p.message}`).join("; ");
}

async function read<T>(kv: KVNamespace, key: string, check: (value: unknown) => Checked<T>): Promise<Stored<T>> {
  const text = await kv.get(key);
  if (text === null) return { state: "absent" };
  const parsed = parseDocument(text);
  const checked = parsed.ok ? check(parsed.value) : parsed;
  if (checked.ok) return { state: "valid", value: checked.value };
  console.error(`mcp-edge-gateway: KV document "${key}" is invalid and is not applied: ${formatProblems(checked.problems)}`);
  return { state: "broken", problems: checked.problems, ...(parsed.ok ? { parsed: parsed.value } : {}) };
}

/**
 * The document at `key`, checked by `check`; this isolate's copy while it is younger
 * than `ttlMs`. Past that, one request reads it again while the others keep the copy;
 * with no copy yet, each request reads it. No request ever awaits a read another
 * request began: workerd cancels a request whose only pending work belongs to another
 * request's context as hung (a shared read at each expiry under load cancelled most of
 * the calls waiting on it, bench:relay with FILTER_CACHE_TTL_MS=5).
 *
 * @example
 * const plan = await loadDocument(kv, "plan", 30_000, checkPlan);
 */
export async function loadDocument<T>(kv: KVNamespace, key: string, ttlMs: number, check: (value: unknown) => Checked<T>): Promise<Stored<T>> {
  const now = Date.now();
  const entry = cache.get(key);
  if (entry && now - entry.at < ttlMs) return entry.value as Stored<T>;
  // With a TTL of 0 every load reads: no copy is ever served.
  const refresher = entry !== undefined && ttlMs > 0;
  if (refresher) {
    const since = refreshing.get(key);
    if (since !== undefined && now - since < REFRESH_GIVE_UP_MS) return entry.value as Stored<T>;
    refreshing.set(key, now);
  }
  const generation = generations.get(key) ?? 0;
  try {
    // A failed read (a KV outage) is not remembered: the next request tries again.
    const value = await read(kv, key, check);
    if ((generations.get(key) ?? 0) === generation) cache.set(key, { at: Date.now(), value });
    return value;
  } finally {
    if (refresher && refreshing.get(key) === now) refreshing.delete(key);
  }
}

/** Drops this isolate's copy of a document (after a write through the admin API). */
export function forgetDocument(key: string): void {
  cache.delete(key);
  refreshing.delete(key);
  generations.set(key, (generations.get(key) ?? 0) + 1);
}
