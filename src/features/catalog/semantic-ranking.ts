/**
 * Optional ranking by meaning, for operators who bind Workers AI (`[ai] binding = "AI"`
 * in wrangler.toml): each tool's text and the task are embedded (bge-small-en-v1.5 by
 * default), and the cosine of the two joins the lexical score of search-index.ts, so a
 * task phrased in words no tool uses can still find it. Without the binding nothing here
 * runs and search is lexical. A tool's vectors are computed once per catalog version per
 * isolate (kept beside the catalog, as its index is); a binding that fails or answers in
 * another shape leaves that search lexical, and the next search asks again. How much this
 * helps has not been measured (Workers AI cannot run where the benchmark runs), so the
 * weight below is a starting point, not a tuned value.
 */
import { isObject } from "../../core/jsonrpc";
import type { EmbeddingsBinding } from "../../context/call-context";
import type { Catalog } from "./catalog-cache";
import { answerOf, rankCatalog, type SearchAnswer, type SearchRequest } from "./search-index";
import { splitWords } from "./vocabulary";

/** The embeddings model asked when the operator names none (SEARCH_EMBEDDINGS_MODEL). */
export const DEFAULT_EMBEDDINGS_MODEL = "@cf/baai/bge-small-en-v1.5";
/** Texts one call to the binding embeds at most. */
const MAX_TEXTS_PER_CALL = 100;
/** Characters of a tool's text (name words, title, description) that are embedded. */
const TOOL_TEXT_CHARS = 512;
/** Share of the final score that is the cosine; the rest is the lexical score scaled to 0..1. */
const MEANING_WEIGHT = 0.5;
/** Tools closest by meaning that join the lexical matches as candidates. */
const MEANING_CANDIDATES = 20;

/** What the ranking needs of a Workers AI binding: `run(model, { text })`. */
export type { EmbeddingsBinding };

/** The vectors of `texts`, in order; throws when the binding answers in another shape. */
async function embed(ai: EmbeddingsBinding, model: string, texts: readonly string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += MAX_TEXTS_PER_CALL) {
    const batch = texts.slice(start, start + MAX_TEXTS_PER_CALL);
    const answer = await ai.run(model, { text: batch });
    const data = isObject(answer) ? answer["data"] : undefined;
    if (!Array.isArray(data) || data.length !== batch.length)
      throw new Error("the embeddings binding answered no vector per text");
    for (const vector of data) {
      if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === "number"))
        throw new Error("the embeddings binding answered a vector that is not numbers");
      out.push(unit(Float32Array.from(vector as number[])));
    }
  }
  return out;
}

/** The vector scaled to length 1 (cosines become dot products). */
function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return vector.map((x) => x / norm);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) sum += a[i]! * b[i]!;
  return sum;
}

/** The text of a tool that is embedded: its name's words, title and description. */
function toolText(catalog: Catalog, id: number): string {
  const { definition, name } = catalog.tools[id]!;
  const title = typeof definition["title"] === "string" ? definition["title"] : "";
  const description = typeof definition["description"] === "string" ? definition["description"] : "";
  return `${splitWords(name).join(" ")}. ${title} ${description}`.slice(0, TOOL_TEXT_CHARS);
}

const toolVectors = new WeakMap<Catalog, Promise<Float32Array[]>>();
let embedded = 0;

/** The vectors of a catalog's tools, embedded once per kept catalog (a failure is not kept). */
function vectorsOf(catalog: Catalog, ai: EmbeddingsBinding, model: string): Promise<Float32Array[]> {
  let vectors = toolVectors.get(catalog);
  if (!vectors) {
    embedded++;
    vectors = embed(
      ai,
      model,
      catalog.tools.map((_, id) => toolText(catalog, id)),
    );
    toolVectors.set(catalog, vectors);
    vectors.catch(() => toolVectors.delete(catalog));
  }
  return vectors;
}

/** How many catalogs this isolate has embedded: for tests. */
export function catalogsEmbedded(): number {
  return embedded;
}

/** A search's answer and how it was ranked. */
export type RankedAnswer = SearchAnswer & { readonly ranking: "lexical" | "lexical+embeddings" };

/**
 * The tools that best serve the task, by words and by meaning: the lexical matches and
 * the tools closest by meaning, each scored (1 − w) · lexical / best lexical + w · its
 * cosine scaled to 0..1 over the catalog (w = MEANING_WEIGHT, not measured: see the file's head).
 * Falls back to words alone when the binding fails.
 *
 * @example
 * await searchByMeaning(catalog, { query: "parrot what I say", limit: 5 }, env.AI, DEFAULT_EMBEDDINGS_MODEL)
 */
export async function searchByMeaning(
  catalog: Catalog,
  request: SearchRequest,
  ai: EmbeddingsBinding,
  model: string,
): Promise<RankedAnswer> {
  const lexical = rankCatalog(catalog, request);
  let vectors: Float32Array[];
  let task: Float32Array;
  try {
    [vectors, [task]] = (await Promise.all([vectorsOf(catalog, ai, model), embed(ai, model, [request.query])])) as [
      Float32Array[],
      [Float32Array],
    ];
  } catch {
    return {
      ...answerOf(
        catalog,
        lexical.map((hit) => hit.id),
        request,
      ),
      ranking: "lexical",
    };
  }
  const best = lexical[0]?.score ?? 1;
  const scores = new Map(lexical.map((hit) => [hit.id, (1 - MEANING_WEIGHT) * (hit.score / best)]));
  const inUpstream = (id: number) => request.upstream === undefined || catalog.tools[id]!.upstream === request.upstream;
  const cosines = vectors
    .map((vector, id) => ({ id, cosine: dot(vector, task) }))
    .filter((entry) => inUpstream(entry.id));
  // Cosines of one model sit in a narrow band: scaled to 0..1 over the catalog, like the lexical score.
  const low = Math.min(...cosines.map((entry) => entry.cosine));
  const span = Math.max(...cosines.map((entry) => entry.cosine)) - low || 1;
  const meaning = new Map(cosines.map((entry) => [entry.id, (entry.cosine - low) / span]));
  for (const { id } of [...cosines].sort((a, b) => b.cosine - a.cosine).slice(0, MEANING_CANDIDATES))
    scores.set(id, scores.get(id) ?? 0);
  const ranked = [...scores]
    .map(([id, score]) => ({ id, score: score + MEANING_WEIGHT * meaning.get(id)! }))
    .sort((a, b) => b.score - a.score);
  return {
    ...answerOf(
      catalog,
      ranked.map((hit) => hit.id),
      request,
    ),
    ranking: "lexical+embeddings",
  };
}
