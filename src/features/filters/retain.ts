/**
 * `retain`: keep only the branches on a path to one of a list of JSON Pointers, before
 * any patch runs (JSON Patch can only say what to remove, which is impractical when a
 * small part of a broad answer matters).
 *
 * Semantics, with examples in docs/filters.md:
 * - `""` retains the whole value; `/a` retains `a` whole, so `/a` and `/a/b` together
 *   keep all of `a`.
 * - Containers on the way keep their kind. Retained array elements keep their order
 *   and are packed (`/items/2` gives a one-element array).
 * - `*` as a reference token stands for every element of an array (or member of an
 *   object); an element that lacks the rest of the pointer is skipped.
 * - What is kept is the union of what each pointer keeps: a pointer to element 0's
 *   `state` beside one through `*` to every element's `title` keeps both of element 0
 *   (a named element takes what the wildcard keeps too); `/items/0/state` beside one
 *   keeping every element whole keeps element 0 whole.
 * - A pointer without `*` that does not resolve is an error: the result does not have
 *   the shape the rule was written for, and the call fails closed.
 */
import { child, escapeToken, parsePointer } from "../../core/json-pointer";
import { setOwn } from "../../core/jsonrpc";

/** The reference token that stands for every element or member. */
export const WILDCARD = "*";

/** A tree of what to keep: `true` keeps the whole value at that point. */
export type Keep = true | Map<string, Keep>;

export class RetainError extends Error {
  override readonly name = "RetainError";
}

function addPath(tree: Map<string, Keep>, tokens: readonly string[]): Keep {
  if (tokens.length === 0) return true;
  let node = tree;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const existing = node.get(token);
    if (existing === true) return tree; // an ancestor is kept whole already
    if (i === tokens.length - 1) {
      node.set(token, true);
    } else {
      const next = existing ?? new Map<string, Keep>();
      node.set(token, next);
      node = next;
    }
  }
  return tree;
}

/**
 * Branches and copied members a rule's pointers may combine into: a named token beside a
 * `*` takes a copy of what the `*` keeps, which nested and wide lists multiply.
 */
export const MAX_RETAIN_TREE_SIZE = 100_000;

/**
 * Per branch, the names only a wildcard's pointers reach there (taken into a named
 * sibling of the `*`): kept where the value has them, never required.
 */
const LENIENT = new WeakMap<Map<string, Keep>, ReadonlySet<string>>();

/** Whether a name of `branch` must be in the value where a pointer without `*` leads (not only kept where present). */
export function isRequired(branch: Map<string, Keep>, token: string): boolean {
  return LENIENT.get(branch)?.has(token) !== true;
}

/** Branches and copied members counted while wildcards are shared (what it costs: `countWork`). */
export type RetainBudget = { work: number };

/** Counts `amount` of work, and refuses a tree past MAX_RETAIN_TREE_SIZE before doing it. */
function countWork(budget: RetainBudget, amount: number): void {
  budget.work += amount;
  if (budget.work > MAX_RETAIN_TREE_SIZE)
    throw new RetainError(
      `the pointers combine into more than ${MAX_RETAIN_TREE_SIZE} branches and copied members (each name beside a "*" takes a copy of what the "*" keeps): use fewer names or fewer wildcards beside them`,
    );
}

/** What `named` and `wildcard` keep together; what only `wildcard` keeps is lenient. Builds new branches, changes none. */
function union(named: Keep, wildcard: Keep, budget: RetainBudget): Keep {
  if (named === true || wildcard === true) return true;
  countWork(budget, named.size + wildcard.size);
  const out = new Map(named);
  const lenient = new Set(LENIENT.get(named));
  for (const [token, sub] of wildcard) {
    const own = out.get(token);
    out.set(token, own === undefined ? sub : union(own, sub, budget));
    if (own === undefined && token !== WILDCARD) lenient.add(token);
  }
  LENIENT.set(out, lenient);
  return out;
}

