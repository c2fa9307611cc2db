/**
 * The ranking of sys___search_tools over a small catalog written here (names shaped like
 * real servers', descriptions our own): what BM25 alone gets wrong and the second ranking
 * (search-index.ts) sets right — a tool doing what the task asks (read, create, update,
 * delete), the tool whose name the task says rather than only its stem, the upstream the
 * task names, a proper name written in camelCase kept whole. The recall on real servers'
 * tools is measured by `npm run bench:catalog`, not here.
 */
import { describe, expect, it } from "vitest";
import type { Catalog } from "../../src/features/catalog/visible-catalog";
import { MAX_QUERY_CHARS, rankCatalog, searchCatalog } from "../../src/features/catalog/search-index";
import { MAX_REFERENCES, referencedTermsOf } from "../../src/features/catalog/references";
import {
  MAX_QUERY_TERMS,
  actionOfTask,
  bridgedWordsOf,
  joinPhrases,
  splitTaskWords,
  splitWords,
  taskQueryOf,
} from "../../src/features/catalog/vocabulary";
import { SYNONYMS, TABLE_WORDS } from "../../src/features/catalog/synonyms";

/** A tool of the test catalog: upstream, own name, description. */
const TOOLS: readonly (readonly [string, string, string])[] = [
  ["sentry", "create_project", "Create a project; projects hold the events of one app, and a project has keys."],
  ["sentry", "find_projects", "Find the projects of an organization."],
  ["sentry", "update_project", "Change a project's name, slug or platform."],
  ["github", "create_branch", "Create a branch in a repository on GitHub."],
  ["gitlab", "create_branch", "Create a branch in a project on GitLab."],
  ["github", "list_issues", "List the issues of a repository; issues can be filtered by state and labels."],
  ["github", "get_issue", "Get one issue."],
  ["notion", "API-get-user", "Retrieve a user of the workspace by id; a user is a person or a bot."],
  ["notion", "API-get-users", "List every user."],
  ["notion", "API-get-self", "Retrieve the bot user of the token."],
  ["slack", "slack_get_thread_replies", "Get the replies in a thread of messages."],
  ["slack", "slack_reply_to_thread", "Reply to a thread of messages in a channel, a reply is a message."],
  ["slack", "slack_post_message", "Post a message to a channel."],
  ["slack", "slack_list_channels", "List the channels."],
];

function catalogOf(): Catalog {
  const tools = TOOLS.map(([upstream, name, description]) => {
    const definition = { name: `${upstream}___${name}`, description, inputSchema: { type: "object" } };
    return { name: definition.name, upstream, definition, raw: JSON.stringify(definition) };
  });
  return { tools, digest: "search-ranking-test", truncated: false };
}

describe("ranking a catalog", () => {
  const catalog = catalogOf();
  it.each([
    ["a question asks for a tool that reads", "which projects do we have", "sentry___find_projects"],
    [
      "a phrasal verb says the action (setting up creates)",
      "set up a project for the mobile app",
      "sentry___create_project",
    ],
    [
      "the upstream the task names, written as people write it",
      "create a branch in our GitLab project",
      "gitlab___create_branch",
    ],
    ["the plural the task says", "show me the issues of the api repo", "github___list_issues"],
    ["the singular the task says", "show me issue 230", "github___get_issue"],
    ["the plural the vocabulary says for a plural", "who are our members", "notion___API-get-users"],
    [
      "reading over writing when the task reads",
      "read the replies under that thread",
      "slack___slack_get_thread_replies",
    ],
  ])("%s: %s → %s", (_label, query, expected) => {
    expect(searchCatalog(catalog, { query, limit: 3 }).tools[0]?.name).toBe(expected);
  });

  it("reads the first MAX_QUERY_CHARS characters of a query, whoever calls the ranking", () => {
    // Past the cut, a task that would find Slack's channels; before it, filler that finds nothing.
    const filler = "a-".repeat(MAX_QUERY_CHARS / 2);
    expect(rankCatalog(catalog, { query: `${filler}list the slack channels` })).toEqual(
      rankCatalog(catalog, { query: filler }),
    );
    expect(rankCatalog(catalog, { query: "list the slack channels" })[0]?.id).toBe(
      TOOLS.findIndex(([, name]) => name === "slack_list_channels"),
    );
  });

  it("counts every tool that matched, and answers at most the limit", () => {
    const found = searchCatalog(catalog, { query: "project", limit: 2 });
    expect(found.tools).toHaveLength(2);
    expect(found.matched).toBeGreaterThanOrEqual(4);
  });

  it("answers nothing for a query of no words, without failing", () => {
    expect(searchCatalog(catalog, { query: "?!", limit: 5 })).toEqual({ matched: 0, tools: [] });
  });
});

