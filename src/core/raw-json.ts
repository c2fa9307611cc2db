/**
 * Raw JSON spans: read the structure of a JSON text without re-serialising it.
 *
 * The gateway must relay upstream bytes it does not change *as bytes* (tool schemas
 * keep `1e3`, `10.0`, `-0`, integers past 2^53, key order and escapes). `JSON.parse`
 * followed by `JSON.stringify` loses all of those, so the relay path locates members
 * and elements as [start, end) ranges of the original text and splices only what it
 * rewrites (a tool name, a request id).
 */
import type { JsonRpcId } from "./jsonrpc";

/** A value inside `text`, as the half-open range [start, end). */
export type Span = { readonly start: number; readonly end: number };

/** One member of an object: its decoded key, where the key starts, and the span of its value. */
export type Member = { readonly key: string; readonly keyStart: number; readonly value: Span };

/** Thrown for text that is not JSON; callers at the boundary turn it into a parse error. */
export class RawJsonError extends Error {
  override readonly name = "RawJsonError";
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The first offset from `at` that is not JSON whitespace. */
export function skipWhitespace(text: string, at: number): number {
  while (at < text.length && isWhitespace(text.charCodeAt(at))) at++;
  return at;
}

/** The rest of a string with escapes in it, up to and past its closing quote (runs without escapes in one step). */
const STRING_REST = /[^"\\]*(?:\\[\s\S][^"\\]*)*"/y;

/**
 * The end of the string whose opening quote is at `at`: the next quote, found with
 * `indexOf`, unless a backslash precedes it; then a sticky expression reads the rest.
 */
export function skipString(text: string, at: number): number {
  const quote = text.indexOf('"', at + 1);
  if (quote < 0) throw new RawJsonError(`unterminated string at offset ${at}`);
  if (text.charCodeAt(quote - 1) !== 0x5c) return quote + 1;
  STRING_REST.lastIndex = at + 1;
  if (!STRING_REST.test(text)) throw new RawJsonError(`unterminated string at offset ${at}`);
  return STRING_REST.lastIndex;
}

/**
 * Returns the end offset of the value starting at `at` (which must not be whitespace).
 * The text is taken to be JSON (as every message is once read): containers are matched
 * by their brackets, strings by their quotes, and nothing in between is validated.
 */
export function skipValue(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) return skipString(text, at);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === 0x22) i = skipString(text, i) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new RawJsonError(`unterminated ${c === 0x7b ? "object" : "array"} at offset ${at}`);
  }
  let i = at;
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || isWhitespace(d)) break;
    i++;
  }
  if (i === at) throw new RawJsonError(`unexpected character at offset ${at}`);
  return i;
}

/** The span of the single top-level value of `text` (surrounding whitespace excluded). */
export function rootSpan(text: string): Span {
  const start = skipWhitespace(text, 0);
  if (start >= text.length) throw new RawJsonError("empty JSON text");
  const end = skipValue(text, start);
  if (skipWhitespace(text, end) !== text.length) throw new RawJsonError(`trailing characters at offset ${end}`);
  return { start, end };
}

/** The members of the object at `span`, in document order. */
export function members(text: string, span: Span): Member[] {
  const out: Member[] = [];
  eachMember(text, span.start, (key, start, keyStart) => {
    const end = skipValue(text, start);
    out.push({ key, keyStart, value: { start, end } });
    return end;
  });
  return out;
}

/** The elements of the array at `span`, in order. */
export function elements(text: string, span: Span): Span[] {
  const out: Span[] = [];
  eachElement(text, span.start, (_index, start) => {
    const end = skipValue(text, start);
    out.push({ start, end });
    return end;
  });
  return out;
}

/**
 * The span of member `key` of the object at `span`, or undefined. A key written twice
 * reads as its last member, as JSON.parse (and so a client) reads it.
 */
export function member(text: string, span: Span, key: string): Span | undefined {
  return members(text, span).findLast((m) => m.key === key)?.value;
}

/** Parses the value at `span` (for small values: ids, names, cursors). */
export function parseSpan(text: string, span: Span): unknown {
  return JSON.parse(text.slice(span.start, span.end));
}

