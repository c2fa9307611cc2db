/**
 * Ranking by meaning (features/catalog/semantic-ranking.ts) through the Worker, with a STAND-IN
 * for the Workers AI binding: Workers AI cannot run here, so these tests exercise the
 * gateway's side of the contract only — `env.AI.run(model, { text })` answering
 * `{ data: number[][] }`, tool texts embedded once per catalog version, the cosine joined
 * to the lexical score, and a failing or malformed binding leaving the search lexical.
 * The stand-in's vectors count a few hand-picked concepts; they say nothing about how
 * well bge-small-en-v1.5 ranks real tools, which is not measured here.
 */
import { describe, expect, it } from "vitest";
import { loadSearch } from "../../src/features/catalog/search";
import { DEFAULT_EMBEDDINGS_MODEL } from "../../src/features/catalog/semantic-ranking";
import { initialize, request, type Json, type Vars } from "../helpers/gateway";

/** Concepts of the stand-in's vectors, and words that carry each. */
const CONCEPTS: readonly (readonly string[])[] = [
  ["echo", "echoes", "parrot", "mirror", "repeat"],
  ["add", "adds", "sum", "numbers", "plus"],
  ["user", "who", "person", "people"],
];

/** A stand-in embeddings binding: a vector of concept counts per text, and a log of its calls. */
function standIn() {
  const calls: { model: string; texts: string[] }[] = [];
  return {
    calls,
    binding: {
      run: async (model: string, input: { text: string[] }) => {
        calls.push({ model, texts: input.text });
        const data = input.text.map((text) => {
          const words = text.toLowerCase().split(/[^a-z]+/);
          return [0.05, ...CONCEPTS.map((concept) => words.filter((word) => concept.includes(word)).length)];
        });
        return { data, shape: [data.length, CONCEPTS.length + 1] };
      },
    },
  };
}

async function searchOn(vars: Vars, query: string): Promise<Json> {
  const { session } = await initialize("/mcp/alpha?catalog=search", { vars });
  const answer = await request(
    "/mcp/alpha?catalog=search",
    session,
    "tools/call",
    { name: "sys___search_tools", arguments: { query, limit: 3 } },
    { vars },
  );
  return JSON.parse(answer.result.content[0].text);
}

const TASK = "parrot me";

describe("ranking by meaning with a stand-in embeddings binding (not Workers AI)", () => {
  it("finds by meaning what words alone do not, and embeds the catalog once per version", async () => {
    const lexical = await searchOn({}, TASK);
    expect(lexical.ranking).toBeUndefined();
    expect(lexical.tools[0]?.name).not.toBe("echo");

    const { calls, binding } = standIn();
    // The gateway's search is the module loaded on demand: its count, not the source's.
    const { catalogsEmbedded } = await loadSearch();
    const before = catalogsEmbedded();
    const found = await searchOn({ AI: binding }, TASK);
    expect(found).toMatchObject({ ranking: "lexical+embeddings" });
    expect(found.tools[0].name).toBe("echo");
    expect(found.matched).toBeGreaterThanOrEqual(1);
    expect(calls.every((call) => call.model === DEFAULT_EMBEDDINGS_MODEL)).toBe(true);
    const toolCalls = calls.filter((call) => call.texts.length > 1);
    expect(toolCalls).toHaveLength(1);
    expect(toolCalls[0]!.texts.some((text) => text.includes("Echoes its text"))).toBe(true);

    const again = await searchOn({ AI: binding }, "sum of two numbers");
    expect(again.tools[0].name).toBe("add");
    expect(calls.filter((call) => call.texts.length > 1)).toHaveLength(1);
    expect(catalogsEmbedded()).toBe(before + 1);
  });

  it.each([
    [
      "fails",
      {
        run: async () => {
          throw new Error("AI unavailable");
        },
      },
    ],
    ["answers no vectors", { run: async () => ({ data: [] }) }],
    [
      "answers vectors that are not numbers",
      { run: async (_model: string, input: { text: string[] }) => ({ data: input.text.map(() => ["x"]) }) },
    ],
  ])("leaves the search lexical when the binding %s", async (_label, binding) => {
    const lexical = await searchOn({}, "sum of two numbers");
    const fallback = await searchOn({ AI: binding }, "sum of two numbers");
    expect(fallback.ranking).toBe("lexical");
    expect(fallback.tools.map((tool: Json) => tool.name)).toEqual(lexical.tools.map((tool: Json) => tool.name));
  });
});
