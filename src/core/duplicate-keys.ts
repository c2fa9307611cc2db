/**
 * Duplicate keys and nesting depth of a client's message, found in one pass over its text.
 *
 * JSON.parse keeps the last of two equal keys, but the gateway relays the client's bytes
 * and an upstream may act on the first: policy would judge one value (a tool name, a
 * completion's `ref.name`) while another runs. So a key twice in any object of a message
 * is refused, at any depth. The scan is linear in the text (each character is looked at
 * once, each key decoded once) and iterative; its stack holds one frame per open
 * container and is bounded by `MAX_MESSAGE_DEPTH`, so a 10 MB body of brackets neither
 * recurses nor keeps millions of frames. Deeper messages are refused: nothing the gateway
 * or an upstream does with a message needs more, and walks over deeper values elsewhere
 * (serialisers, redaction) would have to be bounded one by one.
 */
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-chars";

/** Containers (objects and arrays) a client message may nest; the root is level 1. */
export const MAX_MESSAGE_DEPTH = 128;

/** Characters of a duplicated key quoted back in an error. */
const MAX_QUOTED_KEY_CHARS = 64;

/** Why a message's structure is refused. */
export type StructureProblem =
  | { readonly reason: "duplicate-key"; readonly key: string; readonly offset: number }
  | { readonly reason: "too-deep"; readonly offset: number };

/** The end offset (exclusive) of the string opening at `at`, and whether it holds an escape. */
function scanString(text: string, at: number): { end: number; escaped: boolean } {
  let escaped = false;
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      escaped = true;
      i++;
    } else if (c === QUOTE) return { end: i + 1, escaped };
  }
  return { end: text.length, escaped };
}

/**
 * The structural problem of `text`: nesting past `MAX_MESSAGE_DEPTH` anywhere in it, else
 * the first key twice in one object (compared after unescaping, so `"a"` and `"\u0061"`
 * are the same). Undefined when there is none. It reads the text before anything parses
 * it (JSON.parse of 4 MiB of brackets takes about 100 MiB), so a key found twice does not
 * end the scan: the nesting after it is still looked at. On text that is not JSON the
 * depth is still right; a duplicate key may then be misread, and only counts once the
 * text has parsed.
 *
 * @example
 * const problem = structureProblem('{"a":{"b":1,"b":2}}'); // { reason: "duplicate-key", key: "b", ... }
 */
export function structureProblem(text: string): StructureProblem | undefined {
  // One frame per open container: the keys seen so far for an object, null for an array.
  const frames: (Set<string> | null)[] = [];
  let expectKey = false;
  let duplicate: StructureProblem | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const { end, escaped } = scanString(text, i);
      if (expectKey && duplicate === undefined) {
        const raw = text.slice(i + 1, end - 1);
        const key = escaped ? parsedKey(raw) : raw;
        const seen = frames[frames.length - 1]!;
        if (key !== undefined && seen.has(key)) duplicate = { reason: "duplicate-key", key, offset: i };
        else if (key !== undefined) seen.add(key);
      }
      expectKey = false;
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (frames.length >= MAX_MESSAGE_DEPTH) return { reason: "too-deep", offset: i };
      frames.push(c === OPEN_OBJECT ? new Set() : null);
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      frames.pop();
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = frames.length > 0 && frames[frames.length - 1] !== null;
    }
  }
  return duplicate;
}

/** A key's text with escapes, unescaped; undefined when its escapes are not JSON's (text not yet parsed). */
function parsedKey(raw: string): string | undefined {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/** The sentence a client reads for `problem`. */
export function structureProblemText(problem: StructureProblem): string {
  switch (problem.reason) {
    case "duplicate-key": {
      const quoted =
        problem.key.length > MAX_QUOTED_KEY_CHARS ? `${problem.key.slice(0, MAX_QUOTED_KEY_CHARS)}…` : problem.key;
      return `Invalid Request: the key ${JSON.stringify(quoted)} appears twice in one object (at offset ${problem.offset}); send each key once`;
    }
    case "too-deep":
      return `Invalid Request: the message nests objects and arrays deeper than ${MAX_MESSAGE_DEPTH} levels (at offset ${problem.offset})`;
  }
}
