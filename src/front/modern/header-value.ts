/**
 * Header values that mirror the body (`Mcp-Name`, `Mcp-Param-*`): plain visible ASCII,
 * or the Base64 sentinel form `=?base64?<base64 of the UTF-8 bytes>?=`
 * (basic/transports/streamable-http, "Value Encoding").
 */

const BASE64_PREFIX = "=?base64?";
const BASE64_SUFFIX = "?=";
const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;

/** A decoded header value, or the reason it cannot be read. */
export type HeaderValue =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly reason: "malformed" };

/**
 * Decodes a mirrored header value.
 *
 * @example
 * decodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="); // { ok: true, value: "Hello, 世界" }
 */
export function decodeHeaderValue(raw: string): HeaderValue {
  if (!raw.startsWith(BASE64_PREFIX)) return { ok: true, value: raw };
  if (!raw.endsWith(BASE64_SUFFIX) || raw.length < BASE64_PREFIX.length + BASE64_SUFFIX.length)
    return { ok: false, reason: "malformed" };
  const encoded = raw.slice(BASE64_PREFIX.length, raw.length - BASE64_SUFFIX.length);
  if (!BASE64_BODY.test(encoded) || encoded.length % 4 !== 0) return { ok: false, reason: "malformed" };
  try {
    const binary = atob(encoded);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return { ok: true, value: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes) };
  } catch {
    return { ok: false, reason: "malformed" };
  }
}
