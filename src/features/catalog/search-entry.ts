/**
 * Tool search as the module loaded on demand (search-module.mjs, built by
 * scripts/build-yaml-module.mjs): the ranking of search-index.ts with MiniSearch and the
 * stemmer, and the ranking by meaning of semantic-ranking.ts. Only a route in the `search`
 * or `code` catalog mode imports it (search.ts), so an isolate that never searches never
 * parses them.
 */
import type { EmbeddingsBinding } from "../../context/call-context";
import type { Catalog } from "./visible-catalog";
import { searchCatalog, type SearchAnswer, type SearchRequest } from "./search-index";
import { DEFAULT_EMBEDDINGS_MODEL, searchByMeaning, type RankedAnswer } from "./semantic-ranking";

export { catalogsEmbedded } from "./semantic-ranking";
export { indexesBuilt } from "./search-index";

/**
 * The tools that best serve the task: by words, and by meaning too when Workers AI is bound.
 *
 * @example
 * await search(catalog, { query: "close the bug", limit: 5 }, ctx.services.embeddings)
 */
export async function search(
  catalog: Catalog,
  request: SearchRequest,
  ai: EmbeddingsBinding | undefined,
): Promise<SearchAnswer | RankedAnswer> {
  return ai ? searchByMeaning(catalog, request, ai, DEFAULT_EMBEDDINGS_MODEL) : searchCatalog(catalog, request);
}
