/**
 * Redaction of call parameters before they leave the request in an audit event: every
 * value whose key names a secret (features/audit/secret-keys.ts) is replaced, at any depth of
 * objects and arrays. Secrets also travel as name/value pairs, where the key is the
 * value of another member: `{"name": "Authorization", "value": "Bearer …"}`,
 * `{"key": "X-Api-Key", "value": "…"}`, `{"header": "Cookie", "content": "…"}`, and the
 * `["Authorization", "Bearer …"]` entries of a header list: the value of such a pair is
 * redacted when its name names a secret, whether it is a string, a list or an object.
 *
 * One pass over the value, at most `MAX_REDACTION_DEPTH` deep.
 */
import { setOwn } from "../../core/jsonrpc";

/** What stands in for a redacted value. */
export const REDACTED_VALUE = "[redacted]";
/** Deeper than this the parameters are not walked but replaced (a hostile client's nesting must not exhaust the stack). */
export const MAX_REDACTION_DEPTH = 64;
export const TOO_DEEP_VALUE = "[nested too deep to audit]";
/** Members that name the pair's value (lower-case), and the members that hold it. */
const PAIR_NAME_KEYS: ReadonlySet<string> = new Set([
  "name",
  "key",
  "header",
  "field",
  "param",
  "parameter",
  "variable",
]);
const PAIR_VALUE_KEYS: ReadonlySet<string> = new Set(["value", "values", "content"]);

/** True when `object` is a name/value pair whose name `isSecret` says is secret. */
function isSecretPair(object: Readonly<Record<string, unknown>>, isSecret: (key: string) => boolean): boolean {
  let named = false;
  let valued = false;
  for (const [key, field] of Object.entries(object)) {
    const k = key.toLowerCase();
    if (PAIR_NAME_KEYS.has(k) && typeof field === "string" && isSecret(field)) named = true;
    else if (PAIR_VALUE_KEYS.has(k)) valued = true;
  }
  return named && valued;
}

/**
 * `value` with every member whose key `isSecret` says is secret replaced by
 * `[redacted]`, and the value of every secret name/value pair, at any depth; the input
 * is not changed.
 *
 * @example
 * redactParameters({ user: "ada", headers: [{ name: "Authorization", value: "Bearer t" }] }, secretKeyMatcher(["authorization"]))
 * // { user: "ada", headers: [{ name: "Authorization", value: "[redacted]" }] }
 */
export function redactParameters(value: unknown, isSecret: (key: string) => boolean, depth = 0): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_REDACTION_DEPTH) return TOO_DEEP_VALUE;
  if (Array.isArray(value)) {
    // A header list's entry: [name, value], its value redacted whatever it holds (a list of values, an object), as a pair's is.
    if (value.length === 2 && typeof value[0] === "string" && isSecret(value[0])) return [value[0], REDACTED_VALUE];
    return value.map((item) => redactParameters(item, isSecret, depth + 1));
  }
  const object = value as Readonly<Record<string, unknown>>;
  const pair = isSecretPair(object, isSecret);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(object)) {
    const secret = isSecret(key) || (pair && PAIR_VALUE_KEYS.has(key.toLowerCase()));
    setOwn(out, key, secret ? REDACTED_VALUE : redactParameters(field, isSecret, depth + 1));
  }
  return out;
}
