/** Unguessable ids: 128 bits from `crypto.getRandomValues`, as 32 lowercase hex digits. */

/** A fresh random id (sessions, payloads). */
export function randomHexId(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
