/**
 * The catalogs an isolate keeps, by version (the digest of the caller's listed tools):
 * a search of a catalog version already seen reuses its parsed definitions and its index
 * (search-index.ts keeps each index beside its catalog) instead of building them again.
 * Isolate memory only caches here: a version not kept is parsed and indexed anew from
 * the list, so any isolate answers the same.
 */

/** One tool as the caller's list gives it. */
export type CatalogTool = {
  /** The name the caller calls it by. */
  readonly name: string;
  /** The upstream serving it (the route's own on /mcp/<upstream>). */
  readonly upstream: string;
  /** Its definition, parsed (for the index). */
  readonly definition: Readonly<Record<string, unknown>>;
  /** Its definition as listed, byte for byte. */
  readonly raw: string;
};

export type Catalog = {
  readonly tools: readonly CatalogTool[];
  /** SHA-256 (base64url) of every raw definition: the catalog's version. */
  readonly digest: string;
  /** True when the catalog stopped at MAX_CATALOG_TOOLS or MAX_CATALOG_PAGES. */
  readonly truncated: boolean;
};

/** Catalog versions an isolate keeps (the least recently used goes first). */
const MAX_CACHED_CATALOGS = 8;
/**
 * Tools the kept catalogs hold together at most: a catalog takes about 4.5 MB per 1,000
 * real tools (1.9 MB of raw and parsed definitions, 2.6 MB of index; measured in Node
 * with bench/catalog's servers), so this keeps them near 27 MB of the isolate's 128 MB.
 * The catalog in use is always kept.
 */
const MAX_CACHED_TOOLS = 6_000;

const catalogs = new Map<string, Catalog>();
let cachedTools = 0;
let parsed = 0;

/** The kept catalog of version `digest`, now the most recently used; undefined when not kept. */
export function cachedCatalog(digest: string): Catalog | undefined {
  const catalog = catalogs.get(digest);
  if (!catalog) return undefined;
  catalogs.delete(digest);
  catalogs.set(digest, catalog);
  return catalog;
}

/** Keeps a newly parsed catalog, evicting the least recently used beyond the bounds. */
export function keepCatalog(catalog: Catalog): void {
  parsed++;
  if (catalogs.has(catalog.digest)) return;
  cachedTools += catalog.tools.length;
  for (const [digest, old] of catalogs) {
    if (catalogs.size < MAX_CACHED_CATALOGS && cachedTools <= MAX_CACHED_TOOLS) break;
    catalogs.delete(digest);
    cachedTools -= old.tools.length;
  }
  catalogs.set(catalog.digest, catalog);
}

/** How many catalogs this isolate has parsed (a kept version is not parsed again): for tests. */
export function catalogsParsed(): number {
  return parsed;
}
