/**
 * Bounds and immutability for the JSON documents filter configuration is made of.
 *
 * Depth: every walk over a document or a value in it (validation, JSON Patch's checks,
 * deep equality, cloning) recurses, so a value nested 100,000 deep would overflow the
 * stack and surface as a bare HTTP 500. Documents are refused past `MAX_DOCUMENT_DEPTH`
 * with the place located, whether they come through the admin API or straight from KV;
 * the check itself uses an explicit stack.
 *
 * Immutability: a parsed set is shared by every call an isolate serves while it is
 * cached, so it is frozen: nothing may change it, and a bug that tried would throw
 * instead of leaking one call's data into the next.
 */
import { escapeToken } from "../core/json-pointer";

/** The deepest nesting of objects and arrays a configuration document (or a preview body) may have. */
export const MAX_DOCUMENT_DEPTH = 64;

type Frame = { readonly value: unknown; readonly depth: number; readonly parent?: Frame; readonly token?: string };

function pointerOf(frame: Frame): string {
  const tokens: string[] = [];
  for (let at: Frame | undefined = frame; at?.token !== undefined; at = at.parent) tokens.push(escapeToken(at.token));
  return tokens.length === 0 ? "" : `/${tokens.reverse().join("/")}`;
}

/**
 * The JSON Pointer of the first container nested deeper than `maxDepth` (the root's
 * members are at depth 1), or undefined when `value` is within the bound.
 */
export function tooDeepAt(value: unknown, maxDepth = MAX_DOCUMENT_DEPTH): string | undefined {
  const stack: Frame[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const current = frame.value;
    if (typeof current !== "object" || current === null) continue;
    if (frame.depth > maxDepth) return pointerOf(frame);
    const entries: [string, unknown][] = Array.isArray(current)
      ? current.map((item, index) => [String(index), item])
      : Object.entries(current);
    for (const [token, item] of entries) {
      if (typeof item === "object" && item !== null)
        stack.push({ value: item, depth: frame.depth + 1, parent: frame, token });
    }
  }
  return undefined;
}

/** Freezes `value` and everything in it (a document already bounded by `tooDeepAt`). Returns it. */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== "object" || current === null || Object.isFrozen(current)) continue;
    Object.freeze(current);
    for (const item of Object.values(current)) stack.push(item);
  }
  return value;
}
