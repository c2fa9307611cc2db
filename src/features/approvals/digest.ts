/**
 * The digest an approval is bound to: HMAC-SHA256, keyed by the session secret, of the
 * caller's principal, the upstream, the tool and the arguments in canonical form (object
 * members sorted by name at every depth, no whitespace). The same call sent again, members
 * in any order, has the same digest; a changed argument, another tool or another caller has
 * another. Keyed, so an id cannot be worked out from a call by anyone without the secret.
 */

/** Significant decimal digits a double keeps exactly: two literals with at most this many that differ parse apart. */
export const EXACT_DECIMAL_DIGITS = 15;
/** The smallest positive normal double: below it (and past the largest), different literals may parse alike. */
const MIN_NORMAL_DOUBLE = 2.2250738585072014e-308;
const NUMBER_CHARACTER = /[0-9.eE+-]/;

/** Whether a JSON parser keeps `literal` apart from every other number (see inexactNumber). */
function keptExactly(literal: string): boolean {
  const mantissa = (literal.replace(/^-/, "").split(/[eE]/)[0] ?? "").replace(".", "");
  const digits = mantissa.replace(/^0+/, "").replace(/0+$/, "");
  if (digits.length === 0) return true;
  if (digits.length > EXACT_DECIMAL_DIGITS) return false;
  const value = Math.abs(Number(literal));
  return Number.isFinite(value) && value >= MIN_NORMAL_DOUBLE;
}

/**
 * The first number literal of the JSON `text` that the digest could not tell from another,
 * or undefined. The digest reads the arguments parsed, where a number is a double, while the
 * upstream gets the bytes the client sent: `9007199254740993` parses as `9007199254740992`,
 * so an approval of one would run the other for an upstream that reads integers exactly. A
 * literal with at most EXACT_DECIMAL_DIGITS significant digits, in the doubles' normal range,
 * parses to a double no other such literal of another value does. One pass over `text`.
 *
 * @example
 * inexactNumber('{"to": 9007199254740993}'); // "9007199254740993"
 */
export function inexactNumber(text: string): string | undefined {
  let at = 0;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === 0x22) {
      at++;
      while (at < text.length && text.charCodeAt(at) !== 0x22) at += text.charCodeAt(at) === 0x5c ? 2 : 1;
      at++;
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      let end = at + 1;
      while (end < text.length && NUMBER_CHARACTER.test(text.charAt(end))) end++;
      const literal = text.slice(at, end);
      if (!keptExactly(literal)) return literal;
      at = end;
    } else at++;
  }
  return undefined;
}

/** Arguments nested deeper than this are not held for approval (the call is refused). */
export const MAX_CANONICAL_DEPTH = 128;

/** Arguments nested past MAX_CANONICAL_DEPTH. */
export class TooDeepArgumentsError extends Error {
  override readonly name = "TooDeepArgumentsError";
}

/** `value` as canonical JSON text: members sorted by name (UTF-16 order), at every depth. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_CANONICAL_DEPTH)
    throw new TooDeepArgumentsError(`arguments nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key], depth + 1)}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const encoder = new TextEncoder();

/**
 * The hex digest of a call (64 characters): the held call's id and its object's name.
 *
 * @example
 * const id = await callDigest(secret, { caller: "alice", upstream: "bank", tool: "pay", arguments: { to: "bob" } });
 */
export async function callDigest(
  secret: string,
  call: { caller: string; upstream: string; tool: string; arguments: unknown },
): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const text = `${JSON.stringify([call.caller, call.upstream, call.tool])}\n${canonicalJson(call.arguments)}`;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
