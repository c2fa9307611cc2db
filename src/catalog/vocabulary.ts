/**
 * The words of the search index: how text becomes terms (names split on `_ - .` and
 * camelCase, lower case, common words dropped, Porter stems), and the bridge from the
 * words people say to the words tools use ("bookmark" → star, "inbox" → notifications).
 * The same terms on both sides: a tool's text when indexed, the caller's task when searched.
 */
import { stemmer } from "stemmer";

/** Words that say nothing about which tool serves a task. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  ("a an the to of for in on at by with from into about as and or but not no my me i we us our you your it its this that these those " +
    "is are was were be been being do does did can could would should will shall may might must please just also all any some there here " +
    "what which who whom whose when where why how tool tools using use via")
    .split(" "),
);

/**
 * What users say, and the words tools use for it. Keys are single lower-case words as
 * typed (before stemming); phrases are written as one word (see PHRASES).
 */
const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  shipit: ["merge"],
  ship: ["merge", "deploy"],
  land: ["merge"],
  bookmark: ["star"],
  favorite: ["star"],
  favourite: ["star"],
  like: ["star"],
  inbox: ["notification"],
  notify: ["notification"],
  alerts: ["notification"],
  unread: ["notification"],
  bug: ["issue"],
  bugs: ["issue"],
  ticket: ["issue"],
  tickets: ["issue"],
  pr: ["pull", "request"],
  prs: ["pull", "request"],
  mr: ["merge", "request"],
  close: ["update", "state", "close"],
  reopen: ["update", "state"],
  rename: ["update", "edit", "move"],
  change: ["update", "edit"],
  modify: ["update", "edit"],
  edit: ["update", "edit"],
  make: ["create"],
  new: ["create"],
  add: ["create", "add", "sum"],
  open: ["create", "open", "navigate"],
  write: ["create", "write"],
  remove: ["delete", "remove"],
  erase: ["delete"],
  drop: ["delete"],
  show: ["get", "list", "read"],
  see: ["get", "list", "read"],
  view: ["get", "read"],
  display: ["get", "list"],
  fetch: ["get", "read"],
  look: ["search", "get"],
  find: ["search", "find"],
  lookup: ["search", "get"],
  reviewed: ["review"],
  reviewer: ["review"],
  approve: ["review", "approve"],
  teammate: ["user", "member"],
  colleague: ["user", "member"],
  people: ["user", "member"],
  member: ["user", "member"],
  members: ["user", "member"],
  account: ["user", "whoami"],
  logged: ["whoami", "user"],
  person: ["user"],
  dm: ["message", "send"],
  tell: ["message", "send", "post"],
  say: ["message", "post"],
  reply: ["reply", "thread"],
  website: ["navigate", "browser", "page"],
  site: ["navigate", "browser", "page"],
  webpage: ["navigate", "browser", "page"],
  url: ["navigate", "url"],
  visit: ["navigate"],
  go: ["navigate"],
  press: ["click", "key", "press"],
  tap: ["click"],
  enter: ["type", "fill"],
  picture: ["screenshot", "image"],
  capture: ["screenshot"],
  repo: ["repository", "repo"],
  repos: ["repository", "repo"],
  project: ["repository", "project"],
  doc: ["page", "document"],
  docs: ["page", "document"],
  wiki: ["page"],
  note: ["page", "comment"],
  ci: ["workflow", "run", "action"],
  pipeline: ["workflow", "run"],
  build: ["workflow", "run"],
  crash: ["error", "issue", "event"],
  exception: ["error", "issue", "event"],
  pay: ["payment"],
  charge: ["payment", "charge"],
  bill: ["invoice"],
  db: ["database", "table", "sql"],
  sql: ["sql", "query", "execute"],
  rain: ["weather", "forecast"],
  sunny: ["weather", "forecast"],
  temperature: ["weather", "forecast"],
  tomorrow: ["forecast"],
  codebase: ["code"],
  function: ["code"],
  remember: ["memory", "observation", "entity"],
  forget: ["delete", "entity"],
  fact: ["observation"],
  facts: ["observation"],
  record: ["create", "observation"],
  link: ["relation", "link"],
  drive: ["directions", "driving"],
  walk: ["directions", "walking"],
  car: ["directions", "driving"],
  far: ["distance"],
  hours: ["place", "details"],
  phone: ["place", "details"],
  restaurant: ["place"],
  folder: ["directory", "folder"],
  folders: ["directory", "folder"],
  biggest: ["size"],
  largest: ["size"],
  smallest: ["size"],
  save: ["write", "create"],
  paragraph: ["block"],
  append: ["add", "children", "block"],
  label: ["update", "label"],
  key: ["dsn", "key"],
  generate: ["create"],
  list: ["list", "find"],
  exist: ["find", "list"],
  today: ["recent", "history"],
  watch: ["subscription", "watch"],
  subscribe: ["subscription", "subscribe"],
};

/**
 * Multi-word phrases people say, and shapes of words (a URL, a file path, a #channel),
 * rewritten into words the synonyms and tools know before the query is split.
 */
const PHRASES: readonly (readonly [RegExp, string])[] = [
  [/\bship\s+it\b/gi, "shipit"],
  [/\b(?:who|which\s+\w+)\s+am\s+i\b/gi, "whoami self"],
  [/\brequest(?:ed|s)?\s+changes\b/gi, "review"],
  [/\b(?:https?:\/\/)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|co|edu|gov)\b\S*/gi, "$& url website"],
  [/(?:^|\s)\S*\/\S+|\b[\w-]+\.(?:txt|md|json|ya?ml|csv|pdf|png|jpe?g|js|ts|py|env|log|toml)\b/gi, "$& file"],
  [/(?:^|\s)#([a-z0-9_-]+)/gi, " $1 channel"],
];

/**
 * Splits text into lower-case words: on anything but letters and digits, and between
 * a lower-case letter or digit and an upper-case one (`listPullRequests` → list pull requests).
 */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
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
  return PHRASES.reduce((text, [pattern, joined]) => text.replace(pattern, joined), query);
}

/** The terms one word of a query searches for: its own stem and its synonyms' stems. */
export function queryTermsOf(word: string): string[] {
  const synonyms = SYNONYMS[word] ?? [];
  const own = termOf(word);
  const terms = new Set([...(own !== undefined ? [own] : []), ...synonyms.map(stemmer)]);
  return [...terms];
}
