/**
 * Compact mode's list: each tool's description cut to its first sentence within a
 * character budget, and the descriptions inside its schemas dropped. Only the tools
 * this shortens are re-serialised; every other byte of the answer stays as it came.
 */
import { isObject } from "../core/jsonrpc";
import { elements, pathSpan, splice, type Splice } from "../core/raw-json";

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

/** `schema` without `description` keywords (a property named "description" stays); `changed` says whether any went. */
function withoutDescriptions(schema: unknown, depth = 0): { value: unknown; changed: boolean } {
  if (depth > MAX_SCHEMA_DEPTH) return { value: schema, changed: false };
  if (Array.isArray(schema)) {
    const walked = schema.map((item) => withoutDescriptions(item, depth + 1));
    return { value: walked.map((w) => w.value), changed: walked.some((w) => w.changed) };
  }
  if (!isObject(schema)) return { value: schema, changed: false };
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "description" && typeof value === "string") {
      changed = true;
      continue;
    }
    if (key === "properties" && isObject(value)) {
      const properties: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(value)) {
        const walked = withoutDescriptions(property, depth + 1);
        properties[name] = walked.value;
        changed ||= walked.changed;
      }
      out[key] = properties;
      continue;
    }
    const walked = withoutDescriptions(value, depth + 1);
    out[key] = walked.value;
    changed ||= walked.changed;
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
    const walked = withoutDescriptions(tool[key]);
    if (walked.changed) {
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
