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
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * SHA-256 of the canonical text of `value`, base64url.
 *
 * @example
 * await canonicalDigest(["tools/call", "echo", { text: "hi" }]); // "3q2-…"
 */
export async function canonicalDigest(value: unknown): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(value))));
  return bytesToBase64Url(bytes);
}
