/**
 * Which parameter keys name a secret. Keys are compared as words, however the client
 * spells them: `privateKey`, `PrivateKey`, `ssh_private_key`, `X-Private-Key` and
 * `privatekey` all hold the words (or the letters) of `private_key`. A key is split into
 * words at the separators `_`, `-`, `.` and spaces, at camelCase and acronym
 * boundaries (`APIKey` is `api key`) and where letters meet digits (`password1` is
 * `password 1`, `token2` is `token 2`), lower-cased; a pattern is read the same way and its
 * words joined.
 *
 * A pattern without wildcards matches when its letters appear in the joined key ending
 * where a word of the key ends (a plural `s` after them allowed): `token` catches
 * `access_token`, `accessToken` and `accesstoken`, not `tokenizer`. A pattern of fewer
 * than `MIN_ANYWHERE_CHARS` letters must also start where a word starts: `auth` catches
 * `auth`, `basicAuth` and `x-auth`, never `author`, `authority` or `oauth`. A pattern
 * with `*` or `?` is a glob over the whole key in snake_case (`myNote` is `my_note`,
 * `x2Token` is `x_2_token`); the glob's own letters and digits are split the same way
 * (`secret1*` is `secret_1*`).
 *
 * Linear in the key's length for each pattern (patterns are bounded in number by the
 * AUDIT var); a key over `MAX_KEY_CHARS` is secret unread.
 */
import { isGlob, matchesGlob } from "../../core/glob";

/** Patterns shorter than this must start at a word of the key; longer ones may start inside one (`accesstoken`). */
export const MIN_ANYWHERE_CHARS = 5;
/** A key longer than this is treated as secret without being read: no real name is that long, and a hostile one costs nothing more. */
export const MAX_KEY_CHARS = 1024;
/** Keys whose verdict a matcher remembers (at most MAX_KEY_CHARS characters each: 2 MiB of UTF-16 at worst), forgotten all at once when full. */
const MAX_REMEMBERED_KEYS = 1_024;
/** One matcher per configured pattern list (parsed once per configuration, so the same array each call). */
const matchers = new WeakMap<readonly string[], (key: string) => boolean>();

const SEPARATOR = /[\s_.-]+/;
/** Where letters meet digits, either way round (`password1`, `2fa`). */
const LETTER_DIGIT = "(?<=\\p{L})(?=\\d)|(?<=\\d)(?=\\p{L})";
/** Inside a part: camelCase (`aB`, `1B`), acronym end (`APIKey`) and letter/digit boundaries. */
const WORD_BOUNDARY = new RegExp(`(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|${LETTER_DIGIT}`, "u");
const LETTER_DIGIT_ALL = new RegExp(LETTER_DIGIT, "gu");

/** The words of a key or pattern, lower-case: separators and camelCase / acronym boundaries split them. */
export function keyWords(key: string): string[] {
  const words: string[] = [];
  for (const part of key.split(SEPARATOR)) {
    // "sshPrivateKey" → ssh|Private|Key; "APIKey" → API|Key; "X2Token" → X|2|Token; "password1" → password|1.
    for (const word of part.split(WORD_BOUNDARY)) if (word !== "") words.push(word.toLowerCase());
  }
  return words;
}

/** The key's words joined, with where each word starts and ends in the joined text. */
function joinedWords(key: string): { text: string; starts: Set<number>; ends: Set<number> } {
  let text = "";
  const starts = new Set<number>();
  const ends = new Set<number>();
  for (const word of keyWords(key)) {
    starts.add(text.length);
    text += word;
    ends.add(text.length);
  }
  return { text, starts, ends };
}

/** True when `word` occurs in `key` ending at a word end (or before a plural `s` that ends one), and, when `atStart`, starting at a word start. */
function containsWord(key: ReturnType<typeof joinedWords>, word: string, atStart: boolean): boolean {
  for (let at = key.text.indexOf(word); at !== -1; at = key.text.indexOf(word, at + 1)) {
    const end = at + word.length;
    const endsWord = key.ends.has(end) || (key.text.charCodeAt(end) === 0x73 && key.ends.has(end + 1));
    if (endsWord && (!atStart || key.starts.has(at))) return true;
  }
  return false;
}

/**
 * A matcher for `patterns` (as configured: any case, any separators).
 *
 * @example
 * const isSecret = secretKeyMatcher(["private_key", "auth"]);
 * isSecret("sshPrivateKey") // true
 * isSecret("author") // false
 */
export function secretKeyMatcher(patterns: readonly string[]): (key: string) => boolean {
  const known = matchers.get(patterns);
  if (known) return known;
  const globs = patterns.filter(isGlob).map((p) =>
    p
      .replace(LETTER_DIGIT_ALL, "_")
      .toLowerCase()
      .replace(/[\s.-]/g, "_"),
  );
  const words = patterns
    .filter((p) => !isGlob(p))
    .map((p) => keyWords(p).join(""))
    .filter((w) => w !== "");
  const decide = (key: string): boolean => {
    const joined = joinedWords(key);
    if (words.some((w) => containsWord(joined, w, w.length < MIN_ANYWHERE_CHARS))) return true;
    if (globs.length === 0) return false;
    const snake = keyWords(key).join("_");
    return globs.some((g) => matchesGlob(g, snake));
  };
  // Calls repeat the same few argument names: each is split into words once per isolate.
  const decided = new Map<string, boolean>();
  const matcher = (key: string): boolean => {
    if (key.length > MAX_KEY_CHARS) return true;
    const earlier = decided.get(key);
    if (earlier !== undefined) return earlier;
    const verdict = decide(key);
    if (decided.size >= MAX_REMEMBERED_KEYS) decided.clear();
    decided.set(key, verdict);
    return verdict;
  };
  matchers.set(patterns, matcher);
  return matcher;
}
