/**
 * `retain` read off JSON text: the projection of retain.ts, made in one pass over the text
 * of a value instead of over its parsed form, so a broad answer is never built whole.
 * Members and elements no pointer reaches are skipped by their brackets and quotes
 * (core/raw-json.ts); only retained values are parsed, each from its own slice; keys are
 * compared where they stand in the text, without being cut out of it.
 *
 * It covers the path where retain succeeds. Wherever retain.ts would fail (a pointer
 * that does not resolve, a value to descend into that is not a container), and where
 * text and parsed form could disagree (a key twice in one object: `JSON.parse` keeps the
 * last value at the first key's place), it gives up (`undefined`); the caller then runs
 * retain.ts on the parsed value, which fails, or succeeds, exactly as before.
 *
 * `valuesAtText` reads the values variants' tests compare (apply-filter.ts's `chooseRule`)
 * off the same text, as `JSON.parse` would give them.
 *
 * The text must be JSON already read once (a message read from an upstream is parsed
 * whole when it arrives): skipped parts are not validated again. Recursion follows the
 * pointers, not the text: it is as deep as the longest pointer.
 */
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, QUOTE } from "../../core/json-chars";
import { eachElement, eachMember, RawJsonError, skipString, skipValue, skipWhitespace } from "../../core/raw-json";
import type { Found } from "./apply-filter";
import { setOwn } from "../../core/jsonrpc";
import { indexOfName, MAX_INDEXED_NAME_LENGTH, NONE, SEVERAL, type Branch, type Node, WILDCARD } from "./retain-tree";

/** Thrown inside the walk where retain.ts would decide otherwise; caught at the top. */
class GiveUp extends Error {
  override readonly name = "GiveUp";
}

const MISSING: unique symbol = Symbol("missing");

/** A retained value from its slice: strings without escapes and literals are read without `JSON.parse`. */
function parseSlice(text: string, start: number, end: number): unknown {
  const c = text.charCodeAt(start);
  if (c === 0x22) {
    const inner = text.slice(start + 1, end - 1);
    return inner.includes("\\") ? JSON.parse(text.slice(start, end)) : inner;
  }
  if (c === 0x74) return true;
  if (c === 0x66) return false;
  if (c === 0x6e) return null;
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return Number(text.slice(start, end));
  return JSON.parse(text.slice(start, end));
}

/** The index in `node.names` of the key whose text is `text[from, to)` (no escapes in it), or -1. */
function nameAt(text: string, from: number, to: number, node: Branch): number {
  const length = to - from;
  const names = node.names;
  if (length <= MAX_INDEXED_NAME_LENGTH) {
    const only = node.byLength[length]!;
    if (only === NONE) return -1;
    if (only !== SEVERAL) return text.startsWith(names[only]!, from) ? only : -1;
  }
  // Several names of this length, or a long key: compared in place among a few names; among
  // more (MAX_NAMES_COMPARED), one lookup (a wide rule's names times every key of a broad answer is not linear).
  if (node.byName !== undefined) return node.byName.get(text.slice(from, to)) ?? -1;
  for (let index = 0; index < names.length; index++) {
    const name = names[index]!;
    if (name.length === length && text.startsWith(name, from)) return index;
  }
  return -1;
}

/** After a member or element: the offset past its comma, or -1 at the container's closing bracket. */
function next(text: string, at: number, close: number): number {
  const i = text.charCodeAt(at) === COMMA ? at : skipWhitespace(text, at);
  const c = text.charCodeAt(i);
  if (c === COMMA) return skipWhitespace(text, i + 1);
  if (c === close) return -1;
  throw new RawJsonError(`expected ',' at offset ${i}`);
}

/** Where the value of the member whose key ends (past its closing quote) at `keyEnd` starts. */
function valueStart(text: string, keyEnd: number): number {
  const colon = text.charCodeAt(keyEnd) === COLON ? keyEnd : skipWhitespace(text, keyEnd);
  return skipWhitespace(text, colon + 1);
}

class Projection {
  /** Where the value last projected ends. */
  end = 0;
  /** The next backslash at or after where keys were last read (Infinity: none left). */
  private backslash = -1;

