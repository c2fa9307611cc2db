/**
 * Signed, expiring tokens for `GET /payloads/<id>?token=...`: the way to hand a payload
 * to something that does not speak MCP (a browser, curl, a notebook). The token is an
 * HMAC-SHA-256 of the id and the expiry, keyed from the session secret (HKDF with its
 * own label, so it is not the session key).
 */

import { base64UrlToBytes, bytesToBase64Url } from "../core/base64url";
import { derivedKey } from "../core/derived-keys";

const HKDF_INFO = "mcp-edge-gateway payload url v1";
export const SIGNED_URL_TTL_S = 60 * 60;

function signingKey(secret: string): Promise<CryptoKey> {
  return derivedKey(secret, HKDF_INFO, { name: "HMAC", hash: "SHA-256", length: 256 }, ["sign", "verify"]);
}

/** A token granting read access to payload `id` until `expiresAt` (seconds since the epoch). */
export async function signPayloadToken(id: string, expiresAt: number, secret: string): Promise<string> {
  const signature = await crypto.subtle.sign(
    "HMAC",
    await signingKey(secret),
    new TextEncoder().encode(`${id}.${expiresAt}`),
  );
  return `${expiresAt}.${bytesToBase64Url(new Uint8Array(signature))}`;
}

/** True when `token` was signed for `id` and has not expired. */
export async function verifyPayloadToken(
  id: string,
  token: string,
  secret: string,
  now = Date.now(),
): Promise<boolean> {
  const [expiry, signature] = token.split(".");
  const expiresAt = Number(expiry);
  const bytes = signature ? base64UrlToBytes(signature) : undefined;
  if (!bytes || !Number.isInteger(expiresAt) || expiresAt * 1000 <= now) return false;
  return crypto.subtle.verify("HMAC", await signingKey(secret), bytes, new TextEncoder().encode(`${id}.${expiresAt}`));
}
