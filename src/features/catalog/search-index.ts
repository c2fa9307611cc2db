/**
 * Ranking tools for a task: a MiniSearch (BM25+) index over what a model searches by —
 * the name split into words, the title, the description (its first sentence, which says
 * what the tool does, once more as a field of its own), parameter names and their
 * descriptions, the upstream — with field weights, stems and the synonyms of
 * vocabulary.ts (a task's word counts once in the match however many terms the vocabulary
 * expands it into), then ranked again by what BM25 does not see: how much of the tool's name
 * the task says, whether the tool does what the task asks (read, create, update, delete),
 * whether it takes by number a thing the task names by number (references.ts) and whether
 * the task names the tool's upstream. A long task searches the terms fewest tools hold.
 * One index per catalog version, built in this isolate when first searched and kept
 * beside the catalog (catalog-cache.ts) for the next searches of the same version; a
 * changed list is another version, so it gets a new index.
 */
import MiniSearch from "minisearch";
import { isObject } from "../../core/jsonrpc";
import { splitName } from "../../core/names";
import type { Catalog, CatalogTool } from "./visible-catalog";
import { firstSentence } from "./compact";
import { MAX_QUERY_CHARS } from "./definitions";
import { identifiedTermsOf, referencedTermsOf, takesReference } from "./references";
import {
  actionOfName,
  actionOfTask,
  joinPhrases,
  splitTaskWords,
  splitWords,
  bridgedWordsOf,
  taskQueryOf,
  termOf,
  type Action,
  type TaskQuery,
} from "./vocabulary";

export { MAX_QUERY_CHARS };

/** Field weights: a word of the name says most about what a tool does; `lead` is the description's first sentence. */
const FIELD_BOOST = { name: 3, title: 2, lead: 1, description: 1, parameters: 0.5, upstream: 1.5 } as const;
/** A tool whose name's words the task says all is ranked up to (1 + this) times higher. */
const NAME_COVERAGE_WEIGHT = 1;
/** A task naming an upstream ("in Notion", "on GitHub") ranks that upstream's tools this many times higher. */
const UPSTREAM_NAMED_BOOST = 2;
/**
 * A word at least this share of an upstream's tool names hold names the server, not the
 * tool (`browser_` of `browser_click`), where the upstream has at least SHARED_NAME_MIN_TOOLS.
 */
const SHARED_NAME_SHARE = 0.5;
const SHARED_NAME_MIN_TOOLS = 4;
/** A name word the vocabulary says for the task counts this much of one the task says itself. */
const BRIDGED_WEIGHT = 0.8;
/** A name word the task says only by its stem counts this much of one it says as written. */
const STEM_ONLY_WEIGHT = 0.6;
/** A tool whose name's action is the task's ranks this many times higher, and one with another action this much lower. */
const ACTION_MATCH_BOOST = 1.3;
const ACTION_MISMATCH_FACTOR = 0.8;
/** A tool taking by number or id a thing the task names by number ("issue 61") ranks this many times higher. */
const REFERENCE_BOOST = 1.5;
/**
 * BM25+ as MiniSearch's defaults, but with more weight on a field's length (b 0.9, not
 * 0.7): descriptions run from a line to pages, and a long one matches many words by chance.
 */
const BM25 = { k: 1.2, b: 0.9, d: 0.5 } as const;
/** Longest first sentence of a description indexed as its lead (characters). */
const LEAD_CHARS = 300;
/** Longest text of a field that is indexed (characters); descriptions can be long. */
const MAX_FIELD_CHARS = 4_000;

type IndexedTool = {
  id: number;
  name: string;
  title: string;
  lead: string;
  description: string;
  parameters: string;
  upstream: string;
};

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
  const words = Object.entries(properties).map(
    ([name, property]) => `${name} ${isObject(property) ? text(property["description"]) : ""}`,
  );
  return words.join(" ").slice(0, MAX_FIELD_CHARS);
}

function documentOf(tool: CatalogTool, id: number): IndexedTool {
  const { definition } = tool;
  const annotations = isObject(definition["annotations"]) ? definition["annotations"] : {};
  return {
    id,
    name: ownName(tool),
    title: text(definition["title"]) || text(annotations["title"]),
    lead: firstSentence(text(definition["description"]), LEAD_CHARS),
    description: text(definition["description"]),
    parameters: parametersOf(definition),
    upstream: tool.upstream,
  };
}

type NameWord = { readonly word: string; readonly term: string };

