/**
 * Catalog modes: how a caller sees the tools it may use. `full` lists every tool as its
 * upstream defines it (the default); `compact` lists them with short descriptions and
 * schemas without property descriptions; `search` lists only the gateway's own tools,
 * which find and call the others (src/catalog/); `code` lists the gateway's tools that
 * declare the others as TypeScript and run programs calling them in a sandbox
 * (src/features/code-mode/). The operator chooses per persona
 * (policy/persona.ts), the client per request with `?catalog=` on the endpoint URL.
 */
import { fail, ok, type Result } from "../core/errors";

export const CATALOG_MODES = ["full", "compact", "search", "code"] as const;
export type CatalogMode = (typeof CATALOG_MODES)[number];
/** The query parameter of /mcp and /mcp/<upstream> that chooses a mode. */
export const CATALOG_PARAM = "catalog";

/** True for the name of a catalog mode. */
export function isCatalogMode(value: unknown): value is CatalogMode {
  return typeof value === "string" && (CATALOG_MODES as readonly string[]).includes(value);
}

/**
 * The mode a request URL asks for: undefined when it names none, a tagged failure when
 * it names something else (or names it twice).
 *
 * @example
 * requestedCatalog("https://gw.example/mcp?catalog=search") // { ok: true, value: "search" }
 */
export function requestedCatalog(url: string): Result<CatalogMode | undefined, { reason: "bad-catalog"; message: string }> {
  // Nearly every request URL has no query: no URL to parse then.
  const values = url.includes("?") ? new URL(url).searchParams.getAll(CATALOG_PARAM) : [];
  if (values.length === 0) return ok(undefined);
  const [value] = values;
  if (values.length > 1 || !isCatalogMode(value)) {
    return fail({ reason: "bad-catalog", message: `Bad request: ?${CATALOG_PARAM}= takes one of ${CATALOG_MODES.join(", ")} (see docs/tool-search.md)` });
  }
  return ok(value);
}