/**
 * `keep` with every named token beside a `*` also keeping what the `*` keeps, at every
 * level; new branches, counted. A branch of the pointers as written counts once; one
 * beside a wildcard, or reached through a union (`copied`: shared by every name it was
 * given to, so walked once per name), counts its members.
 */
function withWildcardsShared(keep: Keep, budget: RetainBudget, copied = false): Keep {
  if (keep === true) return true;
  const wildcard = keep.get(WILDCARD);
  countWork(budget, copied || wildcard !== undefined ? keep.size : 1);
  const out = new Map<string, Keep>();
  for (const [token, sub] of keep) {
    const merged = token === WILDCARD || wildcard === undefined ? sub : union(sub, wildcard, budget);
    out.set(token, withWildcardsShared(merged, budget, copied || merged !== sub));
  }
  const lenient = LENIENT.get(keep);
  if (lenient) LENIENT.set(out, lenient);
  return out;
}

/**
 * The tree of what `pointers` keep (`true` when one of them is the whole value); throws
 * `RetainError` when they combine into more than MAX_RETAIN_TREE_SIZE branches and members.
 * `budget.work` ends holding what the tree cost.
 */
export function buildTree(pointers: readonly string[], budget: RetainBudget = { work: 0 }): Keep {
  const tree = new Map<string, Keep>();
  for (const pointer of pointers) if (addPath(tree, parsePointer(pointer)) === true) return true;
  return withWildcardsShared(tree, budget);
}

/** Where `project` is: a chain of keys from the root, turned into a pointer only for an error message. */
type Place = { readonly parent: Place; readonly key: string } | undefined;

function here(place: Place): string {
  const keys: string[] = [];
  for (let at = place; at !== undefined; at = at.parent) keys.push(at.key);
  return keys.length === 0 ? '""' : `/${keys.reverse().map(escapeToken).join("/")}`;
}

/** What `project` gives for an element or member that lacks the rest of a wildcard's pointer. */
const SKIPPED: unique symbol = Symbol("skipped");

function project(value: unknown, keep: Keep, place: Place, strict: boolean): unknown {
  if (keep === true) return value;
  if (typeof value !== "object" || value === null) {
    if (strict)
      throw new RetainError(
        `nothing at ${here(place)} to descend into: the value there is ${value === null ? "null" : typeof value}`,
      );
    return SKIPPED;
  }
  const wildcard = keep.get(WILDCARD);
  if (strict) {
    for (const token of keep.keys()) {
      if (token !== WILDCARD && isRequired(keep, token) && !child(value, token).found)
        throw new RetainError(`the result has nothing at ${here({ parent: place, key: token })}`);
    }
  }
  // A member kept whole is taken as it is; only a branch is descended into (with its place, for errors).
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    const named = keep.size > (wildcard === undefined ? 0 : 1);
    for (let index = 0; index < value.length; index++) {
      const own = named ? keep.get(String(index)) : undefined;
      const sub = own ?? wildcard;
      if (sub === undefined) continue;
      const picked =
        sub === true
          ? value[index]
          : project(
              value[index],
              sub,
              { parent: place, key: String(index) },
              strict && own !== undefined && isRequired(keep, String(index)),
            );
      if (picked !== SKIPPED) out.push(picked);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const own = keep.get(key);
    const sub = own ?? wildcard;
    if (sub === undefined) continue;
    const item = (value as Record<string, unknown>)[key];
    const picked =
      sub === true
        ? item
        : project(item, sub, { parent: place, key }, strict && own !== undefined && isRequired(keep, key));
    if (picked !== SKIPPED) setOwn(out, key, picked);
  }
  return out;
}

/** Trees of the pointer lists seen: a rule's list is parsed once per set (sets are cached), not once per call. */
const TREES = new WeakMap<readonly string[], Keep>();

/** Applies `retain` to `value`; throws `RetainError` when a pointer does not resolve. */
export function retain(value: unknown, pointers: readonly string[]): unknown {
  let keep = TREES.get(pointers);
  if (keep === undefined) {
    keep = buildTree(pointers);
    TREES.set(pointers, keep);
  }
  return project(value, keep, undefined, true);
}