describe("the words of a task", () => {
  it.each([
    ["which projects do we have", "read"],
    ["how do I delete the page", "delete"],
    ["make a branch", "create"],
    ["rename the page", "update"],
    ["merge it", undefined],
    // Words of Object.prototype named no action; looked up in a plain object, `constructor` named Object itself.
    ["the constructor of this class", undefined],
    ["valueOf toString hasOwnProperty __proto__", undefined],
  ])("%s asks to %s", (task, action) => {
    expect(actionOfTask(splitTaskWords(task))).toBe(action);
  });

  it("keeps a camelCase word whole in a task, and splits it in a tool's text as well", () => {
    expect(splitTaskWords("open GitHub")).toEqual(["open", "github"]);
    expect(splitWords("listPullRequests on GitHub")).toEqual([
      "listpullrequests",
      "list",
      "pull",
      "requests",
      "on",
      "github",
      "git",
      "hub",
    ]);
  });

  it.each([
    ["HTTPServer", ["httpserver", "http", "server"]],
    ["parseJSONResponse", ["parsejsonresponse", "parse", "json", "response"]],
    ["ABCdEFg", ["abcdefg", "ab", "cd", "e", "fg"]],
    ["ABCDeFGHiJ", ["abcdefghij", "abc", "de", "fg", "hi", "j"]],
    ["URL", ["url"]],
  ])("splits the acronyms of %s where a word begins", (name, words) => {
    expect(splitWords(name)).toEqual(words);
  });

  it("splits a name of 400,000 capitals in one pass (a backtracking pattern took minutes)", () => {
    expect(splitWords("A".repeat(400_000))).toEqual(["a".repeat(400_000)]);
  });

  it("lists each word of the synonym table once, with at least one word it stands for", () => {
    const words = TABLE_WORDS();
    expect(words.filter((word, i) => words.indexOf(word) !== i)).toEqual([]);
    expect(
      [...SYNONYMS.values()].every(
        (synonyms) => synonyms.length > 0 && synonyms.every((synonym) => /^[a-z]+$/.test(synonym)),
      ),
    ).toBe(true);
  });

  it("bridges a plural to plurals", () => {
    expect(bridgedWordsOf(["members"])).toEqual(new Set(["users", "members"]));
    expect(bridgedWordsOf(["member"])).toEqual(new Set(["user", "member"]));
    expect(bridgedWordsOf(["repos"])).toEqual(new Set(["repositories", "repos"]));
  });

  it.each([
    ["set up a branch for the fix", "create"],
    ["spin up a new environment", "create"],
    ["get rid of the old tab", "delete"],
    ["clean up the temp folder", "delete"],
    ["turn it off", "update"],
    ["pull up Lee's profile", "read"],
    ["file a bug about the login page", "create"],
  ])("reads the phrasal verb of %s as %s", (task, action) => {
    expect(actionOfTask(splitTaskWords(joinPhrases(task)))).toBe(action);
  });

  it.each([
    ["what's in /var/tmp", "var tmp directory"],
    ["open notes/todo.md", "notes/todo.md file"],
    ["which street is at 51.50, -0.12", "latitude longitude coordinates"],
    ["add a paragraph to the end of the page", "append"],
    ["what does the issue say", "what does the issue read"],
  ])("rewrites the shape or idiom of %s (%s)", (task, rewritten) => {
    expect(joinPhrases(task)).toContain(rewritten);
  });

  it("searches each term once, remembering every word that brings it", () => {
    const { terms, wordsOf } = taskQueryOf(["show", "view", "issues"]);
    expect(terms.filter((term) => term === "get")).toHaveLength(1);
    expect(wordsOf.get("get")).toEqual([0, 1]);
    expect(wordsOf.get("issu")).toEqual([2]);
  });

  it("searches at most MAX_QUERY_TERMS terms of a long task: the first when it knows no catalog, else the rarest in it", () => {
    const words = Array.from(
      { length: 500 },
      (_, i) => `word${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + (Math.floor(i / 26) % 26))}`,
    );
    const { terms } = taskQueryOf(words);
    expect(terms).toHaveLength(MAX_QUERY_TERMS);
    expect(terms[0]).toBe("wordaa");
    // The last word held by one tool, the first 26 (zqaax … zqzax) by five, the rest by none: those held come first, the rarest before.
    const unstemmed = Array.from(
      { length: 500 },
      (_, i) => `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + (Math.floor(i / 26) % 26))}x`,
    );
    const rare = taskQueryOf([...unstemmed, "channels"], (term) =>
      term === "channel" ? 1 : term.endsWith("ax") ? 5 : 0,
    ).terms;
    expect(rare).toHaveLength(MAX_QUERY_TERMS);
    expect(rare).toContain("channel");
    expect(rare.filter((term) => term.endsWith("ax"))).toHaveLength(26);
    expect(rare.filter((term) => term.endsWith("bx"))).toEqual(["zqabx", "zqbbx", "zqcbx", "zqdbx", "zqebx"]);
  });
});

