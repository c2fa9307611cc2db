/**
 * How many things a task asks for, and how many a tool answers: "all the channels",
 * "every comment on PR 8", "how many files did it change", "both a.txt and b.txt" want a
 * tool that answers many (`list_channels`, `get_pull_request_comments`,
 * `read_multiple_files`), not one that answers a single thing. A tool answers many when
 * a word of its name is a plural, or says listing or searching. General English and the
 * shapes of tools' names, so it holds for any catalog; search-index.ts weighs it in its
 * second ranking.
 */
import { stemmer } from "stemmer";

/** Words that quantify over many things. */
const QUANTIFIERS: ReadonlySet<string> = new Set(["all", "every", "each", "everything", "everyone", "both", "multiple", "many", "several"]);
/** Words of a tool's name that say it answers many things, plurals aside. */
const MANY_WORDS: ReadonlySet<string> = new Set(["list", "search", "find", "query", "all", "multiple"]);
/** Endings of singular words that end in `s` (status, analysis, address). */
const SINGULAR_S = /(?:ss|us|is)$/;
/** Shortest word read as a plural (`ids` is a plural, `is`, `os` are not). */
const MIN_PLURAL_CHARS = 3;

/** Whether a word of a name is a plural noun (`files`, `repositories`), by its stem. */
export function isPlural(word: string): boolean {
  return word.length >= MIN_PLURAL_CHARS && word.endsWith("s") && !SINGULAR_S.test(word) && stemmer(word) !== word;
}

/** Whether a task's words quantify over many things ("all", "every", "how many", "both"). */
export function asksForMany(words: readonly string[]): boolean {
  return words.some((word) => QUANTIFIERS.has(word));
}

/** Whether a tool whose own name has these words answers many things. */
export function answersMany(nameWords: readonly string[]): boolean {
  return nameWords.some((word) => MANY_WORDS.has(word) || isPlural(word));
}
