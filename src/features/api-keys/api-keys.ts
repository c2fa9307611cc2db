/**
 * API keys: minted by the admin API, shown once, stored in KV only as a SHA-256 hash
 * beside who they name (principal, email, roles) and when they expire. A key carries its
 * record's id (`mgw_<id>_<secret>`), so checking one is one KV read (cached per isolate
 * for the document TTL) and a constant-time comparison of hashes. A cached record also
 * keeps the one key whose hash matched it, so the same key presented again is compared
 * with that key in constant time, with no hash per call (a cached record is dropped on
 * revocation and re-read after the TTL, and its key with it).
 *
 * Each record's listing (never the hash) is also its KV metadata, so the admin listing
 * reads one KV list per page (api-key-listing.ts).
 *
 * Revocation deletes the record: the isolate that served the delete forgets it at once,
 * every other within the cache TTL. Only records that exist are cached (bounded), so
 * made-up ids cost a KV read each and never fill the isolate's memory.
 */
import { bytesToBase64Url } from "../../core/base64url";
import { fail, ok, type Result } from "../../core/errors";
import { randomHexId } from "../../core/ids";
import { isObject } from "../../core/jsonrpc";
import type { ApiKeyVerifier } from "../../auth/authenticate";
import { deleteApiKeyRecord, readApiKeyRecord, writeApiKeyRecord } from "./api-key-records";

const KEY_PREFIX = "mgw_";
const SECRET_BYTES = 32;
const KEY_PATTERN = /^mgw_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;
/** Records kept per isolate. */
const MAX_CACHED_KEYS = 1_000;
const MAX_PRINCIPAL_LENGTH = 256;
const MAX_ROLES = 64;

const encoder = new TextEncoder();

/** What a key stands for, as stored (never the key itself). */
export type ApiKeyRecord = {
  readonly id: string;
  readonly principal: string;
  readonly email?: string;
  readonly roles: readonly string[];
  readonly createdAt: string;
  readonly expiresAt?: string;
  /** SHA-256 of the whole key, base64url. */
  readonly hash: string;
};

/** What a key's listing shows: its record without the hash. */
export type ApiKeyListing = Omit<ApiKeyRecord, "hash">;

/**
 * What a key's KV metadata holds, so that listing keys is one KV list per page and no read
 * per key: the listing itself, or (when that would pass KV's metadata limit) a marker that
 * the listing must read the record. Never the key or its hash.
 */
export type ApiKeyMetadata =
  | { readonly v: 1; readonly listing: ApiKeyListing }
  | { readonly v: 1; readonly partial: true };

/** KV keeps at most 1024 bytes of metadata per key (serialised as JSON). */
export const MAX_METADATA_BYTES = 1024;

/** The metadata stored with `record`: its listing when it fits under MAX_METADATA_BYTES. */
export function metadataOf(record: ApiKeyRecord): ApiKeyMetadata {
  const { hash: _hash, ...listing } = record;
  const full: ApiKeyMetadata = { v: 1, listing };
  return encoder.encode(JSON.stringify(full)).byteLength <= MAX_METADATA_BYTES ? full : { v: 1, partial: true };
}

export type NewApiKey = {
  readonly principal: string;
  readonly email?: string;
  readonly roles: readonly string[];
  readonly expiresAt?: string;
};

export type ApiKeyProblem = { reason: "malformed" | "unknown" | "expired" };

/** A cached record, and the bytes of the key whose hash matched it (once one did). */
type CacheEntry = { readonly at: number; readonly record: ApiKeyRecord; verified?: Uint8Array };
const cache = new Map<string, CacheEntry>();

/** True when a bearer token has the shape of a gateway API key (so it is not tried as a JWT). */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(KEY_PREFIX);
}

