/**
 * Two things of the sixth round of tool search (docs/tool-search.md): a task asking for
 * many things ("every", "all", "how many", "both") ranks up the tools that answer many
 * (a plural or a word of listing in the name: catalog/quantity.ts), and a single letter
 * left of a possessive or a contraction ("what's", "the client's") is no term, on either
 * side, so it matches nothing. Through the Worker on the alpha fixture (a real SDK
 * upstream) where the answer shows it, and the word rules as tables.
 */
import { describe, expect, it } from "vitest";
import { answersMany, asksForMany, isPlural } from "../src/catalog/quantity";
import { splitTaskWords, taskQueryOf, termOf } from "../src/catalog/vocabulary";
import { initialize, request, type Json } from "./helpers/gateway";

const ROUTE = "/mcp/alpha?catalog=search";

/** What sys___search_tools answers on alpha for `query`. */
async function search(query: string): Promise<Json> {
  const { session } = await initialize(ROUTE);
  const answer = await request(ROUTE, session, "tools/call", { name: "sys___search_tools", arguments: { query, limit: 3 } });
  return JSON.parse(answer.result.content[0].text);
}

describe("through the Worker", () => {
  it("a task asking for every one of a thing finds the tool reporting them, not one whose description says 'every'", async () => {
    // add_tool: "Adds a tool to every session…"; listen_stats: "…streams, subscriptions, cancellations and sessions".
    const found = await search("show every session");
    expect(found.tools[0].name).toBe("listen_stats");
  });

  it("the 's of a possessive or a contraction matches no tool", async () => {
    // Only echo says "echo"; list_roots ("the client's roots") and listen_stats ("a client name's…") hold an 's.
    const found = await search("what's echoed");
    expect(found.tools.map((tool: Json) => tool.name)).toEqual(["echo"]);
    expect(found.matched).toBe(1);
  });
});

describe("the words of quantity", () => {
  it.each([
    ["list every channel", true],
    ["how many files did PR 5 change", true],
    ["show me both package.json and tsconfig.json", true],
    ["all the open issues", true],
    ["show the channel", false],
    ["is there any issue about login", false],
  ])("%s asks for many: %s", (task, many) => {
    expect(asksForMany(splitTaskWords(task))).toBe(many);
  });

  it.each([
    [["list", "channels"], true],
    [["read", "multiple", "files"], true],
    [["get", "pull", "request", "files"], true],
    [["search", "code"], true],
    [["get", "user"], false],
    [["get", "pull", "request", "status"], false],
    [["maps", "place", "details"], true],
    [["analysis"], false],
    [["address"], false],
  ])("a tool named %j answers many: %s", (words, many) => {
    expect(answersMany(words)).toBe(many);
  });

  it.each([
    ["repositories", true],
    ["ids", true],
    ["status", false],
    ["is", false],
    ["class", false],
  ])("%s is a plural: %s", (word, plural) => {
    expect(isPlural(word)).toBe(plural);
  });
});

describe("single letters", () => {
  it.each(["s", "t", "x", "d"])("%s is no term", (letter) => {
    expect(termOf(letter)).toBeUndefined();
  });

  it("a task's possessives and contractions bring no term", () => {
    const terms = taskQueryOf(splitTaskWords("what's Tom's email, don't guess")).terms;
    expect(terms).toEqual(["tom", "email", "don", "guess"]);
  });
});
