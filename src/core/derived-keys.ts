/**
 * Keys derived from a Worker secret with HKDF-SHA-256, one per purpose (its `info`
 * label), so the session key and the payload-URL key never coincide. Cached per
 * isolate: derivation is the slow part.
 */

const keys = new Map<string, Promise<CryptoKey>>();

/** The key for `purpose` derived from `secret`. */
export function derivedKey(
  secret: string,
  purpose: string,
  algorithm: SubtleCryptoDeriveKeyAlgorithm | { name: string; hash?: string; length?: number },
  usages: string[],
): Promise<CryptoKey> {
  const cacheKey = `${purpose}\u0000${secret}`;
  let key = keys.get(cacheKey);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, [
        "deriveKey",
      ]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode(purpose) },
        material,
        algorithm,
        false,
        usages,
      );
    })();
    keys.set(cacheKey, key);
  }
  return key;
}
