/**
 * Applying a filter set to one tool result: pick the tool's rule (exact key, else the
 * most specific glob), pick the variant whose test holds, then `retain`, then the
 * patches in order. Applies to `structuredContent` and to text blocks that hold JSON.
 *
 * Any failure throws a `FilterError` naming the set and rule: the caller fails closed
 * and never passes the unfiltered data on.
 */
import { _areEquals, applyPatch, JsonPatchError, type Operation } from "fast-json-patch";
import { isObject, type JsonObject } from "../core/jsonrpc";
import type { FilterRule, FilterSet, FilterVariant, ToolFilter } from "./filter-set";
import { child, parsePointer } from "./json-pointer";
import { retain, RetainError } from "./retain";

/** Rough bytes of JSON per token, for the estimates of what a filter saves. */
export const BYTES_PER_TOKEN = 4;

export class FilterError extends Error {
  override readonly name = "FilterError";
}

const globs = new Map<string, RegExp>();

function globToRegExp(glob: string): RegExp {
  let re = globs.get(glob);
  if (!re) {
    re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
    if (globs.size > 1_000) globs.clear();
    globs.set(glob, re);
  }
  return re;
}

/** True when `name` matches `glob` (`*`: any run of characters, `?`: one character). */
export function matchesGlob(glob: string, name: string): boolean {
  return globToRegExp(glob).test(name);
}

/** The rule for `tool` in `set`: its exact key, else the matching glob with the most literal characters. */
export function selectFilter(set: FilterSet, tool: string): { key: string; filter: ToolFilter } | undefined {
  const exact = set.tools[tool];
  if (exact !== undefined && Object.prototype.hasOwnProperty.call(set.tools, tool)) return { key: tool, filter: exact };
  let best: { key: string; filter: ToolFilter; literal: number } | undefined;
  for (const [key, filter] of Object.entries(set.tools)) {
    if (!/[*?]/.test(key) || !matchesGlob(key, tool)) continue;
    const literal = key.replace(/[*?]/g, "").length;
    if (!best || literal > best.literal) best = { key, filter, literal };
  }
  return best && { key: best.key, filter: best.filter };
}

function testHolds(value: unknown, test: FilterVariant["test"]): boolean {
  let at: { found: boolean; value: unknown } = { found: true, value };
  for (const token of parsePointer(test.path)) {
    at = child(at.value, token);
    if (!at.found) return false;
  }
  return _areEquals(at.value, test.value);
}

function describePatch(operation: Operation): string {
  return `${operation.op} ${operation.path}`;
}

function applyRule(value: unknown, rule: FilterRule, label: string): unknown {
  let out = value;
  if (rule.retain) {
    try {
      out = retain(out, rule.retain);
    } catch (error) {
      if (error instanceof RetainError) throw new FilterError(`${label}: retain failed: ${error.message}`);
      throw error;
    }
  }
  if (rule.patches && rule.patches.length > 0) {
    try {
      out = applyPatch(out, rule.patches, true, true, true).newDocument;
    } catch (error) {
      if (error instanceof JsonPatchError) {
        const operation = rule.patches[error.index ?? 0];
        const what = error.name === "TEST_OPERATION_FAILED" ? "test failed" : error.message.split("\n")[0];
        throw new FilterError(`${label}: patch ${error.index ?? 0}${operation ? ` (${describePatch(operation)})` : ""}: ${what}`);
      }
      throw error;
    }
  }
  return out;
}

/** The rule that applies to `value` (the first variant whose test holds), with its label; undefined when none holds. */
function chooseRule(value: unknown, filter: ToolFilter, label: string): { rule: FilterRule; label: string } | undefined {
  if (!Array.isArray(filter)) return { rule: filter as FilterRule, label };
  const variants = filter as readonly FilterVariant[];
  const index = variants.findIndex((variant) => testHolds(value, variant.test));
  return index < 0 ? undefined : { rule: variants[index]!, label: `${label} variant ${index}` };
}

/** Applies one tool's filter to a JSON value; `undefined` when no variant's test holds. */
export function applyToolFilter(value: unknown, filter: ToolFilter, label: string): { value: unknown } | undefined {
  const chosen = chooseRule(value, filter, label);
  return chosen && { value: applyRule(value, chosen.rule, chosen.label) };
}

function parseJsonText(text: string): { value: unknown } | undefined {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/**
 * Filters a tools/call result, fail closed. The rule (or variant) is chosen once, on
 * `structuredContent` or else the first text (or embedded resource) holding JSON, and applied to every
 * JSON part: `structuredContent`, text blocks, embedded resources' text. A text block
 * that is not JSON is replaced by the filtered `structuredContent` (or, without one,
 * fails the call); an embedded binary resource fails the call. Images, audio and
 * resource links pass. Returns undefined when no variant's test holds: the result is
 * not one the set is about, and passes unchanged.
 */
export function filterToolResult(result: JsonObject, filter: ToolFilter, label: string): JsonObject {
  const blocks: unknown[] = Array.isArray(result["content"]) ? result["content"] : [];
  const hasStructured = "structuredContent" in result;
  let probe: { value: unknown } | undefined = hasStructured ? { value: result["structuredContent"] } : undefined;
  for (const block of blocks) {
    if (probe) break;
    if (!isObject(block)) continue;
    if (block["type"] === "text" && typeof block["text"] === "string") probe = parseJsonText(block["text"]);
    else if (block["type"] === "resource" && isObject(block["resource"]) && typeof block["resource"]["text"] === "string") probe = parseJsonText(block["resource"]["text"]);
  }
  if (!probe) throw new FilterError(`${label}: the result holds no JSON for the rule to apply to`);
  const chosen = chooseRule(probe.value, filter, label);
  if (!chosen) return result;
  const out: JsonObject = { ...result };
  let structuredText: string | undefined;
  if (hasStructured) {
    out["structuredContent"] = applyRule(result["structuredContent"], chosen.rule, `${chosen.label} (structuredContent)`);
    structuredText = JSON.stringify(out["structuredContent"]);
  }
  const filterText = (text: string, where: string): string => {
    const parsed = parseJsonText(text);
    if (parsed) return JSON.stringify(applyRule(parsed.value, chosen.rule, `${chosen.label} (${where})`));
    if (structuredText !== undefined) return structuredText;
    throw new FilterError(`${chosen.label} (${where}): the text is not JSON, so the rule cannot apply to it`);
  };
  out["content"] = blocks.map((block, index) => {
    if (!isObject(block)) return block;
    if (block["type"] === "text" && typeof block["text"] === "string") return { ...block, text: filterText(block["text"], `content ${index}`) };
    if (block["type"] === "resource" && isObject(block["resource"])) {
      const resource = block["resource"];
      if (typeof resource["text"] === "string") return { ...block, resource: { ...resource, text: filterText(resource["text"], `content ${index} resource`) } };
      throw new FilterError(`${chosen.label} (content ${index}): an embedded binary resource cannot be filtered`);
    }
    return block;
  });
  return out;
}
