/**
 * Filter sets and the plan, read from KV at most once per TTL per isolate and
 * validated on every read: a document written straight into KV
 * (`wrangler kv key put`) gets the same checks as one written through the admin API.
 * An invalid document is logged and reported as broken, never half-applied.
 */
import { checkFilterSet, checkPlan, parseDocument, type DocumentProblem, type FilterPlan, type FilterSet } from "./filter-set";

export const FILTER_SET_KEY_PREFIX = "filter-sets/";
export const PLAN_KEY = "plan";
export const DEFAULT_FILTER_SET = "default";
export const DEFAULT_FILTER_CACHE_TTL_MS = 30_000;

/** A stored document: absent, valid, or broken with its problems (and the tool keys it names, when readable). */
export type Stored<T> =
  | { readonly state: "absent" }
  | { readonly state: "valid"; readonly value: T }
  | { readonly state: "broken"; readonly problems: readonly DocumentProblem[]; readonly toolKeys?: readonly string[] };

/** The cache TTL of filter documents: the `FILTER_CACHE_TTL_MS` var, else `fallback`. */
export function filterCacheTtlMs(env: Readonly<Record<string, unknown>>, fallback = DEFAULT_FILTER_CACHE_TTL_MS): number {
  const raw = Number(env["FILTER_CACHE_TTL_MS"]);
  return env["FILTER_CACHE_TTL_MS"] !== undefined && Number.isFinite(raw) && raw >= 0 ? raw : fallback;
}

type CacheEntry = { readonly at: number; readonly value: Promise<Stored<unknown>> };
const cache = new Map<string, CacheEntry>();

function formatProblems(problems: readonly DocumentProblem[]): string {
  return problems.map((p) => `${p.path || "/"}: ${p.message}`).join("; ");
}

async function read<T>(kv: KVNamespace, key: string, check: (value: unknown) => ReturnType<typeof checkPlan | typeof checkFilterSet>): Promise<Stored<T>> {
  const text = await kv.get(key);
  if (text === null) return { state: "absent" };
  const parsed = parseDocument(text);
  const checked = parsed.ok ? check(parsed.value) : parsed;
  if (checked.ok) return { state: "valid", value: checked.value as T };
  console.error(`mcp-edge-gateway: KV document "${key}" is invalid and is not applied: ${formatProblems(checked.problems)}`);
  const tools = parsed.ok && typeof parsed.value === "object" && parsed.value !== null ? (parsed.value as { tools?: unknown }).tools : undefined;
  const toolKeys = typeof tools === "object" && tools !== null && !Array.isArray(tools) ? Object.keys(tools) : undefined;
  return { state: "broken", problems: checked.problems, ...(toolKeys ? { toolKeys } : {}) };
}

function cached<T>(key: string, ttlMs: number, load: () => Promise<Stored<T>>): Promise<Stored<T>> {
  const now = Date.now();
  const entry = cache.get(key);
  if (entry && now - entry.at < ttlMs) return entry.value as Promise<Stored<T>>;
  const value = load().catch((error: unknown) => {
    cache.delete(key); // a KV outage is not remembered for a whole TTL
    throw error;
  });
  cache.set(key, { at: now, value });
  return value;
}

/** Drops this isolate's copy of a document (after a write through the admin API). */
export function forgetCached(key: string): void {
  cache.delete(key);
}

export function loadPlan(kv: KVNamespace, ttlMs: number): Promise<Stored<FilterPlan>> {
  return cached(PLAN_KEY, ttlMs, () => read<FilterPlan>(kv, PLAN_KEY, checkPlan));
}

export function loadFilterSet(kv: KVNamespace, name: string, ttlMs: number): Promise<Stored<FilterSet>> {
  const key = FILTER_SET_KEY_PREFIX + name;
  return cached(key, ttlMs, () => read<FilterSet>(kv, key, (value) => checkFilterSet(name, value)));
}

/** The set a call uses: the plan's entry for its route, else for its upstream, else the plan's default, else `default`. */
export function setNameFor(plan: FilterPlan | undefined, route: string, upstream: string): { name: string | null; explicit: boolean } {
  const routeKey = route === "" ? "/mcp" : `/mcp/${route}`;
  // Own entries only: an upstream named `constructor` must not find `Object` in a plan.
  const entry = (table: Readonly<Record<string, string | null>> | undefined, key: string) => (table && Object.hasOwn(table, key) ? table[key] : undefined);
  for (const chosen of [entry(plan?.routes, routeKey), entry(plan?.upstreams, upstream), plan?.default]) {
    if (chosen !== undefined) return { name: chosen, explicit: true };
  }
  return { name: DEFAULT_FILTER_SET, explicit: false };
}

/** What applies to one call. */
export type ActiveFilters =
  | { readonly state: "none" }
  | { readonly state: "active"; readonly set: FilterSet }
  | { readonly state: "broken"; readonly message: string; readonly toolKeys?: readonly string[] };

/** Resolves the plan and the set for a call; a broken or missing named document fails closed. */
export async function activeFilters(kv: KVNamespace | undefined, route: string, upstream: string, ttlMs: number): Promise<ActiveFilters> {
  if (!kv) return { state: "none" };
  const plan = await loadPlan(kv, ttlMs);
  if (plan.state === "broken") return { state: "broken", message: `the filter plan (KV key "${PLAN_KEY}") is invalid: ${formatProblems(plan.problems)}` };
  const { name, explicit } = setNameFor(plan.state === "valid" ? plan.value : undefined, route, upstream);
  if (name === null) return { state: "none" };
  const set = await loadFilterSet(kv, name, ttlMs);
  switch (set.state) {
    case "valid":
      return { state: "active", set: set.value };
    case "absent":
      return explicit ? { state: "broken", message: `the plan names filter set "${name}", which does not exist` } : { state: "none" };
    case "broken":
      return {
        state: "broken",
        message: `filter set "${name}" is invalid (${formatProblems(set.problems)}); fix it with PUT /admin/filter-sets/${name}`,
        ...(set.toolKeys ? { toolKeys: set.toolKeys } : {}),
      };
    default: {
      const never: never = set;
      return never;
    }
  }
}
