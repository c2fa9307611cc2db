/**
 * The words of the search index: how text becomes terms (names split on `_ - .` and
 * camelCase, lower case, common words dropped, Porter stems), and the bridge from the
 * words people say to the words tools use ("bookmark" → star, "inbox" → notifications).
 * The same terms on both sides: a tool's text when indexed, the caller's task when searched.
 */
import { stemmer } from "stemmer";
import { SYNONYMS } from "./synonyms";

/** Words that say nothing about which tool serves a task. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the to of for in on at by with from into about as and or but not no my me i we us our you your it its this that these those " +
    "is are was were be been being do does did can could would should will shall may might must please just also all any some there here " +
    "what which who whom whose when where why how tool tools using use via"
  ).split(" "),
);

/** The words the vocabulary adds for one word of a task. */
function synonymsOf(word: string): readonly string[] {
  return SYNONYMS.get(word) ?? [];
}

/** A file's name: a word, a dot and an extension files have. */
const FILE_NAME = String.raw`\b[\w-]+\.(?:txt|md|json|ya?ml|csv|pdf|png|jpe?g|gif|svg|webp|mp[34]|mov|wav|zip|gz|tar|html?|css|xml|js|ts|py|go|rs|rb|java|sh|sql|ini|env|log|toml)\b`;

/**
 * Phrasal verbs of software tasks, as one verb the vocabulary knows: a verb's forms, its
 * particles and the verb it stands for ("set up a branch" creates it, "pull up a profile"
 * shows it, "get rid of a tab" deletes it). A pronoun may stand between ("turn it off").
 * General English, not words of particular tasks.
 */
const PHRASAL_VERBS: readonly (readonly [verb: string, particles: string, meaning: string])[] = [
  ["set|sets|setting", "up", "create"],
  ["spin|spins|spun|spinning", "up", "create"],
  ["write|writes|wrote|writing|draw|draws|drew|drawn", "up", "create"],
  ["put|puts|putting", "together", "create"],
  ["kick|kicks|kicked|kicking", "off", "start"],
  ["pull|pulls|pulled|pulling|bring|brings|brought|bringing|call|calls|called", "up", "get"],
  ["find|finds|found", "out", "find"],
  ["print|prints|printed", "out", "print"],
  ["get|gets|got|getting", "rid\\s+of", "delete"],
  ["throw|throws|threw|thrown", "away|out", "delete"],
  ["take|takes|took|taken|tear|tears|tore|torn", "down", "delete"],
  ["clean|cleans|cleaned|clear|clears|cleared|wipe|wipes|wiped", "up|out|away", "delete"],
  ["turn|turns|turned|switch|switches|switched", "on|off", "toggle"],
  ["fill|fills|filled", "in|out", "fill"],
  ["shut|shuts|close|closes|closed", "down|off", "close"],
  ["back|backs|backed", "up", "copy"],
  ["hand|hands|handed", "over|off", "assign"],
  ["hook|hooks|hooked|tie|ties|tied", "up|together", "link"],
  ["catch|catches|caught", "up", "read history"],
];
const PHRASAL_PRONOUNS = "it|this|that|them|me|us|everything";

/**
 * Multi-word phrases people say, and shapes of words (a URL, a file path, a #channel),
 * rewritten into words the synonyms and tools know before the query is split.
 */
