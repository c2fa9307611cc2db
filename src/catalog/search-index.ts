/**
 * Ranking tools for a task: a MiniSearch (BM25+) index over what a model searches by —
 * the name split into words, the title, the description, parameter names and their
 * descriptions, the upstream — with field weights, stems and the synonyms of
 * vocabulary.ts. One index per catalog version (its digest), built in this isolate when
 * first searched and kept for the next searches of the same version; a changed list has
 * another digest, so it gets a new index.
 */
import MiniSearch from "minisearch";
import { isObject } from "../core/jsonrpc";
import { splitName } from "../core/names";
import type { Catalog, CatalogTool } from "./visible-catalog";
import { joinPhrases, queryTermsOf, splitWords, termOf } from "./vocabulary";

/** Catalog versions whose index an isolate keeps (the least recently used goes first). */
const MAX_CACHED_INDEXES = 8;
/**
 * Tools the kept indexes hold together at most: an index takes about 2.6 MB per 1,000
 * real tools (measured with bench/catalog's servers), so this keeps them near 26 MB of
 * the isolate's 128 MB. The index being searched is always kept.
 */
const MAX_CACHED_TOOLS = 10_000;
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

const indexes = new Map<string, MiniSearch<IndexedTool>>();
let cachedTools = 0;

/** The index of a catalog version, built once per isolate (and again once evicted). */
function indexOf(catalog: Catalog): MiniSearch<IndexedTool> {
  let index = indexes.get(catalog.digest);
  if (index) indexes.delete(catalog.digest);
  else {
    index = buildIndex(catalog);
    cachedTools += index.documentCount;
  }
  // Least recently used first; the one in use goes last and stays.
  for (const [digest, old] of indexes) {
    if (indexes.size < MAX_CACHED_INDEXES && cachedTools <= MAX_CACHED_TOOLS) break;
    indexes.delete(digest);
    cachedTools -= old.documentCount;
  }
  indexes.set(catalog.digest, index);
  return index;
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
