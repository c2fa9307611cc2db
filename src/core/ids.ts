/**
 * Unguessable ids: random bytes from `crypto.getRandomValues`, as lowercase hex digits.
 * Every call needs a few (the audit event's id, the gateway's trace span), and one
 * `getRandomValues` per id plus a spread, a map and a join cost more than the rest of
 * making them: the bytes are drawn a pool at a time (as Node's `randomUUID` caches its
 * entropy), each byte used once and zeroed once used, and turned into hex by table.
 */

/** Random bytes drawn at once; a refill happens every few hundred ids. */
const POOL_BYTES = 4 * 1024;
/** The most bytes one id may take from the pool. */
const MAX_ID_BYTES = 64;

const HEX_OF_BYTE: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Filled on first use: Workers refuse random values at global scope. */
let pool: Uint8Array | undefined;
let used = POOL_BYTES;

/** `bytes` fresh random bytes (at most MAX_ID_BYTES) as 2 × `bytes` lowercase hex digits. */
export function randomHex(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_ID_BYTES)
    throw new RangeError(`randomHex: ${bytes} bytes (1 to ${MAX_ID_BYTES})`);
  if (!pool || used + bytes > POOL_BYTES) {
    pool = crypto.getRandomValues(pool ?? new Uint8Array(POOL_BYTES));
    used = 0;
  }
  let out = "";
  for (let at = used; at < used + bytes; at++) out += HEX_OF_BYTE[pool[at]!];
  pool.fill(0, used, used + bytes);
  used += bytes;
  return out;
}

/** A fresh random id (sessions, payloads): 128 bits as 32 hex digits. */
export function randomHexId(): string {
  return randomHex(16);
}