  constructor(private readonly text: string) {}

  /**
   * Whether `text[from, to)` holds a backslash. Keys are read in increasing order, so the
   * next backslash is searched again only once passed: every character is searched once.
   */
  private escapeBefore(from: number, to: number): boolean {
    if (this.backslash < from) {
      const found = this.text.indexOf("\\", from);
      this.backslash = found < 0 ? Infinity : found;
    }
    return this.backslash < to;
  }

  value(at: number, node: Node, strict: boolean): unknown {
    const text = this.text;
    if (node === true) {
      const end = skipValue(text, at);
      this.end = end;
      return parseSlice(text, at, end);
    }
    const c = text.charCodeAt(at);
    if (c === 0x7b) return this.object(at, node, strict);
    if (c === 0x5b) return this.array(at, node, strict);
    if (strict) throw new GiveUp();
    this.end = skipValue(text, at);
    return MISSING;
  }

  private object(at: number, node: Branch, strict: boolean): Record<string, unknown> {
    const text = this.text;
    const { names, subs, wildcard } = node;
    const out: Record<string, unknown> = {};
    // Names met so far: a bit each for the first 31 (no allocation per object), a set past them.
    let metBits = 0;
    let metMore: Set<number> | undefined;
    const others = wildcard === undefined ? undefined : new Set<string>();
    let found = 0;
    let i = skipWhitespace(text, at + 1);
    if (text.charCodeAt(i) === 0x7d) {
      this.end = i + 1;
      i = -1;
    }
    while (i >= 0) {
      // Most keys have no escapes: their closing quote is the next quote, and they are compared in place.
      let close = text.indexOf('"', i + 1);
      if (close < 0) throw new RawJsonError(`unterminated key at offset ${i}`);
      let decoded: string | undefined;
      if (this.escapeBefore(i + 1, close)) {
        close = skipString(text, i) - 1;
        decoded = JSON.parse(text.slice(i, close + 1)) as string;
      }
      const keyEnd = close + 1;
      const index = decoded !== undefined ? indexOfName(node, decoded) : nameAt(text, i + 1, close, node);
      const start =
        text.charCodeAt(keyEnd) === COLON && text.charCodeAt(keyEnd + 1) > 0x20 ? keyEnd + 1 : valueStart(text, keyEnd);
      let end: number;
      if (index >= 0) {
        if (index < 31) {
          if (metBits & (1 << index)) throw new GiveUp();
          metBits |= 1 << index;
        } else {
          metMore ??= new Set();
          if (metMore.has(index)) throw new GiveUp();
          metMore.add(index);
        }
        const required = index < node.required;
        if (required) found++;
        const picked = this.value(start, subs[index]!, strict && required);
        if (picked !== MISSING) setOwn(out, names[index]!, picked);
        end = this.end;
      } else if (others) {
        const key = decoded ?? text.slice(i + 1, close);
        if (others.has(key)) throw new GiveUp();
        others.add(key);
        // A member named "*" is named by the pointer too: strict there, as in retain.ts.
        const picked = this.value(start, wildcard!, strict && key === WILDCARD);
        if (picked !== MISSING) setOwn(out, key, picked);
        end = this.end;
      } else if (text.charCodeAt(start) === QUOTE) {
        end = text.indexOf('"', start + 1) + 1;
        if (end === 0 || text.charCodeAt(end - 2) === BACKSLASH) end = skipString(text, start);
      } else end = skipValue(text, start);
      // Compact JSON: the next key right after the comma.
      if (text.charCodeAt(end) === COMMA && text.charCodeAt(end + 1) === QUOTE) {
        i = end + 1;
        continue;
      }
      i = next(text, end, CLOSE_OBJECT);
      if (i < 0) this.end = skipWhitespace(text, end) + 1;
    }
    if (strict && found !== node.required) throw new GiveUp();
    return out;
  }