/** A replacement of the range `span` with `raw` text. */
export type Splice = { readonly span: Span; readonly raw: string };

/** Applies non-overlapping splices to `text`, leaving every other byte as it was. */
export function splice(text: string, edits: readonly Splice[]): string {
  const sorted = [...edits].sort((a, b) => a.span.start - b.span.start);
  let out = "";
  let at = 0;
  for (const edit of sorted) {
    out += text.slice(at, edit.span.start) + edit.raw;
    at = edit.span.end;
  }
  return out + text.slice(at);
}

/** Replaces the top-level `id` of a message text, leaving every other byte alone. */
export function withMessageId(text: string, id: JsonRpcId): string {
  const span = member(text, rootSpan(text), "id");
  return span ? splice(text, [{ span, raw: JSON.stringify(id) }]) : text;
}

/** Follows object keys from the root; undefined when any step is missing or not an object. */
export function pathSpan(text: string, keys: readonly string[], from: Span = rootSpan(text)): Span | undefined {
  let span: Span | undefined = from;
  for (const key of keys) {
    if (!span || text.charCodeAt(span.start) !== 0x7b) return undefined;
    span = member(text, span, key);
  }
  return span;
}

/** The splice that removes member `key` (with its separating comma) from the object at `span`. */
export function removeMemberSplice(text: string, span: Span, key: string): Splice | undefined {
  const all = members(text, span);
  const index = all.findIndex((m) => m.key === key);
  if (index < 0) return undefined;
  // With the comma before it; the first member takes the comma after it instead.
  if (index > 0) return { span: { start: all[index - 1]!.value.end, end: all[index]!.value.end }, raw: "" };
  const end = all.length > 1 ? all[1]!.keyStart : all[0]!.value.end;
  return { span: { start: all[0]!.keyStart, end }, raw: "" };
}

/** The splice that adds member `key` with raw value `raw` at the end of the object at `span`. */
export function appendMemberSplice(text: string, span: Span, key: string, raw: string): Splice {
  const empty = members(text, span).length === 0;
  const at = span.end - 1; // the closing brace
  return { span: { start: at, end: at }, raw: `${empty ? "" : ","}${JSON.stringify(key)}:${raw}` };
}

/**
 * Walks the object at `at` in one pass: `visit` gets each member's decoded key, where
 * its value starts (and where its key starts), and returns where that value ends (having read it or skipped it).
 * Returns the end of the object.
 */
export function eachMember(
  text: string,
  at: number,
  visit: (key: string, valueStart: number, keyStart: number) => number,
): number {
  if (text.charCodeAt(at) !== 0x7b) throw new RawJsonError(`expected an object at offset ${at}`);
  let i = skipWhitespace(text, at + 1);
  if (text.charCodeAt(i) === 0x7d) return i + 1;
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) throw new RawJsonError(`expected a key at offset ${i}`);
    const keyStart = i;
    const keyEnd = skipString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) throw new RawJsonError(`expected ':' at offset ${i}`);
    i = skipWhitespace(text, visit(key, skipWhitespace(text, i + 1), keyStart));
    const c = text.charCodeAt(i);
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) throw new RawJsonError(`expected ',' or '}' at offset ${i}`);
    i = skipWhitespace(text, i + 1);
  }
}

/** Walks the array at `at` in one pass, as `eachMember` does an object's members (`visit` gets each element's index). */
export function eachElement(text: string, at: number, visit: (index: number, valueStart: number) => number): number {
  if (text.charCodeAt(at) !== 0x5b) throw new RawJsonError(`expected an array at offset ${at}`);
  let i = skipWhitespace(text, at + 1);
  if (text.charCodeAt(i) === 0x5d) return i + 1;
  for (let index = 0; ; index++) {
    i = skipWhitespace(text, visit(index, i));
    const c = text.charCodeAt(i);
    if (c === 0x5d) return i + 1;
    if (c !== 0x2c) throw new RawJsonError(`expected ',' or ']' at offset ${i}`);
    i = skipWhitespace(text, i + 1);
  }
}
