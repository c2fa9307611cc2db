/**
 * Compact mode's list: each tool's description cut to its first sentence within a
 * character budget, and its schemas without what is there for people rather than for
 * validation (descriptions, titles, examples, comments, `$schema`) and without root
 * definitions nothing refers to. Only the tools
 * this shortens are re-serialised; every other byte of the answer stays as it came.
 */
import { isObject } from "../../core/jsonrpc";
import { elements, pathSpan, splice, type Splice } from "../../core/raw-json";

/** The longest description compact mode lists, in characters (a cut ends in "…"). */
export const COMPACT_DESCRIPTION_MAX_CHARS = 160;
/** Nesting a schema is walked to; deeper parts are kept as they are. */
const MAX_SCHEMA_DEPTH = 32;

/**
 * The first sentence of `text` within `max` characters: up to the first ". ", "! ", "? "
 * or line break; longer than `max`, cut at the last space before it with "…".
 *
 * @example
 * firstSentence("Create an issue. Needs a token.") // "Create an issue."
 */
export function firstSentence(text: string, max = COMPACT_DESCRIPTION_MAX_CHARS): string {
  const trimmed = text.trim();
  const end = trimmed.search(/[.!?](\s|$)|\n/);
  const sentence = (end < 0 ? trimmed : trimmed.slice(0, trimmed[end] === "\n" ? end : end + 1)).trim();
  if (sentence.length <= max) return sentence;
  const cut = sentence.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Keywords whose value is a map of names to schemas. */
const SCHEMA_MAPS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);
/** Keywords whose value is a schema or a list of schemas. */
const SCHEMA_VALUES: ReadonlySet<string> = new Set([
  "items",
  "additionalItems",
  "prefixItems",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "allOf",
  "anyOf",
  "oneOf",
]);
/** Annotations for people, not constraints: dropped in compact mode. */
const DROPPED_KEYWORDS: ReadonlySet<string> = new Set(["description", "title", "examples", "$comment", "$schema"]);

type Walked = { value: unknown; changed: boolean };

/**
 * `schema` without the annotations of DROPPED_KEYWORDS, at every level a schema can be
 * (values of `default`, `const`, `enum` are data and stay as they are).
 */
function withoutAnnotations(schema: unknown, depth = 0): Walked {
  if (depth > MAX_SCHEMA_DEPTH) return { value: schema, changed: false };
  if (Array.isArray(schema)) {
    const walked = schema.map((item) => withoutAnnotations(item, depth + 1));
    return { value: walked.map((w) => w.value), changed: walked.some((w) => w.changed) };
  }
  if (!isObject(schema)) return { value: schema, changed: false };
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYWORDS.has(key)) {
      changed = true;
      continue;
    }
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      const map: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(value)) {
        const walked = withoutAnnotations(item, depth + 1);
        map[name] = walked.value;
        changed ||= walked.changed;
      }
      out[key] = map;
    } else if (SCHEMA_VALUES.has(key)) {
      const walked = withoutAnnotations(value, depth + 1);
      out[key] = walked.value;
      changed ||= walked.changed;
    } else out[key] = value;
  }
  return { value: out, changed };
}

/** Every `$ref` string in `value`, skipping the root's definition maps when `skipRootDefinitions`. */
function refsIn(value: unknown, into: string[], skipRootDefinitions: boolean, depth = 0): void {
  if (depth > MAX_SCHEMA_DEPTH) return;
  if (Array.isArray(value)) for (const item of value) refsIn(item, into, false, depth + 1);
  else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (skipRootDefinitions && (key === "$defs" || key === "definitions")) continue;
      if (key === "$ref" && typeof item === "string") into.push(item);
      else refsIn(item, into, false, depth + 1);
    }
  }
}

/**
 * `schema` without root definitions nothing refers to (servers that share one set of
 * definitions between tools list all of them with each). Any reference of another form
 * than `#/$defs/<name>…` or `#/definitions/<name>…` keeps every definition.
 */
function withoutUnusedDefinitions(schema: unknown): Walked {
  if (!isObject(schema)) return { value: schema, changed: false };
  const maps = (["$defs", "definitions"] as const).filter((key) => isObject(schema[key]));
  if (maps.length === 0) return { value: schema, changed: false };
  const pending: string[] = [];
  refsIn(schema, pending, true);
  const used = new Set<string>();
  while (pending.length > 0) {
    const ref = pending.pop()!;
    const match = /^#\/(\$defs|definitions)\/([^/]+)/.exec(ref);
    if (!match) return { value: schema, changed: false };
    const name = match[2]!.replace(/~1/g, "/").replace(/~0/g, "~");
    if (used.has(`${match[1]}/${name}`)) continue;
    used.add(`${match[1]}/${name}`);
    const map = schema[match[1]!];
    if (isObject(map)) refsIn(map[name], pending, false);
  }
  let changed = false;
  const out: Record<string, unknown> = { ...schema };
  for (const key of maps) {
    const kept = Object.entries(schema[key] as Record<string, unknown>).filter(([name]) => used.has(`${key}/${name}`));
    if (kept.length === Object.keys(schema[key] as Record<string, unknown>).length) continue;
    changed = true;
    if (kept.length === 0) delete out[key];
    else out[key] = Object.fromEntries(kept);
  }
  return { value: out, changed };
}

/** One tool definition compacted; undefined when compacting changes nothing. */
export function compactTool(tool: unknown): Record<string, unknown> | undefined {
  if (!isObject(tool)) return undefined;
  let changed = false;
  const out: Record<string, unknown> = { ...tool };
  if (typeof tool["description"] === "string") {
    const short = firstSentence(tool["description"]);
    if (short !== tool["description"]) {
      out["description"] = short;
      changed = true;
    }
  }
  for (const key of ["inputSchema", "outputSchema"]) {
    if (!isObject(tool[key])) continue;
    const pruned = withoutUnusedDefinitions(tool[key]);
    const walked = withoutAnnotations(pruned.value);
    if (pruned.changed || walked.changed) {
      out[key] = walked.value;
      changed = true;
    }
  }
  return changed ? out : undefined;
}

/**
 * A tools/list answer in compact mode: the tools compacting shortens re-serialised,
 * everything else byte for byte.
 *
 * @example
 * compactList(answerText) // the same answer, shorter descriptions
 */
export function compactList(text: string): string {
  const list = pathSpan(text, ["result", "tools"]);
  if (!list || text.charCodeAt(list.start) !== 0x5b) return text;
  const edits: Splice[] = [];
  for (const item of elements(text, list)) {
    const compacted = compactTool(JSON.parse(text.slice(item.start, item.end)));
    if (compacted) edits.push({ span: item, raw: JSON.stringify(compacted) });
  }
  return edits.length > 0 ? splice(text, edits) : text;
}
