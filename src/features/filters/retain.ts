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
import { child, escapeToken } from "../../core/json-pointer";
import { setOwn } from "../../core/jsonrpc";
import { type Branch, indexOfName, preparedTree, RetainError, WILDCARD } from "./retain-tree";

/** Where `project` is: a chain of keys from the root, turned into a pointer only for an error message. */
type Place = { readonly parent: Place; readonly key: string } | undefined;

function here(place: Place): string {
  const keys: string[] = [];
  for (let at = place; at !== undefined; at = at.parent) keys.push(at.key);
  return keys.length === 0 ? '""' : `/${keys.reverse().map(escapeToken).join("/")}`;
}

/** What `project` gives for an element or member that lacks the rest of a wildcard's pointer. */
const SKIPPED: unique symbol = Symbol("skipped");

/**
 * The part of `value` that `node` keeps, or SKIPPED. `strict` where a pointer without `*`
 * leads: there the value must have what the node requires (else `RetainError`).
 */
function project(value: unknown, node: Branch, place: Place, strict: boolean): unknown {
  if (typeof value !== "object" || value === null) {
    if (strict)
      throw new RetainError(
        `nothing at ${here(place)} to descend into: the value there is ${value === null ? "null" : typeof value}`,
      );
    return SKIPPED;
  }
  const { names, subs, required, wildcard } = node;
  if (strict) {
    for (let index = 0; index < required; index++) {
      if (!child(value, names[index]!).found)
        throw new RetainError(`the result has nothing at ${here({ parent: place, key: names[index]! })}`);
    }
  }
  // A member kept whole is taken as it is; only a branch is descended into (with its place, for errors).
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      const named = names.length > 0 ? indexOfName(node, String(index)) : -1;
      const sub = named < 0 ? wildcard : subs[named]!;
      if (sub === undefined) continue;
      const item = value[index];
      const picked =
        sub === true
          ? item
          : project(item, sub, { parent: place, key: String(index) }, strict && named >= 0 && named < required);
      if (picked !== SKIPPED) out.push(picked);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const named = indexOfName(node, key);
    const sub = named < 0 ? wildcard : subs[named]!;
    if (sub === undefined) continue;
    const item = (value as Record<string, unknown>)[key];
    // A member named "*" is named by the pointer too: strict there.
    const own = named < 0 ? key === WILDCARD : named < required;
    const picked = sub === true ? item : project(item, sub, { parent: place, key }, strict && own);
    if (picked !== SKIPPED) setOwn(out, key, picked);
  }
  return out;
}

/** Applies `retain` to `value`; throws `RetainError` when a pointer does not resolve. */
export function retain(value: unknown, pointers: readonly string[]): unknown {
  const node = preparedTree(pointers);
  return node === true ? value : project(value, node, undefined, true);
}
