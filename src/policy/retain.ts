/**
 * `retain`: keep only the branches on a path to one of a list of JSON Pointers, before
 * any patch runs (JSON Patch can only say what to remove, which is impractical when a
 * small part of a broad answer matters).
 *
 * Semantics, with examples in README:
 * - `""` retains the whole value; `/a` retains `a` whole, so `/a` and `/a/b` together
 *   keep all of `a`.
 * - Containers on the way keep their kind. Retained array elements keep their order
 *   and are packed (`/items/2` gives a one-element array).
 * - `*` as a reference token stands for every element of an array (or member of an
 *   object); an element that lacks the rest of the pointer is skipped.
 * - A pointer without `*` that does not resolve is an error: the result does not have
 *   the shape the rule was written for, and the call fails closed.
 */
import { child, parsePointer } from "./json-pointer";

const WILDCARD = "*";

/** A tree of what to keep: `true` keeps the whole value at that point. */
type Keep = true | Map<string, Keep>;

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

function buildTree(pointers: readonly string[]): Keep {
  const tree = new Map<string, Keep>();
  for (const pointer of pointers) if (addPath(tree, parsePointer(pointer)) === true) return true;
  return tree;
}

function project(value: unknown, keep: Keep, at: string, strict: boolean): { found: boolean; value: unknown } {
  if (keep === true) return { found: true, value };
  if (typeof value !== "object" || value === null) {
    if (strict) throw new RetainError(`nothing at ${at || '""'} to descend into: the value there is ${value === null ? "null" : typeof value}`);
    return { found: false, value: undefined };
  }
  const entries: [string, unknown][] = [];
  const wildcard = keep.get(WILDCARD);
  const keys = Array.isArray(value) ? value.map((_, index) => String(index)) : Object.keys(value);
  for (const key of keys) {
    const sub = keep.get(key) ?? wildcard;
    if (sub === undefined) continue;
    const viaWildcard = !keep.has(key);
    const picked = project(child(value, key).value, sub, `${at}/${key}`, strict && !viaWildcard);
    if (picked.found) entries.push([key, picked.value]);
  }
  if (strict) {
    for (const token of keep.keys()) {
      if (token !== WILDCARD && !child(value, token).found) throw new RetainError(`the result has nothing at ${at}/${token}`);
    }
  }
  return { found: true, value: Array.isArray(value) ? entries.map(([, v]) => v) : Object.fromEntries(entries) };
}

/** Applies `retain` to `value`; throws `RetainError` when a pointer does not resolve. */
export function retain(value: unknown, pointers: readonly string[]): unknown {
  return project(value, buildTree(pointers), "", true).value;
}
