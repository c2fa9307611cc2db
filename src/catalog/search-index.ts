/**
 * Ranking tools for a task: a MiniSearch (BM25+) index over what a model searches by —
 * the name split into words, the title, the description, parameter names and their
 * descriptions, the upstream — with field weights, stems and the synonyms of
 * vocabulary.ts. One index per catalog version, built in this isolate when first searched
 * and kept beside the catalog (catalog-cache.ts) for the next searches of the same
 * version; a changed list is another version, so it gets a new index.
 */
import MiniSearch from "minisearch";
import { isObject } from "../core/jsonrpc";
import { splitName } from "../core/names";
import type { Catalog, CatalogTool } from "./visible-catalog";
import { joinPhrases, queryTermsOf, splitWords, termOf } from "./vocabulary";

/** Field weights: a word of the name says most about what a tool does. */
const FIELD_BOOST = { name: 3, title: 2, description: 1, parameters: 0.5, upstream: 1.5 } as const;
/** Longest text of a field that is indexed (characters); descriptions can be long. */
const MAX_FIELD_CHARS = 4_000;

type IndexedTool = { id: number; name: string; title: string; description: string; parameters: string; upstream: string };

/** The name a tool has on its upstream (without `<upstream>___` on /mcp). */
function ownName(tool: CatalogTool): string {
  return splitName(tool.name)?.name ?? tool.name;
}

function text(value: unknown): string {
  return typeof value === "string" ? value.slice(0, MAX_FIELD_CHARS) : "";
}

/** Parameter names and their descriptions, one level deep. */
function parametersOf(definition: Readonly<Record<string, unknown>>): string {
  const schema = definition["inputSchema"];
  const properties = isObject(schema) && isObject(schema["properties"]) ? schema["properties"] : {};
  const words = Object.entries(properties).map(([name, property]) => `${name} ${isObject(property) ? text(property["description"]) : ""}`);
  return words.join(" ").slice(0, MAX_FIELD_CHARS);
}

function documentOf(tool: CatalogTool, id: number): IndexedTool {
  const { definition } = tool;
  const annotations = isObject(definition["annotations"]) ? definition["annotations"] : {};
  return {
    id,
    name: ownName(tool),
    title: text(definition["title"]) || text(annotations["title"]),
    description: text(definition["description"]),
    parameters: parametersOf(definition),
    upstream: tool.upstream,
  };
}

function buildIndex(catalog: Catalog): MiniSearch<IndexedTool> {
  const index = new MiniSearch<IndexedTool>({
    fields: ["name", "title", "description", "parameters", "upstream"],
    tokenize: (value) => splitWords(value),
    processTerm: (word) => termOf(word) ?? null,
    searchOptions: {
      boost: FIELD_BOOST,
      tokenize: (value) => splitWords(joinPhrases(value)),
      processTerm: (word) => queryTermsOf(word),
      prefix: false,
      fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
    },
  });
  index.addAll(catalog.tools.map(documentOf));
  return index;
}

/** Each kept catalog's index: built at its first search, gone with the catalog (catalog-cache.ts). */
const indexes = new WeakMap<Catalog, MiniSearch<IndexedTool>>();
let built = 0;

/** The index of a catalog version, built once per isolate while the catalog is kept. */
function indexOf(catalog: Catalog): MiniSearch<IndexedTool> {
  let index = indexes.get(catalog);
  if (!index) {
    index = buildIndex(catalog);
    indexes.set(catalog, index);
    built++;
  }
  return index;
}

/** How many indexes this isolate has built (a kept catalog's is not built again): for tests. */
export function indexesBuilt(): number {
  return built;
}

export type SearchRequest = {
  readonly query: string;
  readonly limit: number;
  /** Only tools of this upstream. */
  readonly upstream?: string;
};

export type SearchAnswer = {
  /** How many tools matched at all. */
  readonly matched: number;
  /** The best `limit` of them, best first. */
  readonly tools: readonly CatalogTool[];
};

/**
 * The tools of `catalog` that best serve the task in `query`. A query naming a tool
 * exactly (as called, or as its upstream names it) puts that tool first.
 *
 * @example
 * searchCatalog(catalog, { query: "close the bug about the login page", limit: 5 })
 */
export function searchCatalog(catalog: Catalog, { query, limit, upstream }: SearchRequest): SearchAnswer {
  const inUpstream = (tool: CatalogTool) => upstream === undefined || tool.upstream === upstream;
  const hits = indexOf(catalog).search(query, { filter: (hit) => inUpstream(catalog.tools[hit.id as number]!) });
  const ranked = hits.map((hit) => catalog.tools[hit.id as number]!);
  const wanted = query.trim();
  const exact = catalog.tools.find((tool) => inUpstream(tool) && (tool.name === wanted || ownName(tool) === wanted));
  const ordered = exact ? [exact, ...ranked.filter((tool) => tool !== exact)] : ranked;
  return { matched: ordered.length, tools: ordered.slice(0, limit) };
}
