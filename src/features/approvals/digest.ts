/**
 * The digest an approval is bound to: HMAC-SHA256, keyed by the session secret, of the
 * caller's principal, the upstream, the tool and the arguments in canonical form (object
 * members sorted by name at every depth, no whitespace). The same call sent again, members
 * in any order, has the same digest; a changed argument, another tool or another caller has
 * another. Keyed, so an id cannot be worked out from a call by anyone without the secret.
 */

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
