/**
 * JSON with object keys sorted, so equal values give equal text (and equal digests)
 * whatever order their keys came in: the key of a modern client's upstream sessions,
 * the request digest sealed into a wrapped `requestState`.
 */
import { bytesToBase64Url } from "./base64url";

/**
 * The canonical text of a JSON value: keys sorted by UTF-16 code units, no whitespace.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }); // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  // Iterative (an explicit stack of text pieces and values still to write), so a value
  // nested tens of thousands of levels deep, as an upstream may send, cannot exhaust the call stack.
  const out: string[] = [];
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const item = todo.pop();
    if (item instanceof Literal) out.push(item.text);
    else if (Array.isArray(item)) {
      const next: unknown[] = [new Literal("[")];
      item.forEach((element, index) => next.push(...(index > 0 ? [new Literal(","), element] : [element])));
      next.push(new Literal("]"));
      for (let i = next.length - 1; i >= 0; i--) todo.push(next[i]);
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const next: unknown[] = [new Literal("{")];
      entries.forEach(([k, v], index) => next.push(new Literal(`${index > 0 ? "," : ""}${JSON.stringify(k)}:`), v));
      next.push(new Literal("}"));
      for (let i = next.length - 1; i >= 0; i--) todo.push(next[i]);
    } else out.push(JSON.stringify(item) ?? "null");
  }
  return out.join("");
}

/** A piece of text already written, on canonicalJson's stack. */
class Literal {
  constructor(readonly text: string) {}
}

/**
 * SHA-256 of the canonical text of `value`, base64url.
 *
 * @example
 * await canonicalDigest(["prompts/get", "greet", { text: "hi" }]); // "3q2-…"
 */
export async function canonicalDigest(value: unknown): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(value))));
  return bytesToBase64Url(bytes);
}