/** A catalog's index and what the ranking knows of each tool beside it. */
type ToolIndex = {
  readonly search: MiniSearch<IndexedTool>;
  /** Per tool (by id): the words of its own name that say what it does, with their terms (see nameWordsOf). */
  readonly nameWords: readonly (readonly NameWord[])[];
  /** Per tool: the action its name (else its description) starts with. */
  readonly actions: readonly (Action | undefined)[];
  /** Per tool: the terms of what its parameters identify (references.ts). */
  readonly identified: readonly ReadonlySet<string>[];
  /** Per term: how many tools hold it, in any field (a long task keeps its rarest terms: taskQueryOf). */
  readonly toolsHolding: ReadonlyMap<string, number>;
  /** The upstreams' names, lower case. */
  readonly upstreams: ReadonlySet<string>;
};

/**
 * The words of each tool's own name, without the words most of its upstream's names
 * share (`browser_` of `browser_click`, `API-` of `API-post-page`, `slack_`): those
 * name the server, not what the tool does.
 */
function nameWordsOf(catalog: Catalog): string[][] {
  const words = catalog.tools.map((tool) => splitWords(ownName(tool)));
  const counts = new Map<string, Map<string, number>>();
  const sizes = new Map<string, number>();
  catalog.tools.forEach((tool, id) => {
    const perUpstream = counts.get(tool.upstream) ?? new Map<string, number>();
    counts.set(tool.upstream, perUpstream);
    sizes.set(tool.upstream, (sizes.get(tool.upstream) ?? 0) + 1);
    for (const word of new Set(words[id])) perUpstream.set(word, (perUpstream.get(word) ?? 0) + 1);
  });
  return catalog.tools.map((tool, id) => {
    const size = sizes.get(tool.upstream)!;
    const perUpstream = counts.get(tool.upstream)!;
    const upstream = new Set(splitWords(tool.upstream));
    const own = words[id]!.filter(
      (word) =>
        !upstream.has(word) && (size < SHARED_NAME_MIN_TOOLS || perUpstream.get(word)! / size < SHARED_NAME_SHARE),
    );
    return own.length > 0 ? own : words[id]!;
  });
}

function buildIndex(catalog: Catalog): ToolIndex {
  // The terms of the tool being added, gathered as MiniSearch reads its fields, counted once per tool.
  let terms = new Set<string>();
  const toolsHolding = new Map<string, number>();
  const search = new MiniSearch<IndexedTool>({
    fields: ["name", "title", "lead", "description", "parameters", "upstream"],
    tokenize: (value) => splitWords(value),
    processTerm: (word) => {
      const term = termOf(word);
      if (term === undefined) return null;
      terms.add(term);
      return term;
    },
    searchOptions: {
      boost: FIELD_BOOST,
      // rankCatalog hands the task's terms, already stemmed and expanded (taskQueryOf), joined by spaces.
      tokenize: (value) => value.split(" ").filter((term) => term !== ""),
      processTerm: (term) => term,
      prefix: false,
      fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
      bm25: BM25,
    },
  });
  catalog.tools.forEach((tool, id) => {
    terms = new Set();
    search.add(documentOf(tool, id));
    for (const term of terms) toolsHolding.set(term, (toolsHolding.get(term) ?? 0) + 1);
  });
  const nameWords = nameWordsOf(catalog);
  return {
    search,
    nameWords: nameWords.map((words) =>
      words.flatMap((word) => [termOf(word)].flatMap((term) => (term !== undefined ? [{ word, term }] : []))),
    ),
    // A name without a verb (`maps_geocode`) takes its description's first word ("Convert an address…").
    actions: nameWords.map(
      (words, id) =>
        actionOfName(words) ??
        actionOfName(splitWords(text(catalog.tools[id]!.definition["description"]).slice(0, 40))),
    ),
    toolsHolding,
    identified: catalog.tools.map((tool) => identifiedTermsOf(tool.definition)),
    upstreams: new Set(catalog.tools.map((tool) => tool.upstream.toLowerCase())),
  };
}

/**
 * How much of a tool's name the task says, from 0 to 1: each name word whose term
 * matched counts fully when the task says the word itself, less when the vocabulary says
 * it for the task, less again when only its stem matched (`issue` for `list_issues`).
 */
