/**
 * Redaction of call parameters before they leave the request in an audit event: every
 * value whose key matches a pattern is replaced, at any depth of objects and arrays.
 * Keys are compared lower-cased with `-` read as `_` (so `api_key` also catches
 * `X-Api-Key`); a pattern without wildcards matches anywhere in the key (`token` catches
 * `access_token`), one with `*` or `?` must match the whole key.
 */
import { isGlob, matchesGlob } from "./glob";

/** What stands in for a redacted value. */
export const REDACTED_VALUE = "[redacted]";
/** Deeper than this the parameters are not walked but replaced (a hostile client's nesting must not exhaust the stack). */
export const MAX_REDACTION_DEPTH = 64;
export const TOO_DEEP_VALUE = "[nested too deep to audit]";

function normalized(key: string): string {
  return key.toLowerCase().replaceAll("-", "_");
}

/** A key matcher for `patterns` (already lower-case, `-` as `_`). */
export function secretKeyMatcher(patterns: readonly string[]): (key: string) => boolean {
  const globs = patterns.filter(isGlob);
  const words = patterns.filter((p) => !isGlob(p));
  return (key) => {
    const k = normalized(key);
    return words.some((w) => k.includes(w)) || globs.some((g) => matchesGlob(g, k));
  };
}

/**
 * `value` with every member whose key `isSecret` says is secret replaced by
 * `[redacted]`, at any depth; the input is not changed.
 *
 * @example
 * redactParameters({ user: "ada", auth: { api_key: "k" } }, secretKeyMatcher(["api_key"]))
 * // { user: "ada", auth: { api_key: "[redacted]" } }
 */
export function redactParameters(value: unknown, isSecret: (key: string) => boolean, depth = 0): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_REDACTION_DEPTH) return TOO_DEEP_VALUE;
  if (Array.isArray(value)) return value.map((item) => redactParameters(item, isSecret, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    // defineProperty: a "__proto__" key stays a plain member, never the copy's prototype.
    Object.defineProperty(out, key, { value: isSecret(key) ? REDACTED_VALUE : redactParameters(field, isSecret, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
