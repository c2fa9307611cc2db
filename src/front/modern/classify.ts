/**
 * Which era a POST belongs to, as basic/versioning.mdx ("Backward Compatibility") says a
 * dual-era server decides: a request carrying the modern `_meta` protocol version (or a
 * modern `MCP-Protocol-Version` header) is served statelessly by this front; anything
 * else — `initialize`, a 2025 session's traffic, batches — stays on the legacy front.
 */
import { isObject } from "../../core/jsonrpc";
import type { CheckedBody } from "../http/request-checks";
import { MODERN_PROTOCOL_VERSIONS, PROTOCOL_VERSION_HEADER, PROTOCOL_VERSION_META_KEY } from "./protocol";

/** A modern message (its structure read by `checkNesting`), parsed once by the classifier. */
export type ModernBody = CheckedBody & { readonly body: unknown };

function isModernVersion(value: unknown): boolean {
  return typeof value === "string" && (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/**
 * The parsed body when the POST is modern, else undefined. A body that does not mention
 * the modern key is never parsed here (the legacy front parses it itself).
 *
 * @example
 * const modern = classifyPost(request.headers, checkNesting(await request.text()));
 * if (modern) return handleModernPost(where, modern);
 */
export function classifyPost(headers: Headers, checked: CheckedBody): ModernBody | undefined {
  const { text } = checked;
  const header = headers.get(PROTOCOL_VERSION_HEADER);
  const mentionsMeta = text.includes(PROTOCOL_VERSION_META_KEY);
  if (!isModernVersion(header) && !mentionsMeta) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Unparseable: modern only when the header says so (the legacy front answers the rest).
    return isModernVersion(header) ? { ...checked, body: undefined } : undefined;
  }
  if (Array.isArray(body) || !isObject(body)) return isModernVersion(header) ? { ...checked, body } : undefined;
  const params = body["params"];
  const meta = isObject(params) ? params["_meta"] : undefined;
  if (isObject(meta) && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY)) return { ...checked, body };
  return isModernVersion(header) ? { ...checked, body } : undefined;
}