const PHRASES: readonly (readonly [RegExp, string | ((match: string, ...groups: string[]) => string)])[] = [
  ...PHRASAL_VERBS.map(
    ([verb, particles, meaning]) =>
      [new RegExp(`\\b(?:${verb})\\s+(?:(?:${PHRASAL_PRONOUNS})\\s+)?(?:${particles})\\b`, "gi"), meaning] as const,
  ),
  // Filing a bug or a ticket creates it.
  [
    /\b(?:file|files|filed|log|logs|logged|raise|raises|raised|lodge|submit)\s+(?=(?:a|an|the|new)\s+(?:\w+\s+)?(?:bugs?|issues?|tickets?|reports?|complaints?)\b)/gi,
    "create ",
  ],
  [/\bship\s+it\b/gi, "shipit"],
  [/\blook\s+up\b/gi, "lookup"],
  [/\blook\s+(?:through|in|into)\b/gi, "search"],
  [/\blook\s+at\b/gi, "view"],
  [/\b(?:who|which\s+\w+)\s+am\s+i\b/gi, "whoami self"],
  [/\brequest(?:ed|s)?\s+changes\b/gi, "review"],
  [/\b(?:https?:\/\/)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|co|edu|gov)\b\S*/gi, "$& url website"],
  // Opening a file reads it (opening an issue creates one, opening a site navigates).
  [new RegExp(`\\bopen(?=\\s+(?:\\w+\\s+){0,2}?(?:files?\\b|${FILE_NAME}))`, "gi"), "read"],
  // "Open" after a determiner or a verb is a state ("any open PRs", "list open issues"), not opening.
  [/\b(any|all|the|my|our|its|their|what|which|list|show|still|are|is)\s+open\b/gi, "$1 opened"],
  // An absolute path with no extension anywhere names a directory ("what's in /var/tmp"); any other path or file name, a file.
  [
    /(?:^|\s)~?((?:\/[\w-]+)+)\/?(?=$|\s|[,;:!?]|\.(?:\s|$))/g,
    (_path: string, segments: string) => `${segments.replaceAll("/", " ")} directory`,
  ],
  [new RegExp(`(?:^|\\s)\\S*\\/\\S+|${FILE_NAME}`, "gi"), "$& file"],
  [/(?:^|\s)#([a-z0-9_-]+)/gi, " $1 channel"],
  // Telling the agent a fact to keep, or asking what it keeps.
  [/\b(?:note|record|remember|keep\s+in\s+mind)\s+that\b/gi, "remember fact"],
  [/\bwhat\s+do\s+you\s+(?:know|remember)\b/gi, "remember search"],
  [/\b(?:api|network|http)\s+(?:calls|requests)\b/gi, "network requests"],
  [/\bwhat\s+time\s+does\b/gi, "hours"],
  // A key by its name: pressed, not typed as text.
  [
    /\b(?:(?:press|hit|type)\s+(?:the\s+)?(?:enter|return|escape|esc|tab|space|backspace|delete|arrow|up|down|left|right|home|end)|(?:enter|return|escape|esc|tab|space|backspace|arrow|shift|ctrl|control|alt|cmd|command)\s+key)\b/gi,
    "press key",
  ],
  // Something that stops being so.
  [/\bno\s+longer\b|\bany\s*more\b/gi, "remove"],
  [/\badd\s+up\b/gi, "sum"],
  // Adding to the end of something appends to it.
  [/\b(?:to|at|onto)\s+the\s+(?:very\s+)?(?:end|bottom)\b/gi, "append"],
  // Asking what something says reads it ("what does the issue say"); saying something sends it.
  [/\b(what\s+(?:does|did|do)\b.{0,60}?\b)says?\b/gi, "$1read"],
  // A latitude and a longitude ("51.50, -0.12").
  [/(?:^|\s)-?\d{1,2}\.\d+\s*,\s*-?\d{1,3}\.\d+\b/g, " latitude longitude coordinates"],
  // Pulling a file gets it ("pull the latest config"); a pull request is another thing.
  [/^\s*pull\b(?!\s+requests?\b)/gi, "get"],
];

/** What a task or a tool does to its object: the classes of verbs that ranking compares. */
export type Action = "read" | "create" | "update" | "delete";

/**
 * Verbs (and question words, which ask to read) by the action they name. A word missing
 * here names none (`navigate`, `click`, `merge`): ranking then compares nothing.
 */
const ACTIONS: ReadonlyMap<string, Action> = new Map(
  (
    [
      [
        "read",
        "get list read retrieve find search query fetch show view see look lookup what which who whom whose how where when did does is are was were describe check count display print dump grab inspect examine",
      ],
      [
        "create",
        "create add post make write insert start leave put generate push send upload setup draft compose register",
      ],
      [
        "update",
        "update patch edit modify change rename set close reopen resolve replace toggle bump mark enable disable assign",
      ],
      ["delete", "delete remove erase drop forget clear trash discard purge wipe destroy"],
    ] as const
  ).flatMap(([action, words]) => words.split(" ").map((word) => [word, action])),
);
/** Question words: they ask to read, unless the task also names another action ("how do I delete…"). */
const QUESTION_ACTION: Action = "read";

/**
 * The action a task asks for: the first verb of creating, changing or deleting it names,
 * else reading when it asks a question or names a verb of reading.
 */
export function actionOfTask(words: readonly string[]): Action | undefined {
  const actions = words.flatMap((word) => ACTIONS.get(word) ?? []);
  return actions.find((action) => action !== QUESTION_ACTION) ?? actions[0];
}

/** The action a tool's name starts with (`create_issue`: create), if its first word names one. */
export function actionOfName(words: readonly string[]): Action | undefined {
  return words[0] !== undefined ? ACTIONS.get(words[0]) : undefined;
}

