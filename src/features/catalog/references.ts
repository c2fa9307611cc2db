/**
 * Things a task names by number ("issue 61", "PR 40", "pull request 71") and the tools
 * that take such a thing by its number or id (`issue_number`, `pull_number`, `blockId`):
 * a task that points at an existing thing is served by a tool that is handed one, not by
 * one that makes or lists them (`update_issue` rather than `create_issue` for "add the
 * bug label to issue 61"). Read from the schema's parameter names, so it holds for any
 * catalog; search-index.ts weighs it in its second ranking.
 */
import { isObject } from "../../core/jsonrpc";
import { queryTermsOf, splitWords, termOf } from "./vocabulary";

/** Words of a parameter's name that say it holds an identifier (the rest of the name says of what). */
const IDENTIFIER_WORDS: ReadonlySet<string> = new Set(["id", "ids", "number", "num", "no", "key", "index"]);
/** Parameters of one tool that are read at most (a schema may list any number). */
const MAX_PARAMETERS = 64;
/** A number as a word of its own ("61", "#61", "61,"), not a decimal or part of a path. */
const NUMBER_TOKEN = /^#?\d+[,;:!?)]?$/;
/** A plain word, letters only. */
const WORD_TOKEN = /^\p{L}+$/u;
/** References a task brings at most (each is a few terms). */
export const MAX_REFERENCES = 8;

/**
 * The terms of what a tool's parameters identify (`issue_number`: issu; `pull_number`:
 * pull; `block_id`: block), from the top-level properties of its input schema whose
 * name ends in an identifier word, or whose type is a number.
 */
export function identifiedTermsOf(definition: Readonly<Record<string, unknown>>): ReadonlySet<string> {
  const schema = definition["inputSchema"];
  const properties = isObject(schema) && isObject(schema["properties"]) ? schema["properties"] : {};
  const terms = new Set<string>();
  for (const [name, property] of Object.entries(properties).slice(0, MAX_PARAMETERS)) {
    const words = splitWords(name);
    const last = words.at(-1);
    const numeric = isObject(property) && (property["type"] === "integer" || property["type"] === "number");
    if (last === undefined || !(IDENTIFIER_WORDS.has(last) || numeric)) continue;
    for (const word of words) {
      const term = IDENTIFIER_WORDS.has(word) ? undefined : termOf(word);
      if (term !== undefined) terms.add(term);
    }
  }
  return terms;
}

/**
 * The terms of the things a task names by number: the word before a number ("issue 61",
 * "PR #40") and, when it is not a common word, the one before that ("pull request 71":
 * request, pull), each with the terms the vocabulary gives it (PR: pull, request). Read
 * from the task as written, words apart: a number inside a URL or a path
 * (`sentry.io/issues/123`) or a decimal (`40.7`) refers to nothing.
 */
export function referencedTermsOf(task: string): ReadonlySet<string> {
  const tokens = task.toLowerCase().split(/\s+/);
  const terms = new Set<string>();
  let references = 0;
  for (let i = 1; i < tokens.length && references < MAX_REFERENCES; i++) {
    if (!NUMBER_TOKEN.test(tokens[i]!)) continue;
    const word = tokens[i - 1]!;
    if (!WORD_TOKEN.test(word) || termOf(word) === undefined) continue;
    references++;
    for (const term of queryTermsOf(word)) terms.add(term);
    const before = i >= 2 && WORD_TOKEN.test(tokens[i - 2]!) ? termOf(tokens[i - 2]!) : undefined;
    if (before !== undefined) terms.add(before);
  }
  return terms;
}

/** Whether a tool identifies one of the things the task names by number. */
export function takesReference(identified: ReadonlySet<string>, referenced: ReadonlySet<string>): boolean {
  if (referenced.size === 0) return false;
  for (const term of referenced) if (identified.has(term)) return true;
  return false;
}
