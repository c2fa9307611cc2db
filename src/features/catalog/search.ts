/**
 * Tool search (search-entry.ts), loaded from the module of its own that the Worker uploads
 * beside the main module (storage/search-library.ts says why it is loaded there): MiniSearch,
 * the stemmer and the ranking are 19 KiB that only the `search` and `code` modes use.
 */
import { loadSearchModule } from "../../storage/search-library";

/** The module's exports: search-entry.ts bundled. */
export type SearchEngine = typeof import("./search-entry");

/** The search, loaded on first use in this isolate. */
export async function loadSearch(): Promise<SearchEngine> {
  return (await loadSearchModule()) as SearchEngine;
}
