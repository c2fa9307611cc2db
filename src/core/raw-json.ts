/**
 * Raw JSON spans: read the structure of a JSON text without re-serialising it.
 *
 * The gateway must relay upstream bytes it does not change *as bytes* (tool schemas
 * keep `1e3`, `10.0`, `-0`, integers past 2^53, key order and escapes). `JSON.parse`
 * followed by `JSON.stringify` loses all of those, so the relay path locates members
 * and elements as [start, end) ranges of the original text and splices only what it
 * rewrites (a tool name, a request id).
 */

/** A value inside `text`, as the half-open range [start, end). */
export type Span = { readonly start: number; readonly end: number };

/** One member of an object: its decoded key, where the key starts, and the span of its value. */
export type Member = { readonly key: string; readonly keyStart: number; readonly value: Span };

/** Thrown for text that is not JSON; callers at the boundary turn it into a parse error. */
export class RawJsonError extends Error {
  override readonly name = "RawJsonError";
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

function skipWhitespace(text: string, at: number): number {
  while (at < text.length && WHITESPACE.has(text.charCodeAt(at))) at++;
  return at;
}

function skipString(text: string, at: number): number {
  // `at` is on the opening quote.
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++; // backslash: skip the escaped character
    else if (c === 0x22) return i + 1;
  }
  throw new RawJsonError(`unterminated string at offset ${at}`);
}

/** Returns the end offset of the value starting at `at` (which must not be whitespace). */
function skipValue(text: string, at: number): number {
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
    if (d === 0x2c || d === 0x7d || d === 0x5d || WHITESPACE.has(d)) break;
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
  if (text.charCodeAt(span.start) !== 0x7b) throw new RawJsonError(`expected an object at offset ${span.start}`);
  const out: Member[] = [];
  let at = skipWhitespace(text, span.start + 1);
  if (text.charCodeAt(at) === 0x7d) return out;
  for (;;) {
    if (text.charCodeAt(at) !== 0x22) throw new RawJsonError(`expected a key at offset ${at}`);
    const keyStart = at;
    const keyEnd = skipString(text, at);
    const key = JSON.parse(text.slice(at, keyEnd)) as string;
    at = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(at) !== 0x3a) throw new RawJsonError(`expected ':' at offset ${at}`);
    const valueStart = skipWhitespace(text, at + 1);
    const valueEnd = skipValue(text, valueStart);
    out.push({ key, keyStart, value: { start: valueStart, end: valueEnd } });
    at = skipWhitespace(text, valueEnd);
    const c = text.charCodeAt(at);
    if (c === 0x7d) return out;
    if (c !== 0x2c) throw new RawJsonError(`expected ',' or '}' at offset ${at}`);
    at = skipWhitespace(text, at + 1);
  }
}

/** The elements of the array at `span`, in order. */
export function elements(text: string, span: Span): Span[] {
  if (text.charCodeAt(span.start) !== 0x5b) throw new RawJsonError(`expected an array at offset ${span.start}`);
  const out: Span[] = [];
  let at = skipWhitespace(text, span.start + 1);
  if (text.charCodeAt(at) === 0x5d) return out;
  for (;;) {
    const end = skipValue(text, at);
    out.push({ start: at, end });
    at = skipWhitespace(text, end);
    const c = text.charCodeAt(at);
    if (c === 0x5d) return out;
    if (c !== 0x2c) throw new RawJsonError(`expected ',' or ']' at offset ${at}`);
    at = skipWhitespace(text, at + 1);
  }
}

/** The span of member `key` of the object at `span`, or undefined. */
export function member(text: string, span: Span, key: string): Span | undefined {
  return members(text, span).find((m) => m.key === key)?.value;
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
