/**
 * Where a 2025 session's record of the filter shapes it listed tools under lives: KV
 * `tools-listed/<session id>`, until the session expires (features/filters/listed-shapes.ts says
 * what the record means). The only module that knows that key.
 */

const LISTED_KEY_PREFIX = "tools-listed/";

/** The stored record of session `sessionId`; null when it never listed under other shapes. */
export function readListedShapes(kv: KVNamespace, sessionId: string): Promise<string | null> {
  return kv.get(LISTED_KEY_PREFIX + sessionId);
}

/** Stores session `sessionId`'s record for `ttlS` seconds. */
export async function writeListedShapes(kv: KVNamespace, sessionId: string, text: string, ttlS: number): Promise<void> {
  await kv.put(LISTED_KEY_PREFIX + sessionId, text, { expirationTtl: ttlS });
}
