/**
 * Tool-name globs (`*`: any run of characters, `?`: one character), as filter-set keys
 * and the offload include/exclude lists use them. The name is chosen by the client, so
 * matching must not backtrack: a glob compiled to a regular expression such as
 * `^.*_.*_.*_x$` takes exponential time on a long name that almost matches.
 *
 * The matcher keeps one backtrack point, the last `*` seen: when what follows it fails,
 * that star swallows one more character and only the part after it is retried. Reaching
 * the next `*` drops the previous point (what came before it never needs to be matched
 * differently). Worst case O(name × glob), no recursion.
 *
 * A deny must also hold for the spellings an upstream may resolve to the same name
 * (case-insensitive lookups, compatibility forms such as fullwidth letters):
 * `matchesGlobLoosely` compares both sides folded (NFKC, then case-folded), still linear;
 * `deniesLoosely` adds the shortened names of long tools, whose hash changes with spelling.
 */
import { shortenedStart } from "../core/names";

/** True when `name` matches `glob` as a whole. */
export function matchesGlob(glob: string, name: string): boolean {
  let g = 0;
  let n = 0;
  // Where the last `*` was in the glob, and where in the name its run would end next.
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const c = glob.charCodeAt(g);
    if (g < glob.length && c === 0x2a /* * */) {
      star = g++;
      resume = n;
    } else if (g < glob.length && (c === 0x3f /* ? */ || c === name.charCodeAt(n))) {
      g++;
      n++;
    } else if (star >= 0) {
      // Let the last star swallow one more character and retry what follows it.
      g = star + 1;
      n = ++resume;
    } else return false;
  }
  while (g < glob.length && glob.charCodeAt(g) === 0x2a) g++;
  return g === glob.length;
}

/** True when `key` holds a wildcard, so that it is matched as a glob rather than by equality. */
export function isGlob(key: string): boolean {
  return key.includes("*") || key.includes("?");
}

/** How many characters of `glob` are literal: the more, the more specific the glob. */
export function literalLength(glob: string): number {
  let count = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charCodeAt(i);
    if (c !== 0x2a && c !== 0x3f) count++;
  }
  return count;
}

/**
 * `text` folded as a loose name lookup may take it: compatibility-normalized (NFKC: fullwidth
 * `Ａ` is `A`, `ﬁ` is `fi`) and case-folded (lower, upper, lower again, so that `ß` is `ss`
 * and `ſ`, `K` (Kelvin) and `ı` meet their ASCII letters), then normalized again. Linear time.
 *
 * @example
 * foldName("ＤＥＬＥＴＥ_All") // "delete_all"
 */
export function foldName(text: string): string {
  return text.normalize("NFKC").toLowerCase().toUpperCase().toLowerCase().normalize("NFKC");
}

/**
 * True when `name` matches `glob` in any spelling a loose lookup treats as the same
 * (both folded by `foldName`): what a deny pattern must hold for.
 *
 * @example
 * matchesGlobLoosely("gh___delete_*", "gh___DELETE_repo") // true
 */
export function matchesGlobLoosely(glob: string, name: string): boolean {
  return matchesGlob(foldName(glob), foldName(name));
}

/**
 * True when the deny pattern `glob` holds for `name`: `matchesGlobLoosely`, and also when
 * `glob` is a shortened name (core/names.ts) whose visible start, folded, meets the name's
 * (a shortened name's start: one starts the other; a name not shortened, which ligatures
 * can make of a long one: its folded form starts with it). A shortened name's hash is of
 * the whole name as spelled, so another spelling of a denied long tool, which a loose
 * lookup resolves to it, has another hash: its start is what can be judged. This may also
 * deny another tool whose name starts the same (55 characters and more).
 *
 * @example
 * deniesLoosely(`crm___${"a".repeat(55)}_1234abcd`, `crm___${"A".repeat(55)}_99990000`) // true
 */
export function deniesLoosely(glob: string, name: string): boolean {
  if (matchesGlobLoosely(glob, name)) return true;
  const globStart = /[*?]/.test(glob) ? undefined : shortenedStart(glob);
  if (globStart === undefined) return false;
  const denied = foldName(globStart);
  // A name spelled shorter (ligatures that NFKC expands) may not be shortened at all: its whole folded form is judged.
  const nameStart = shortenedStart(name);
  const judged = foldName(nameStart ?? name);
  return judged.startsWith(denied) || (nameStart !== undefined && denied.startsWith(judged));
}