function nameCoverage(
  words: readonly NameWord[],
  match: Readonly<Record<string, readonly string[]>>,
  said: ReadonlySet<string>,
  bridged: ReadonlySet<string>,
): number {
  let covered = 0;
  for (const { word, term } of words) {
    if (match[term]?.includes("name"))
      covered += said.has(word) ? 1 : bridged.has(word) ? BRIDGED_WEIGHT : STEM_ONLY_WEIGHT;
  }
  return words.length > 0 ? covered / words.length : 0;
}

/**
 * A hit's BM25 score with MiniSearch's coordination (its score times the number of query
 * terms it matched) counted in the task's words instead: a word the vocabulary expands
 * into three terms ("show": get, list, read) counts once, as a word said plainly does.
 */
function wordScore(
  hit: { readonly score: number; readonly queryTerms: readonly string[] },
  { wordsOf }: TaskQuery,
): number {
  const words = new Set<number>();
  for (const term of hit.queryTerms) for (const position of wordsOf.get(term) ?? []) words.add(position);
  return (hit.score / Math.max(1, hit.queryTerms.length)) * words.size;
}

/** Each kept catalog's index: built at its first search, gone with the catalog (catalog-cache.ts). */
const indexes = new WeakMap<Catalog, ToolIndex>();
let built = 0;

/** The index of a catalog version, built once per isolate while the catalog is kept. */
function indexOf(catalog: Catalog): ToolIndex {
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

/** A tool of a catalog (by its position) and its score for a task. */
export type ScoredTool = { readonly id: number; readonly score: number };

/**
 * Every tool of `catalog` (within `upstream`) that matches the task in `query`, best
 * first, with its lexical score.
 */
export function rankCatalog(catalog: Catalog, { query, upstream }: Omit<SearchRequest, "limit">): ScoredTool[] {
  const index = indexOf(catalog);
  // Cut here too, whoever calls: some of the vocabulary's patterns cost more than linear time on long runs of one shape.
  const words = splitTaskWords(joinPhrases(query.slice(0, MAX_QUERY_CHARS)));
  const task = taskQueryOf(words, (term) => index.toolsHolding.get(term) ?? 0);
  const hits = index.search.search(task.terms.join(" "), {
    filter: (hit) => upstream === undefined || catalog.tools[hit.id as number]!.upstream === upstream,
  });
  const said = new Set(words);
  const named = new Set(words.filter((word) => index.upstreams.has(word)));
  const bridged = bridgedWordsOf(words);
  const action = actionOfTask(words);
  const referenced = referencedTermsOf(query.slice(0, MAX_QUERY_CHARS));
  const scored = hits.map((hit) => {
    const id = hit.id as number;
    const covered = nameCoverage(index.nameWords[id]!, hit.match, said, bridged);
    const upstreamNamed = named.has(catalog.tools[id]!.upstream.toLowerCase()) ? UPSTREAM_NAMED_BOOST : 1;
    const toolAction = index.actions[id];
    const acting =
      action === undefined || toolAction === undefined
        ? 1
        : action === toolAction
          ? ACTION_MATCH_BOOST
          : ACTION_MISMATCH_FACTOR;
    const referring = takesReference(index.identified[id]!, referenced) ? REFERENCE_BOOST : 1;
    return {
      id,
      score: wordScore(hit, task) * (1 + NAME_COVERAGE_WEIGHT * covered) * upstreamNamed * acting * referring,
    };
  });
  return scored.sort((a, b) => b.score - a.score);
}

/**
 * The answer to a search from the tools it ranked (by position, best first): a query
 * naming a tool exactly (as called, or as its upstream names it) puts that tool first.
 */
export function answerOf(
  catalog: Catalog,
  ranked: readonly number[],
  { query, limit, upstream }: SearchRequest,
): SearchAnswer {
  const wanted = query.trim();
  const exact = catalog.tools.findIndex(
    (tool) =>
      (upstream === undefined || tool.upstream === upstream) && (tool.name === wanted || ownName(tool) === wanted),
  );
  const ordered = exact >= 0 ? [exact, ...ranked.filter((id) => id !== exact)] : ranked;
  return { matched: ordered.length, tools: ordered.slice(0, limit).map((id) => catalog.tools[id]!) };
}

/**
 * The tools of `catalog` that best serve the task in `query`, ranked by words alone.
 *
 * @example
 * searchCatalog(catalog, { query: "close the bug about the login page", limit: 5 })
 */
export function searchCatalog(catalog: Catalog, request: SearchRequest): SearchAnswer {
  return answerOf(
    catalog,
    rankCatalog(catalog, request).map((hit) => hit.id),
    request,
  );
}