/** A noun's plural, as tools' names write it (repository → repositories, key → keys). */
function pluralOf(word: string): string {
  return /[^aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : /(?:s|x|ch|sh)$/.test(word) ? `${word}es` : `${word}s`;
}

/**
 * The words the vocabulary adds for a task's words, unstemmed; in the plural for a word
 * in the plural ("members" → users), so that they tell `get_users` from `get_user`.
 */
export function bridgedWordsOf(words: readonly string[]): Set<string> {
  return new Set(
    words.flatMap((word) => {
      const plural = word.endsWith("s") && !word.endsWith("ss") && stemmer(word) !== word;
      return synonymsOf(word).map((synonym) => (plural && !synonym.endsWith("s") ? pluralOf(synonym) : synonym));
    }),
  );
}

/**
 * Splits a tool's text into lower-case words: on anything but letters and digits, and a
 * word written in camelCase also into its parts (`listPullRequests` → listpullrequests
 * list pull requests; `GitHub` → github git hub), so that it is found written either way.
 */
export function splitWords(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).flatMap((token) => {
    if (token === "") return [];
    // An acronym ends before its last capital when a lower-case letter follows (`HTTPServer`); a
    // lookahead, not `([A-Z]+)([A-Z][a-z])`, whose backtracking made a run of capitals quadratic.
    const parts = token
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/([A-Z])(?=[A-Z][a-z])/g, "$1 ")
      .toLowerCase()
      .split(" ");
    return parts.length > 1 ? [token.toLowerCase(), ...parts] : parts;
  });
}

/**
 * Splits a task into lower-case words, a camelCase word staying whole: in a person's
 * words it is a proper name (`GitHub`, `TypeScript`), which the index holds whole too.
 */
export function splitTaskWords(task: string): string[] {
  return task
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

/** The index term of one word: undefined for a common word or a bare number. */
export function termOf(word: string): string | undefined {
  if (STOP_WORDS.has(word) || /^\d+$/.test(word)) return undefined;
  return stemmer(word);
}

/** Joins the phrases of PHRASES in a query, so that they reach SYNONYMS as one word. */
export function joinPhrases(query: string): string {
  return PHRASES.reduce(
    (text, [pattern, joined]) =>
      typeof joined === "string" ? text.replace(pattern, joined) : text.replace(pattern, joined),
    query,
  );
}

/** The terms one word of a query searches for: its own stem and its synonyms' stems. */
export function queryTermsOf(word: string): string[] {
  const synonyms = synonymsOf(word);
  const own = termOf(word);
  const terms = new Set([...(own !== undefined ? [own] : []), ...synonyms.map(stemmer)]);
  return [...terms];
}

/**
 * Distinct terms a task searches for at most: each costs a walk over the tools holding it,
 * and tasks people write bring at most 15; a client's query is bounded in characters, not
 * in words. A longer task keeps its most telling terms (taskQueryOf), so that a long
 * preamble does not push out the request that follows it.
 */
export const MAX_QUERY_TERMS = 32;

/** The terms a task searches for, each once, and for each term the task's words it stands for (by position). */
export type TaskQuery = { readonly terms: readonly string[]; readonly wordsOf: ReadonlyMap<string, readonly number[]> };

/**
 * The terms of a task's words (queryTermsOf), each once however many words bring it
 * ("show" and "view" both search for `get`), with the words each stands for: ranking
 * counts how many of the task's words a tool matches, not how many terms the vocabulary
 * expanded them into. At most MAX_QUERY_TERMS terms: when the task brings more, those
 * fewest tools hold (`toolsHolding`, the catalog's document frequency) are kept, a term no
 * tool holds coming last, ties by order in the task; without `toolsHolding`, the first.
 */
export function taskQueryOf(words: readonly string[], toolsHolding?: (term: string) => number): TaskQuery {
  const all = new Map<string, number[]>();
  words.forEach((word, position) => {
    for (const term of queryTermsOf(word)) {
      const positions = all.get(term);
      if (positions === undefined) all.set(term, [position]);
      else if (positions.at(-1) !== position) positions.push(position);
    }
  });
  if (all.size <= MAX_QUERY_TERMS) return { terms: [...all.keys()], wordsOf: all };
  const order = [...all.keys()];
  if (toolsHolding !== undefined) {
    const rarity = new Map(order.map((term) => [term, toolsHolding(term) || Number.POSITIVE_INFINITY]));
    order.sort((a, b) => rarity.get(a)! - rarity.get(b)!);
  }
  const kept = new Set(order.slice(0, MAX_QUERY_TERMS));
  const wordsOf = new Map([...all].filter(([term]) => kept.has(term)));
  return { terms: [...wordsOf.keys()], wordsOf };
}
