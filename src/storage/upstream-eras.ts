/**
 * Where the gateway remembers which protocol eras an upstream speaks: KV
 * `upstream-era/<upstream>/<digest of its service binding and URL>`, so a changed URL is
 * probed afresh. The record is the verdict's JSON text (upstream/era.ts says what it means
 * and checks it when read). The only module that knows that key.
 */
import { bytesToBase64Url } from "../core/base64url";

const ERA_KEY_PREFIX = "upstream-era/";
/** How many bytes of the URL's SHA-256 name it in the key. */
const URL_DIGEST_BYTES = 12;

/** What names an upstream's era record: its name, and where it is reached. */
export type EraRecordOf = { readonly name: string; readonly url: string; readonly service?: string };

async function eraKey(upstream: EraRecordOf): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${upstream.service ?? ""} ${upstream.url}`)),
  );
  return `${ERA_KEY_PREFIX}${upstream.name}/${bytesToBase64Url(digest.slice(0, URL_DIGEST_BYTES))}`;
}

/** The stored era record of `upstream`; null when none is kept. */
export async function readEraRecord(kv: KVNamespace, upstream: EraRecordOf): Promise<string | null> {
  return kv.get(await eraKey(upstream));
}

/** Stores `upstream`'s era record for `ttlS` seconds. */
export async function writeEraRecord(
  kv: KVNamespace,
  upstream: EraRecordOf,
  text: string,
  ttlS: number,
): Promise<void> {
  await kv.put(await eraKey(upstream), text, { expirationTtl: ttlS });
}

/** Forgets `upstream`'s era record. */
export async function deleteEraRecord(kv: KVNamespace, upstream: EraRecordOf): Promise<void> {
  await kv.delete(await eraKey(upstream));
}
