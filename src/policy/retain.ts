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
 * - A pointer without `*` that does not resolve is an error: the result does not have
 *   the shape the rule was written for, and the call fails closed.
 */
import { child, escapeToken, parsePointer } from "../core/json-pointer";

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

/** The tree of what `pointers` keep (`true` when one of them is the whole value). */
export function buildTree(pointers: readonly string[]): Keep {
  const tree = new Map<string, Keep>();
  for (const pointer of pointers) if (addPath(tree, parsePointer(pointer)) === true) return true;
  return tree;
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

/** A JSON object's own member, as `JSON.parse` owns it (a "__proto__" member is data, not the prototype). */
export function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

function project(value: unknown, keep: Keep, place: Place, strict: boolean): unknown {
  if (keep === true) return value;
  if (typeof value !== "object" || value === null) {
    if (strict) throw new RetainError(`nothing at ${here(place)} to descend into: the value there is ${value === null ? "null" : typeof value}`);
    return SKIPPED;
  }
  const wildcard = keep.get(WILDCARD);
  if (strict) {
    for (const token of keep.keys()) {
      if (token !== WILDCARD && !child(value, token).found) throw new RetainError(`the result has nothing at ${here({ parent: place, key: token })}`);
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
      const picked = sub === true ? value[index] : project(value[index], sub, { parent: place, key: String(index) }, strict && own !== undefined);
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
    const picked = sub === true ? item : project(item, sub, { parent: place, key }, strict && own !== undefined);
    if (picked !== SKIPPED) setOwn(out, key, picked);
  }
  return out;
}

/** Trees of the pointer lists seen: a rule's list is parsed once per set (sets are cached), not once per call. */
const TREES = new WeakMap<readonly string[], Keep>();

/** Applies `retain` to `value`; throws `RetainError` when a pointer does not resolve. */
export function retain(value: unknown, pointers: readonly string[]): unknown {
  let keep = TREES.get(pointers);
  if (keep === undefined) TREES.set(pointers, (keep = buildTree(pointers)));
  return project(value, keep, undefined, true);
}
