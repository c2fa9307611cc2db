/**
 * Ids of server-to-client requests (sampling, elicitation, roots) on the aggregated
 * endpoint. The client answers with a separate POST that may reach another isolate, so
 * the id itself says which upstream asked and what id that upstream used.
 */
import { decodeJson, encodeJson } from "../core/base64url";
import type { JsonRpcId } from "../core/jsonrpc";

const ID_PREFIX = "gw.";

/** The id the client sees for request `id` from `upstream`. */
export function encodeServerRequestId(upstream: string, id: JsonRpcId): string {
  return ID_PREFIX + encodeJson([upstream, id]);
}

/** The upstream and original id behind an id from `encodeServerRequestId`, or undefined. */
export function decodeServerRequestId(id: JsonRpcId): { upstream: string; id: JsonRpcId } | undefined {
  if (typeof id !== "string" || !id.startsWith(ID_PREFIX)) return undefined;
  const value = decodeJson(id.slice(ID_PREFIX.length));
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== "string") return undefined;
  const original: unknown = value[1];
  if (typeof original !== "string" && typeof original !== "number") return undefined;
  return { upstream: value[0], id: original };
}
