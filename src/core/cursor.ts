/**
 * Cursors of merged lists on the aggregated endpoint. A page merges one page of every
 * upstream that still has more; the cursor carries each such upstream's own cursor, so
 * the next page can be asked of any isolate.
 */
import { decodeJson, encodeJson } from "./base64url";
import { GatewayError } from "./errors";
import { INVALID_PARAMS } from "./jsonrpc";

/** Upstreams still to be read, with the cursor each one gave (null: from its start). */
export type MergedCursor = ReadonlyArray<readonly [upstream: string, cursor: string | null]>;

export function encodeCursor(pending: MergedCursor): string {
  return encodeJson(pending);
}

export function decodeCursor(cursor: unknown): MergedCursor {
  const invalid = new GatewayError(200, INVALID_PARAMS, "Invalid params: the cursor was not issued by this gateway; list again without a cursor");
  if (typeof cursor !== "string" || cursor === "") throw invalid;
  const value = decodeJson(cursor);
  const valid =
    Array.isArray(value) &&
    value.every((entry) => Array.isArray(entry) && entry.length === 2 && typeof entry[0] === "string" && (entry[1] === null || typeof entry[1] === "string"));
  if (!valid) throw invalid;
  return value as MergedCursor;
}
