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

/** Applies one tool's filter to a JSON value; `undefined` when no variant's test holds. */
export function applyToolFilter(value: unknown, filter: ToolFilter, label: string): { value: unknown } | undefined {
  if (!Array.isArray(filter)) return { value: applyRule(value, filter as FilterRule, label) };
  const variants = filter as readonly FilterVariant[];
  const index = variants.findIndex((variant) => testHolds(value, variant.test));
  if (index < 0) return undefined;
  return { value: applyRule(value, variants[index]!, `${label} variant ${index}`) };
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
 * Filters a tools/call result. Returns the new result, or undefined when nothing in it
 * was subject to the filter (no JSON, no variant matched).
 */
export function filterToolResult(result: JsonObject, filter: ToolFilter, label: string): JsonObject | undefined {
  let changed = false;
  const out: JsonObject = { ...result };
  if ("structuredContent" in result) {
    const filtered = applyToolFilter(result["structuredContent"], filter, `${label} (structuredContent)`);
    if (filtered) {
      out["structuredContent"] = filtered.value;
      changed = true;
    }
  }
  if (Array.isArray(result["content"])) {
    out["content"] = result["content"].map((block: unknown, index: number) => {
      if (!isObject(block) || block["type"] !== "text" || typeof block["text"] !== "string") return block;
      const parsed = parseJsonText(block["text"]);
      if (!parsed) return block;
      const filtered = applyToolFilter(parsed.value, filter, `${label} (content ${index})`);
      if (!filtered) return block;
      changed = true;
      return { ...block, text: JSON.stringify(filtered.value) };
    });
  }
  return changed ? out : undefined;
}
