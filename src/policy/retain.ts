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

/** The pointer to where `project` is, built only for an error message. */
function here(path: readonly string[]): string {
  return path.length === 0 ? '""' : `/${path.map(escapeToken).join("/")}`;
}

function project(value: unknown, keep: Keep, path: string[], strict: boolean): { found: boolean; value: unknown } {
  if (keep === true) return { found: true, value };
  if (typeof value !== "object" || value === null) {
    if (strict) throw new RetainError(`nothing at ${here(path)} to descend into: the value there is ${value === null ? "null" : typeof value}`);
    return { found: false, value: undefined };
  }
  const wildcard = keep.get(WILDCARD);
  if (strict) {
    for (const token of keep.keys()) {
      if (token !== WILDCARD && !child(value, token).found) throw new RetainError(`the result has nothing at ${here([...path, token])}`);
    }
  }
  const visit = (key: string, item: unknown): { found: boolean; value: unknown } | undefined => {
    const named = keep.get(key);
    const sub = named ?? wildcard;
    if (sub === undefined) return undefined;
    path.push(key);
    const picked = project(item, sub, path, strict && named !== undefined);
    path.pop();
    return picked.found ? picked : undefined;
  };
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      const picked = visit(String(index), value[index]);
      if (picked) out.push(picked.value);
    }
    return { found: true, value: out };
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const picked = visit(key, (value as Record<string, unknown>)[key]);
    if (!picked) continue;
    // JSON may carry a "__proto__" member; assigning it would set the prototype instead.
    if (key === "__proto__") Object.defineProperty(out, key, { value: picked.value, enumerable: true, writable: true, configurable: true });
    else out[key] = picked.value;
  }
  return { found: true, value: out };
}

/** Applies `retain` to `value`; throws `RetainError` when a pointer does not resolve. */
export function retain(value: unknown, pointers: readonly string[]): unknown {
  return project(value, buildTree(pointers), [], true).value;
}
