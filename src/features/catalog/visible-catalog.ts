/**
 * The catalog a caller sees: every page of tools/list asked through the whole pipeline
 * (visibility, personas, pins, icons, overrides apply as to the caller's own list), each
 * tool kept as its raw definition, and a digest of them all that names this version of
 * the catalog. A version this isolate has seen is not parsed again: its catalog, and the
 * search index kept beside it, are reused (catalog-cache.ts).
 */
import { GatewayError, ok } from "../../core/errors";
import { INVALID_PARAMS, type JsonRpcId } from "../../core/jsonrpc";
import { SYS_PREFIX, splitName } from "../../core/names";
import { elements, member, parseSpan } from "../../core/raw-json";
import { bytesToBase64Url } from "../../core/base64url";
import type { CallContext, Handler } from "../../context/call-context";
import { newCallRecord } from "../../context/call-record";
import { followPages, listRequest, type PageSource } from "../../upstream/list-pages";
import { cachedCatalog, keepCatalog, type Catalog, type CatalogTool } from "./catalog-cache";

export type { Catalog, CatalogTool } from "./catalog-cache";

/** Pages of tools/list a catalog follows at most (each upstream pages on its own). */
export const MAX_CATALOG_PAGES = 50;
/** Tools a catalog holds at most; the rest are not searched (the answer says so). */
export const MAX_CATALOG_TOOLS = 5_000;

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
  let truncated = false;
  const pages: PageSource = async (cursor) => {
    const wire = listRequest("tools/list", id, cursor);
    return ok((await pipeline({ ...ctx, record: newCallRecord(), emit: () => {} }, { kind: "request", wire }))!.text);
  };
  const walk = await followPages(
    route ?? "",
    "tools/list",
    pages,
    (text, result) => {
      const list = result.find((field) => field.key === "tools")?.value;
      if (!list || text.charCodeAt(list.start) !== 0x5b) return "unreadable";
      for (const item of elements(text, list)) {
        const nameSpan = text.charCodeAt(item.start) === 0x7b ? member(text, item, "name") : undefined;
        const name = nameSpan && parseSpan(text, nameSpan);
        if (typeof name !== "string" || name.startsWith(SYS_PREFIX)) continue;
        if (listed.length >= MAX_CATALOG_TOOLS) {
          truncated = true;
          return "stop";
        }
        listed.push({ name, raw: text.slice(item.start, item.end) });
      }
      return undefined;
    },
    { maxPages: MAX_CATALOG_PAGES },
  );
  if (!walk.ok)
    throw new GatewayError(
      200,
      INVALID_PARAMS,
      "The tool catalog could not be listed (tools/list gave no list); try again",
      undefined,
      id,
    );
  if (!walk.value.complete) truncated = true;
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