  private array(at: number, node: Branch, strict: boolean): unknown[] {
    const text = this.text;
    const { names, subs, wildcard } = node;
    const out: unknown[] = [];
    let found = 0;
    let i = skipWhitespace(text, at + 1);
    if (text.charCodeAt(i) === 0x5d) {
      this.end = i + 1;
      i = -1;
    }
    for (let index = 0; i >= 0; index++) {
      const nameIndex = names.length > 0 ? indexOfName(node, String(index)) : -1;
      const named = nameIndex < 0 ? undefined : nameIndex;
      const sub = named === undefined ? wildcard : subs[named]!;
      let end: number;
      if (sub === undefined) end = skipValue(text, i);
      else {
        const required = named !== undefined && named < node.required;
        if (required) found++;
        const picked = this.value(i, sub, strict && required);
        if (picked !== MISSING) out.push(picked);
        end = this.end;
      }
      i = next(text, end, CLOSE_ARRAY);
      if (i < 0) this.end = skipWhitespace(text, end) + 1;
    }
    // A token that is no index of this array (past its end, "01", a name) resolves to nothing.
    if (strict && found !== node.required) throw new GiveUp();
    return out;
  }
}

/** What `retainText` read: the retained value, and where the text's value ends. */
export type RetainedText = { readonly value: unknown; readonly end: number };

/**
 * The retained part of the JSON value at `start` of `text`, and where that value ends;
 * `undefined` where retain.ts must decide (see the header). `node` comes from
 * retain-tree.ts, of a tree that is not `true` (keeping everything needs no walk).
 */
export function retainText(text: string, start: number, node: Branch): RetainedText | undefined {
  const projection = new Projection(text);
  try {
    const value = projection.value(start, node, true);
    return { value, end: projection.end };
  } catch (error) {
    // RangeError: pointers as deep as the stack; retain.ts reports that in its own words.
    if (error instanceof GiveUp || error instanceof RangeError) return undefined;
    throw error;
  }
}

/** The places pointers lead, as a tree of tokens: the pointers (by index) that end at each. */
type Place = { readonly ends: number[]; readonly all: number[]; readonly next: Map<string, Place> };

const PLACES = new WeakMap<readonly (readonly string[])[], Place>();

function placesOf(pointers: readonly (readonly string[])[]): Place {
  let root = PLACES.get(pointers);
  if (root !== undefined) return root;
  root = { ends: [], all: [], next: new Map() };
  for (const [index, tokens] of pointers.entries()) {
    let place = root;
    place.all.push(index);
    for (const token of tokens) {
      let sub = place.next.get(token);
      if (sub === undefined) {
        sub = { ends: [], all: [], next: new Map() };
        place.next.set(token, sub);
      }
      place = sub;
      place.all.push(index);
    }
    place.ends.push(index);
  }
  PLACES.set(pointers, root);
  return root;
}

/** Reads the values at `place` and below from the value at `at` into `found`; returns where the value ends. */
function readPlaces(text: string, at: number, place: Place, found: Found[]): number {
  const c = text.charCodeAt(at);
  let end: number;
  if (place.next.size > 0 && c === 0x7b)
    end = eachMember(text, at, (key, start) => {
      const sub = place.next.get(key);
      if (sub === undefined) return skipValue(text, start);
      // A key twice: JSON.parse keeps the last value, so what an earlier one gave is forgotten.
      for (const index of sub.all) found[index] = undefined;
      return readPlaces(text, start, sub, found);
    });
  else if (place.next.size > 0 && c === 0x5b)
    end = eachElement(text, at, (index, start) => {
      const sub = place.next.get(String(index)); // only canonical indices ("0", never "01") name an element
      return sub === undefined ? skipValue(text, start) : readPlaces(text, start, sub, found);
    });
  else end = skipValue(text, at);
  if (place.ends.length > 0) {
    const value: unknown = JSON.parse(text.slice(at, end));
    for (const index of place.ends) found[index] = { value };
  }
  return end;
}

/**
 * The values where `pointers` (as tokens) lead from the JSON value at `start` of `text`,
 * as JSON Pointer resolution on the parsed value finds them (a key twice: the last), in one
 * pass over the value however many pointers there are. The text must be JSON already read once.
 */
export function valuesAtText(text: string, start: number, pointers: readonly (readonly string[])[]): Found[] {
  const found: Found[] = pointers.map(() => undefined);
  readPlaces(text, start, placesOf(pointers), found);
  return found;
}

export type { Branch as PreparedKeep };
