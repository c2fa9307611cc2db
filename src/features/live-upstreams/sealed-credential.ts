/**
 * A live upstream's shared credential, stored in KV sealed: AES-GCM under a key derived
 * from SESSION_SECRET for this purpose only, with the upstream's name as additional data,
 * so a sealed value copied under another upstream's name does not open. The plain value
 * lives only in isolate memory, on the upstream's configuration, to be sent upstream.
 */
import { base64UrlToBytes, bytesToBase64Url } from "../../core/base64url";
import { derivedKey } from "../../core/derived-keys";

const PURPOSE = "mcp-edge-gateway live upstream credential v1";
const IV_BYTES = 12;
const SEALED_PREFIX = "c1.";

function keyFor(secret: string): Promise<CryptoKey> {
  return derivedKey(secret, PURPOSE, { name: "AES-GCM", length: 256 }, ["encrypt", "decrypt"]);
}

/** `value` sealed for the upstream `name`. */
export async function sealCredential(secret: string, name: string, value: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const params = { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(name) };
  const plain = new TextEncoder().encode(value);
  const sealed = new Uint8Array(await crypto.subtle.encrypt(params, await keyFor(secret), plain));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return SEALED_PREFIX + bytesToBase64Url(out);
}

/** The value `sealCredential` sealed for `name`; undefined when it does not open (another key or name, altered). */
export async function openCredential(secret: string, name: string, sealed: string): Promise<string | undefined> {
  if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
  const bytes = base64UrlToBytes(sealed.slice(SEALED_PREFIX.length));
  if (!bytes || bytes.length <= IV_BYTES) return undefined;
  try {
    const params = { name: "AES-GCM", iv: bytes.slice(0, IV_BYTES), additionalData: new TextEncoder().encode(name) };
    return new TextDecoder().decode(await crypto.subtle.decrypt(params, await keyFor(secret), bytes.slice(IV_BYTES)));
  } catch {
    return undefined;
  }
}
