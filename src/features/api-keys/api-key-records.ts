/**
 * Where API key records live: KV `api-keys/<id>`, each with its listing as KV metadata
 * (api-keys.ts says what a record holds, api-key-listing.ts how pages are built).
 * The only module that knows that layout.
 */

const API_KEY_PREFIX = "api-keys/";

/** One stored key as a KV list names it: its id, where it sorts (opaque), its metadata. */
export type ListedApiKeyRecord = { readonly id: string; readonly position: string; readonly metadata: unknown };

/** A page of stored keys; `cursor` is KV's, present when more follow. */
export type ApiKeyRecordPage = {
  readonly records: readonly ListedApiKeyRecord[];
  readonly complete: boolean;
  readonly cursor?: string;
};

/** The stored text of key `id`'s record; null when there is none. */
export function readApiKeyRecord(kv: KVNamespace, id: string): Promise<string | null> {
  return kv.get(API_KEY_PREFIX + id);
}

/** The stored text of the record listed at `position` (a `ListedApiKeyRecord`'s). */
export function readApiKeyRecordAt(kv: KVNamespace, position: string): Promise<string | null> {
  return kv.get(position);
}

/** Stores key `id`'s record with its listing metadata. */
export async function writeApiKeyRecord(kv: KVNamespace, id: string, text: string, metadata: unknown): Promise<void> {
  await kv.put(API_KEY_PREFIX + id, text, { metadata });
}

/** Deletes key `id`'s record. */
export async function deleteApiKeyRecord(kv: KVNamespace, id: string): Promise<void> {
  await kv.delete(API_KEY_PREFIX + id);
}

/** One KV list of stored keys, `limit` at most, from KV's `cursor`. */
export async function listApiKeyRecords(
  kv: KVNamespace,
  limit: number,
  cursor: string | undefined,
): Promise<ApiKeyRecordPage> {
  const page: KVNamespaceListResult<unknown, string> = await kv.list({
    prefix: API_KEY_PREFIX,
    limit,
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const records = page.keys.map((entry) => ({
    id: entry.name.slice(API_KEY_PREFIX.length),
    position: entry.name,
    metadata: entry.metadata,
  }));
  return page.list_complete ? { records, complete: true } : { records, complete: false, cursor: page.cursor };
}
