/**
 * Cursors of merged lists on the aggregated endpoint. A page merges one page of every
 * upstream that still has more; the cursor carries each such upstream's own cursor, so
 * the next page can be asked of any isolate.
 *
 * A cursor is authenticated (HMAC-SHA-256, key derived from SESSION_SECRET) and bound to
 * its session and list method: a client cannot forge one that names an upstream 2,000
 * times (2,000 upstream requests for one page), nor replay one in another session.
 */
import { base64UrlToBytes, bytesToBase64Url, decodeJson, encodeJson } from "../core/base64url";
import { derivedKey } from "../core/derived-keys";
import { GatewayError } from "../core/errors";
import { INVALID_PARAMS } from "../core/jsonrpc";

const HMAC_PURPOSE = "mcp-edge-gateway list cursor v1";
const SEPARATOR = ".";

/** Upstreams still to be read, with the cursor each one gave (null: from its start). */
export type MergedCursor = ReadonlyArray<readonly [upstream: string, cursor: string | null]>;

/** What a cursor is bound to: the key's secret, the session and the list it pages. */
export type CursorBinding = { readonly secret: string; readonly sid: string; readonly method: string };

function cursorKey(secret: string): Promise<CryptoKey> {
  return derivedKey(secret, HMAC_PURPOSE, { name: "HMAC", hash: "SHA-256", length: 256 }, ["sign", "verify"]);
}

function signedText(binding: CursorBinding, payload: string): Uint8Array {
  return new TextEncoder().encode(`${binding.sid}\n${binding.method}\n${payload}`);
}

/** The opaque `nextCursor` for `pending`. */
export async function encodeCursor(pending: MergedCursor, binding: CursorBinding): Promise<string> {
  const payload = encodeJson(pending);
  const mac = await crypto.subtle.sign("HMAC", await cursorKey(binding.secret), signedText(binding, payload));
  return `${payload}${SEPARATOR}${bytesToBase64Url(new Uint8Array(mac))}`;
}

/** The pending upstreams of a cursor this gateway issued for this session and list; -32602 otherwise. */
export async function decodeCursor(cursor: unknown, binding: CursorBinding): Promise<MergedCursor> {
  const invalid = new GatewayError(
    200,
    INVALID_PARAMS,
    "Invalid params: the cursor was not issued by this gateway for this list; list again without a cursor",
  );
  if (typeof cursor !== "string") throw invalid;
  const at = cursor.indexOf(SEPARATOR);
  const mac = at > 0 ? base64UrlToBytes(cursor.slice(at + 1)) : undefined;
  if (!mac) throw invalid;
  const payload = cursor.slice(0, at);
  if (!(await crypto.subtle.verify("HMAC", await cursorKey(binding.secret), mac, signedText(binding, payload))))
    throw invalid;
  const value = decodeJson(payload);
  const valid =
    Array.isArray(value) &&
    value.every(
      (entry) =>
        Array.isArray(entry) &&
        entry.length === 2 &&
        typeof entry[0] === "string" &&
        (entry[1] === null || typeof entry[1] === "string"),
    );
  if (!valid) throw invalid;
  return value as MergedCursor;
}