async function sha256(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/** True when `a` and `b` hold the same bytes, compared in constant time for a given length. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}

/** Checks what the admin API was sent for a new key; problems name the field. */
export function checkNewApiKey(
  value: unknown,
  now = Date.now(),
): Result<NewApiKey, { reason: "invalid"; problems: readonly string[] }> {
  const problems: string[] = [];
  if (!isObject(value)) return fail({ reason: "invalid", problems: ["the body: an object with principal and roles"] });
  const { principal, email, roles, expiresAt } = value;
  if (typeof principal !== "string" || principal === "" || principal.length > MAX_PRINCIPAL_LENGTH)
    problems.push(`principal: a string of 1-${MAX_PRINCIPAL_LENGTH} characters`);
  if (email !== undefined && typeof email !== "string") problems.push("email: a string");
  if (
    !Array.isArray(roles) ||
    roles.length > MAX_ROLES ||
    !roles.every((role) => typeof role === "string" && role !== "")
  )
    problems.push(`roles: a list of up to ${MAX_ROLES} non-empty strings`);
  if (
    expiresAt !== undefined &&
    (typeof expiresAt !== "string" || Number.isNaN(Date.parse(expiresAt)) || Date.parse(expiresAt) <= now)
  )
    problems.push("expiresAt: a date in the future (ISO 8601)");
  for (const key of Object.keys(value))
    if (!["principal", "email", "roles", "expiresAt"].includes(key)) problems.push(`${key}: not a field of an API key`);
  if (problems.length > 0) return fail({ reason: "invalid", problems });
  return ok({
    principal: principal as string,
    ...(typeof email === "string" ? { email } : {}),
    roles: roles as string[],
    ...(typeof expiresAt === "string" ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
  });
}

/** The record in a key's stored text; undefined when there is none or it is not a record. */
export function recordFrom(text: string | null): ApiKeyRecord | undefined {
  if (text === null) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (
      !isObject(value) ||
      typeof value["id"] !== "string" ||
      typeof value["principal"] !== "string" ||
      typeof value["hash"] !== "string" ||
      !Array.isArray(value["roles"])
    )
      return undefined;
    return value as ApiKeyRecord;
  } catch {
    return undefined;
  }
}

/**
 * Mints a key and stores its record; the key is returned once and never stored.
 *
 * @example
 * const { id, key } = await createApiKey(kv, { principal: "alice", roles: ["analyst"] });
 */
export async function createApiKey(
  kv: KVNamespace,
  fields: NewApiKey,
  now = Date.now(),
): Promise<{ id: string; key: string; record: ApiKeyRecord }> {
  const id = randomHexId();
  const key = `${KEY_PREFIX}${id}_${bytesToBase64Url(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)))}`;
  const record: ApiKeyRecord = {
    id,
    ...fields,
    createdAt: new Date(now).toISOString(),
    hash: bytesToBase64Url(new Uint8Array(await sha256(key))),
  };
  await writeApiKeyRecord(kv, id, JSON.stringify(record), metadataOf(record));
  return { id, key, record };
}

/**
 * Keys this isolate revoked, and when: a lookup that began before the record's deletion
 * reached KV read the record still there, and would otherwise cache it again for a TTL.
 * Kept for a TTL past the revocation (bounded like the cache).
 */
const revoked = new Map<string, number>();
/** How long a revocation is remembered: longer than any lookup that could have begun before it. */
const REVOKED_REMEMBERED_MS = 5 * 60_000;

/** Revokes a key: gone from KV, and from this isolate's cache at once. False when there was none. */
export async function revokeApiKey(kv: KVNamespace, id: string, now = Date.now()): Promise<boolean> {
  cache.delete(id);
  if (!/^[0-9a-f]{32}$/.test(id) || (await readApiKeyRecord(kv, id)) === null) return false;
  if (revoked.size >= MAX_CACHED_KEYS)
    for (const [key, at] of revoked) if (now - at >= REVOKED_REMEMBERED_MS) revoked.delete(key);
  if (revoked.size >= MAX_CACHED_KEYS) revoked.delete(revoked.keys().next().value!);
  revoked.set(id, now);
  await deleteApiKeyRecord(kv, id);
  return true;
}

async function lookup(kv: KVNamespace, id: string, ttlMs: number, now: number): Promise<CacheEntry | undefined> {
  const gone = revoked.get(id);
  if (gone !== undefined && now - gone < REVOKED_REMEMBERED_MS) return undefined;
  const entry = cache.get(id);
  if (entry && now - entry.at < ttlMs) return entry;
  const record = recordFrom(await readApiKeyRecord(kv, id));
  // Revoked while the record was read: not cached again.
  if (!record || revoked.has(id)) {
    cache.delete(id);
    return undefined;
  }
  if (cache.size >= MAX_CACHED_KEYS) cache.clear();
  const fresh: CacheEntry = { at: now, record };
  cache.set(id, fresh);
  return fresh;
}

/** True when `key` is the key of `entry`'s record: the key that matched before, or a key whose hash matches (then remembered). */
async function matches(entry: CacheEntry | undefined, key: string): Promise<boolean> {
  const presented = encoder.encode(key);
  if (entry?.verified && sameBytes(entry.verified, presented)) return true;
  const given = encoder.encode(bytesToBase64Url(new Uint8Array(await sha256(key))));
  if (!entry || !sameBytes(encoder.encode(entry.record.hash), given)) return false;
  entry.verified = presented;
  return true;
}

/**
 * The record a presented key stands for, or why it stands for none. The hash of the
 * whole key is compared in constant time with the stored one (or the key with the one
 * that matched the cached record before).
 */
export async function verifyApiKey(
  kv: KVNamespace,
  key: string,
  ttlMs: number,
  now = Date.now(),
): Promise<Result<ApiKeyRecord, ApiKeyProblem>> {
  const match = KEY_PATTERN.exec(key);
  if (!match) return fail({ reason: "malformed" });
  const entry = await lookup(kv, match[1]!, ttlMs, now);
  // An unknown id costs a hash too, as a known id with a wrong secret does.
  if (!(await matches(entry, key)) || !entry) return fail({ reason: "unknown" });
  const { record } = entry;
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now) return fail({ reason: "expired" });
  return ok(record);
}

/** The gateway's API keys as the shell checks them (`ShellParts.apiKeys`, auth/authenticate.ts). */
export const API_KEYS: ApiKeyVerifier = {
  claims: looksLikeApiKey,
  verify: (kv, token, ttlMs) => verifyApiKey(kv, token, ttlMs),
};
