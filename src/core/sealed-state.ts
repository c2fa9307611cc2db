/**
 * State the gateway hands a client to bring back in a later request (a multi-round-trip
 * request's `requestState`, the id of a request the gateway sends a client on an
 * upstream's behalf): sealed with AES-GCM under a key derived per purpose from the
 * session secret, bound to the principal it was made for and to an expiry, so any isolate
 * can open it and no one else can read, forge, replay past its time or hand it to another
 * principal. Each purpose has its own key: a token made for one purpose never opens as another.
 */
import { base64UrlToBytes, bytesToBase64Url } from "./base64url";
import { derivedKey } from "./derived-keys";
import { fail, ok, type Result } from "./errors";

const IV_BYTES = 12;
const TOKEN_PREFIX = "s1.";
/** Largest sealed token accepted back from a client, in characters; longer ones are refused unread. */
export const MAX_SEALED_TOKEN_CHARS = 64 * 1024;

export type SealedEnvelope<T> = {
  /** Who the state was made for; opening it for anyone else fails. */
  readonly principal: string;
  /** Expiry, milliseconds since the epoch. */
  readonly exp: number;
  readonly value: T;
};

export type SealedProblem = { reason: "malformed" | "expired" | "other-principal" };

function keyFor(secret: string, purpose: string): Promise<CryptoKey> {
  return derivedKey(secret, `mcp-edge-gateway sealed state v1: ${purpose}`, { name: "AES-GCM", length: 256 }, [
    "encrypt",
    "decrypt",
  ]);
}

/**
 * Seals `value` for `principal` until `ttlMs` from now, under `purpose`'s key.
 *
 * @example
 * const token = await sealState(secret, "request-state", "alice", 600_000, { upstream: "alpha" });
 */
export async function sealState<T>(
  secret: string,
  purpose: string,
  principal: string,
  ttlMs: number,
  value: T,
  now = Date.now(),
): Promise<string> {
  const envelope: SealedEnvelope<T> = { principal, exp: now + ttlMs, value };
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plain = new TextEncoder().encode(JSON.stringify(envelope));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyFor(secret, purpose), plain),
  );
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return TOKEN_PREFIX + bytesToBase64Url(out);
}

/**
 * Opens a token from `sealState` with the same purpose, for `principal`. Altered, foreign,
 * over-long or other-purpose tokens are `malformed`; the caller narrows the value's shape.
 *
 * @example
 * const opened = await openState(secret, "request-state", "alice", token);
 * if (!opened.ok) throw new GatewayError(400, INVALID_PARAMS, "requestState was not issued to you, or has expired");
 */
export async function openState(
  secret: string,
  purpose: string,
  principal: string,
  token: unknown,
  now = Date.now(),
): Promise<Result<unknown, SealedProblem>> {
  if (typeof token !== "string" || !token.startsWith(TOKEN_PREFIX) || token.length > MAX_SEALED_TOKEN_CHARS)
    return fail({ reason: "malformed" });
  const bytes = base64UrlToBytes(token.slice(TOKEN_PREFIX.length));
  if (!bytes || bytes.length <= IV_BYTES) return fail({ reason: "malformed" });
  let envelope: SealedEnvelope<unknown>;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, IV_BYTES) },
      await keyFor(secret, purpose),
      bytes.slice(IV_BYTES),
    );
    envelope = JSON.parse(new TextDecoder().decode(plain)) as SealedEnvelope<unknown>;
  } catch {
    return fail({ reason: "malformed" });
  }
  if (
    typeof envelope !== "object" ||
    envelope === null ||
    typeof envelope.exp !== "number" ||
    typeof envelope.principal !== "string"
  )
    return fail({ reason: "malformed" });
  if (envelope.principal !== principal) return fail({ reason: "other-principal" });
  if (envelope.exp <= now) return fail({ reason: "expired" });
  return ok(envelope.value);
}
