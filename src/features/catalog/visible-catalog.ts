/**
 * The catalog a caller sees: every page of tools/list asked through the whole pipeline
 * (visibility, personas, pins, icons, overrides apply as to the caller's own list), each
 * tool kept as its raw definition, and a digest of them all that names this version of
 * the catalog. A version this isolate has seen is not parsed again: its catalog, and the
 * search index kept beside it, are reused (catalog-cache.ts).
 */
import { GatewayError } from "../../core/errors";
import { INVALID_PARAMS, type JsonRpcId, type JsonRpcRequest } from "../../core/jsonrpc";
import { SYS_PREFIX, splitName } from "../../core/names";
import { elements, member, members, parseSpan, pathSpan } from "../../core/raw-json";
import { bytesToBase64Url } from "../../core/base64url";
import type { CallContext, Handler } from "../../context/call-context";
import { newCallRecord } from "../../context/call-record";
import { cachedCatalog, keepCatalog, type Catalog, type CatalogTool } from "./catalog-cache";

export type { Catalog, CatalogTool } from "./catalog-cache";

/** Pages of tools/list a catalog follows at most (each upstream pages on its own). */
export const MAX_CATALOG_PAGES = 50;
/** Tools a catalog holds at most; the rest are not searched (the answer says so). */
export const MAX_CATALOG_TOOLS = 5_000;

function listRequest(id: JsonRpcId, cursor: string | undefined): JsonRpcRequest {
  return { jsonrpc: "2.0", id, method: "tools/list", ...(cursor !== undefined ? { params: { cursor } } : {}) };
}

/**
 * Every tool the caller of `ctx` may see on its route, except the gateway's own,
 * listed through `pipeline` (each page a message of its own, with a record of its own).
 *
 * @example
 * const catalog = await visibleCatalog(pipeline, ctx, request.id);
 */
export async function visibleCatalog(pipeline: Handler, ctx: CallContext, id: JsonRpcId): Promise<Catalog> {
  const listed: { name: string; raw: string }[] = [];
  const route = ctx.route.kind === "upstream" ? ctx.route.upstream.name : undefined;
  let cursor: string | undefined;
  let pages = 0;
  let truncated = false;
  do {
    const message = listRequest(id, cursor);
    const { text } = (await pipeline(
      { ...ctx, record: newCallRecord(), emit: () => {} },
      { kind: "request", wire: { text: JSON.stringify(message), message } },
    ))!;
    // One pass over the result finds both the list and the cursor (each path would walk the list again).
    const result = pathSpan(text, ["result"]);
    const fields = result && text.charCodeAt(result.start) === 0x7b ? members(text, result) : [];
    const list = fields.find((field) => field.key === "tools")?.value;
    if (!list || text.charCodeAt(list.start) !== 0x5b)
      throw new GatewayError(
        200,
        INVALID_PARAMS,
        "The tool catalog could not be listed (tools/list gave no list); try again",
        undefined,
        id,
      );
    for (const item of elements(text, list)) {
      const nameSpan = text.charCodeAt(item.start) === 0x7b ? member(text, item, "name") : undefined;
      const name = nameSpan && parseSpan(text, nameSpan);
      if (typeof name !== "string" || name.startsWith(SYS_PREFIX)) continue;
      if (listed.length >= MAX_CATALOG_TOOLS) {
        truncated = true;
        break;
      }
      listed.push({ name, raw: text.slice(item.start, item.end) });
    }
    const next = fields.find((field) => field.key === "nextCursor")?.value;
    const value = next ? parseSpan(text, next) : undefined;
    cursor = typeof value === "string" && !truncated ? value : undefined;
    pages++;
  } while (cursor !== undefined && pages < MAX_CATALOG_PAGES);
  if (cursor !== undefined) truncated = true;
  // The route and truncation are part of the version: on /mcp/<upstream> the same list belongs to another upstream.
  const version = [route ?? "", String(truncated), ...listed.map((tool) => tool.raw)].join("\n");
  const digest = bytesToBase64Url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(version))),
  );
  const kept = cachedCatalog(digest);
  if (kept) return kept;
  const tools = listed.map(
    ({ name, raw }): CatalogTool => ({
      name,
      upstream: route ?? splitName(name)?.upstream ?? "",
      definition: JSON.parse(raw) as Readonly<Record<string, unknown>>,
      raw,
    }),
  );
  const catalog: Catalog = { tools, digest, truncated };
  keepCatalog(catalog);
  return catalog;
}

/** The raw definitions of `names` in `catalog`, and the names it does not hold. */
export function definitionsOf(catalog: Catalog, names: readonly string[]): { found: CatalogTool[]; unknown: string[] } {
  const byName = new Map(catalog.tools.map((tool) => [tool.name, tool]));
  const found: CatalogTool[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const tool = byName.get(name);
    if (tool) found.push(tool);
    else unknown.push(name);
  }
  return { found, unknown };
}
