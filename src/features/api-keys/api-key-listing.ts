/**
 * The admin listing of API keys, a page at a time, from KV list metadata: one KV list per
 * page and no read per key (reading every record ran into the Worker's subrequest limit
 * near 1,000 keys). Keys written before their listing was kept as metadata, and keys whose
 * listing does not fit KV's 1024-byte metadata limit (many long roles), are read one by
 * one, at most MAX_RECORD_READS_PER_PAGE per page: a page stops early at that bound and
 * its cursor resumes after the last key it listed.
 */
import { decodeJson, encodeJson } from "../../core/base64url";
import { fail, ok, type Result } from "../../core/errors";
import { isObject } from "../../core/jsonrpc";
import { listApiKeyRecords, readApiKeyRecordAt } from "./api-key-records";
import { recordFrom, type ApiKeyListing, type ApiKeyRecord } from "./api-keys";

/** Keys a page lists at most (KV's own bound for one list). */
export const MAX_PAGE_KEYS = 1000;
/** Records a page reads one by one at most (keys without a usable listing in their metadata). */
export const MAX_RECORD_READS_PER_PAGE = 100;

/** One page of the listing; `cursor` is there when more keys follow. */
export type ApiKeyPage = { readonly apiKeys: readonly ApiKeyListing[]; readonly cursor?: string };

/** Where a page starts: KV's cursor and page size, and the last key listed from that KV page. */
type Position = { readonly kv?: string; readonly size?: number; readonly after?: string };

function positionFrom(cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return {};
  const value = decodeJson(cursor);
  if (!isObject(value)) return undefined;
  const { kv, size, after } = value;
  if (kv !== undefined && typeof kv !== "string") return undefined;
  if (size !== undefined && (typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > MAX_PAGE_KEYS))
    return undefined;
  if (after !== undefined && typeof after !== "string") return undefined;
  return {
    ...(kv !== undefined ? { kv } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(after !== undefined ? { after } : {}),
  };
}

/** The listing a key's metadata holds, when it holds a usable one. */
function listingIn(metadata: unknown, id: string): ApiKeyListing | undefined {
  if (!isObject(metadata) || metadata["v"] !== 1 || !isObject(metadata["listing"])) return undefined;
  const listing = metadata["listing"];
  if (
    typeof listing["principal"] !== "string" ||
    !Array.isArray(listing["roles"]) ||
    typeof listing["createdAt"] !== "string"
  )
    return undefined;
  const { hash: _never, ...shown } = listing;
  return { ...(shown as Omit<ApiKeyListing, "id">), id };
}

/** A record's listing: everything but the hash (undefined for a key deleted meanwhile, or not a record). */
function shown(record: ApiKeyRecord | undefined): ApiKeyListing | undefined {
  if (!record) return undefined;
  const { hash: _hash, ...listing } = record;
  return listing;
}

/**
 * One page of stored keys (never a key or a hash), `limit` at most, from `cursor` (a
 * previous page's). A cursor this module did not write is a `bad-cursor`.
 *
 * @example
 * const page = await listApiKeyPage(kv, { limit: 100 });
 * if (page.ok && page.value.cursor) await listApiKeyPage(kv, { limit: 100, cursor: page.value.cursor });
 */
export async function listApiKeyPage(
  kv: KVNamespace,
  { limit = MAX_PAGE_KEYS, cursor }: { limit?: number; cursor?: string },
): Promise<Result<ApiKeyPage, { reason: "bad-cursor" }>> {
  const at = positionFrom(cursor);
  if (!at) return fail({ reason: "bad-cursor" });
  // A page resumed mid-way lists the same KV page again (same cursor and size) and skips what it listed.
  const size = at.size ?? Math.min(Math.max(1, Math.floor(limit)), MAX_PAGE_KEYS);
  const page = await listApiKeyRecords(kv, size, at.kv);
  const taken: { readonly name: string; readonly listing?: ApiKeyListing }[] = [];
  let reads = 0;
  let full = false;
  for (const entry of page.records) {
    if (at.after !== undefined && entry.position <= at.after) continue;
    const listing = listingIn(entry.metadata, entry.id);
    if (!listing && reads++ === MAX_RECORD_READS_PER_PAGE) {
      full = true;
      break;
    }
    taken.push({ name: entry.position, ...(listing ? { listing } : {}) });
  }
  const listed = await Promise.all(
    taken.map(async ({ name, listing }) => listing ?? shown(recordFrom(await readApiKeyRecordAt(kv, name)))),
  );
  const apiKeys = listed.filter((listing): listing is ApiKeyListing => listing !== undefined);
  if (full) {
    const after = taken.at(-1)?.name ?? at.after;
    return ok({
      apiKeys,
      cursor: encodeJson({
        ...(at.kv !== undefined ? { kv: at.kv } : {}),
        size,
        ...(after !== undefined ? { after } : {}),
      }),
    });
  }
  return ok(page.complete ? { apiKeys } : { apiKeys, cursor: encodeJson({ kv: page.cursor }) });
}