describe("a long task", () => {
  const catalog = catalogOf();
  it("keeps the request that follows a long preamble: the terms fewest tools hold, not the first", () => {
    // More distinct words than MAX_QUERY_TERMS, none of which a tool uses, then the request.
    const preamble = Array.from(
      { length: MAX_QUERY_TERMS + 8 },
      (_, i) => `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`,
    ).join(" ");
    const ranked = rankCatalog(catalog, { query: `${preamble} so please list the slack channels` });
    expect(catalog.tools[ranked[0]!.id]!.name).toBe("slack___slack_list_channels");
  });
});

describe("what a description says first", () => {
  /** Two tools of the same name and the same words, each saying first what the other says after. */
  function pagesCatalog(): Catalog {
    const tools = [
      ["beta", "Read a page. Also archives pages and lists them."],
      ["alpha", "Archive a page. Also reads pages and lists them."],
    ].map(([upstream, description]) => {
      const definition = { name: `${upstream}___pages`, description, inputSchema: { type: "object" } };
      return { name: definition.name, upstream: upstream!, definition, raw: JSON.stringify(definition) };
    });
    return { tools, digest: "lead-test", truncated: false };
  }

  it.each([
    ["archive the old page", "alpha___pages"],
    ["read the old page", "beta___pages"],
  ])("counts the first sentence again: %s → %s", (query, expected) => {
    expect(searchCatalog(pagesCatalog(), { query, limit: 2 }).tools[0]?.name).toBe(expected);
  });
});

describe("a thing the task names by number", () => {
  /** Two tools alike but for their parameters: beta's (listed first) finds issues by text, alpha's takes one by its number. */
  function issuesCatalog(): Catalog {
    const tools = [
      ["beta", { issue_text: { type: "string" } }],
      ["alpha", { issue_number: { type: "number" } }],
    ].map(([upstream, properties]) => {
      const definition = {
        name: `${String(upstream)}___issue_details`,
        description: "The details of an issue: title, state, labels.",
        inputSchema: { type: "object", properties },
      };
      return { name: definition.name, upstream: String(upstream), definition, raw: JSON.stringify(definition) };
    });
    return { tools, digest: "references-test", truncated: false };
  }

  it.each([
    ["the details of issue 61", "alpha___issue_details"],
    ["what labels does issue #61 have?", "alpha___issue_details"],
    ["what labels does the login issue have", "beta___issue_details"],
    ["the details of the issue at example.com/issues/61", "beta___issue_details"],
  ])("%s → %s", (query, expected) => {
    expect(searchCatalog(issuesCatalog(), { query, limit: 2 }).tools[0]?.name).toBe(expected);
  });

  it.each([
    ["show PR 40", ["pull", "request", "pr", "show"]],
    ["what did pull request #71 change", ["request", "pull"]],
    ["see sentry.io/issues/123 near 40.7, -74.0", []],
    ["issue 1 issue 2 issue 3", ["issu"]],
  ])("reads the references of %s as %j", (task, terms) => {
    expect([...referencedTermsOf(task)].sort()).toEqual([...terms].sort());
  });

  it("reads at most MAX_REFERENCES references of a task", () => {
    const word = (i: number) =>
      `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`;
    const task = Array.from({ length: 300 }, (_, i) => `${word(i)} ${i}`).join(" ");
    expect([...referencedTermsOf(task)]).toEqual(Array.from({ length: MAX_REFERENCES }, (_, i) => word(i)));
  });
});
