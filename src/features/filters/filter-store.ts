/**
 * Filter sets and the plan, from the KV document store (read at most once per TTL per
 * isolate, validated on every read), and which set applies to a call.
 */
import { isObject } from "../../core/jsonrpc";
import { filterSetKey, PLAN_KEY } from "../../storage/document-keys";
import {
  forgetDocument,
  formatProblems,
  loadDocument,
  type DocumentProblem,
  type Stored as StoredDocument,
} from "../../storage/document-store";
import { checkFilterSet, checkPlan, type FilterPlan, type FilterSet } from "./filter-set";

export const DEFAULT_FILTER_SET = "default";
/** A filter document as stored: broken ones name the tool keys they hold, when readable. */
export type Stored<T> =
  | Exclude<StoredDocument<T>, { state: "broken" }>
  | { readonly state: "broken"; readonly problems: readonly DocumentProblem[]; readonly toolKeys?: readonly string[] };

/** The tool keys a broken document names, so only calls of those tools fail closed. */
function withToolKeys<T>(stored: StoredDocument<T>): Stored<T> {
  if (stored.state !== "broken") return stored;
  const tools = isObject(stored.parsed) ? stored.parsed["tools"] : undefined;
  return { state: "broken", problems: stored.problems, ...(isObject(tools) ? { toolKeys: Object.keys(tools) } : {}) };
}

/** Drops this isolate's copy of a document (after a write through the admin API). */
export const forgetCached = forgetDocument;

export async function loadPlan(kv: KVNamespace, ttlMs: number): Promise<Stored<FilterPlan>> {
  return withToolKeys(await loadDocument(kv, PLAN_KEY, ttlMs, checkPlan));
}

export async function loadFilterSet(kv: KVNamespace, name: string, ttlMs: number): Promise<Stored<FilterSet>> {
  return withToolKeys(await loadDocument(kv, filterSetKey(name), ttlMs, (value) => checkFilterSet(name, value)));
}

/** The set a call uses: the plan's entry for its route, else for its upstream, else the plan's default, else `default`. */
export function setNameFor(
  plan: FilterPlan | undefined,
  route: string,
  upstream: string,
): { name: string | null; explicit: boolean } {
  const routeKey = route === "" ? "/mcp" : `/mcp/${route}`;
  // Own entries only: an upstream named `constructor` must not find `Object` in a plan.
  const entry = (table: Readonly<Record<string, string | null>> | undefined, key: string) =>
    table && Object.hasOwn(table, key) ? table[key] : undefined;
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
export async function activeFilters(
  kv: KVNamespace | undefined,
  route: string,
  upstream: string,
  ttlMs: number,
): Promise<ActiveFilters> {
  if (!kv) return { state: "none" };
  const plan = await loadPlan(kv, ttlMs);
  if (plan.state === "broken")
    return {
      state: "broken",
      message: `the filter plan (KV key "${PLAN_KEY}") is invalid: ${formatProblems(plan.problems)}`,
    };
  const { name, explicit } = setNameFor(plan.state === "valid" ? plan.value : undefined, route, upstream);
  if (name === null) return { state: "none" };
  const set = await loadFilterSet(kv, name, ttlMs);
  switch (set.state) {
    case "valid":
      return { state: "active", set: set.value };
    case "absent":
      return explicit
        ? { state: "broken", message: `the plan names filter set "${name}", which does not exist` }
        : { state: "none" };
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
