/**
 * Applying a filter set to one tool result: pick the tool's rule (exact key, else the
 * most specific glob), pick the variant whose test holds, then `retain`, then the
 * patches in order. Applies to `structuredContent` and to text blocks that hold JSON.
 *
 * Any failure throws a `FilterError` naming the set and rule: the caller fails closed
 * and never passes the unfiltered data on.
 */
// The core module, not the package root: the root's default export drags in observe/compare (unused here).
import { _areEquals, applyPatch, JsonPatchError } from "fast-json-patch/module/core.mjs";
import type { Operation } from "fast-json-patch";
import { isObject, type JsonObject } from "../../core/jsonrpc";
import type { FilterRule, FilterSet, FilterVariant, ToolFilter } from "./filter-set";
import { isGlob, literalLength, matchesGlob } from "../../core/glob";
import { child, parsePointer } from "../../core/json-pointer";
import { retain, RetainError } from "./retain";

/** Rough bytes of JSON per token, for the estimates of what a filter saves. */
export const BYTES_PER_TOKEN = 4;

export class FilterError extends Error {
  override readonly name = "FilterError";
}

/** Re-exported: offload's include/exclude lists match tool keys with the same globs. */
export { matchesGlob };

/** The rule for `tool` in `set`: its exact key, else the matching glob with the most literal characters. */
export function selectFilter(set: FilterSet, tool: string): { key: string; filter: ToolFilter } | undefined {
  const exact = set.tools[tool];
  if (exact !== undefined && Object.hasOwn(set.tools, tool)) return { key: tool, filter: exact };
  let best: { key: string; filter: ToolFilter; literal: number } | undefined;
  for (const [key, filter] of Object.entries(set.tools)) {
    if (!isGlob(key) || !matchesGlob(key, tool)) continue;
    const literal = literalLength(key);
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

/**
 * The rule's operations for one application. A value in a set is configuration shared
 * by every call: `add`/`replace` would store it by reference in this result, where a
 * later operation (`copy … → /seen/-`) could change it for the next call. Object values
 * are copied each time; primitives and the operation list itself are shared safely.
 */
function operationsFor(patches: readonly Operation[]): Operation[] {
  return patches.map((operation) =>
    (operation.op === "add" || operation.op === "replace") &&
    typeof operation.value === "object" &&
    operation.value !== null
      ? { ...operation, value: structuredClone(operation.value) }
      : operation,
  );
}

/**
 * Applies `step` to `value` under `label`: retain and JSON Patch recurse, so an upstream
 * value nested deep enough overflows the stack; that fails closed with a message.
 */
function guarded(
  step: (value: unknown, rule: FilterRule, label: string) => unknown,
  value: unknown,
  rule: FilterRule,
  label: string,
): unknown {
  try {
    return step(value, rule, label);
  } catch (error) {
    if (error instanceof RangeError) throw new FilterError(`${label}: the result is nested too deep to filter`);
    throw error;
  }
}

/** Applies a rule (its `retain`, then its patches) to one JSON value; throws `FilterError`. */
export function applyRule(value: unknown, rule: FilterRule, label: string): unknown {
  return guarded((v, r, l) => patchesOf(retainOf(v, r, l), r, l), value, rule, label);
}

/** Applies only a rule's patches, to a value already retained (retain-text.ts). */
export function applyPatches(value: unknown, rule: FilterRule, label: string): unknown {
  return guarded(patchesOf, value, rule, label);
}

function retainOf(value: unknown, rule: FilterRule, label: string): unknown {
  if (!rule.retain) return value;
  try {
    return retain(value, rule.retain);
  } catch (error) {
    if (error instanceof RetainError) throw new FilterError(`${label}: retain failed: ${error.message}`);
    throw error;
  }
}

function patchesOf(value: unknown, rule: FilterRule, label: string): unknown {
  if (!rule.patches || rule.patches.length === 0) return value;
  try {
    return applyPatch(value, operationsFor(rule.patches), true, true, true).newDocument;
  } catch (error) {
    if (error instanceof JsonPatchError) {
      const operation = rule.patches[error.index ?? 0];
      const what = error.name === "TEST_OPERATION_FAILED" ? "test failed" : error.message.split("\n")[0];
      throw new FilterError(
        `${label}: patch ${error.index ?? 0}${operation ? ` (${describePatch(operation)})` : ""}: ${what}`,
      );
    }
    throw error;
  }
}

/** The rule that applies to `value` (the first variant whose test holds), with its label; undefined when none holds. */
function chooseRule(
  value: unknown,
  filter: ToolFilter,
  label: string,
): { rule: FilterRule; label: string } | undefined {
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

/** The JSON a text block holds (an object or an array), or undefined. */
export function parseJsonText(text: string): { value: unknown } | undefined {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/**
 * What a filtered result keeps of the blocks a rule cannot address (they hold no JSON):
 * the members that make the block, never `annotations`, `_meta` or unknown members.
 */
export const OPAQUE_BLOCK_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  image: ["type", "data", "mimeType"],
  audio: ["type", "data", "mimeType"],
  resource_link: ["type", "uri", "name", "title", "description", "mimeType", "size"],
};

function pick(source: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

/**
 * Filters a tools/call result, fail closed. The rule (or variant) is chosen once, on
 * `structuredContent` or else the first text (or embedded resource) holding JSON, and applied to every
 * JSON part: `structuredContent`, text blocks, embedded resources' text. A text block
 * that is not JSON is replaced by the filtered `structuredContent` (or, without one,
 * fails the call); an embedded binary resource or a block of an unknown type fails the
 * call. Images, audio and resource links pass.
 *
 * A filtered result carries nothing the rule did not keep: it is rebuilt from
 * `content`, `structuredContent` and `isError` alone; the upstream's `_meta`, unknown
 * result members, and every block's `annotations`, `_meta` and unknown members are
 * dropped. Returns `result` itself when no variant's test holds: the result is not one
 * the set is about, and passes unchanged.
 */
export function filterToolResult(result: JsonObject, filter: ToolFilter, label: string): JsonObject {
  const blocks: unknown[] = Array.isArray(result["content"]) ? result["content"] : [];
  const hasStructured = "structuredContent" in result;
  let probe: { value: unknown } | undefined = hasStructured ? { value: result["structuredContent"] } : undefined;
  for (const block of blocks) {
    if (probe) break;
    if (!isObject(block)) continue;
    if (block["type"] === "text" && typeof block["text"] === "string") probe = parseJsonText(block["text"]);
    else if (
      block["type"] === "resource" &&
      isObject(block["resource"]) &&
      typeof block["resource"]["text"] === "string"
    )
      probe = parseJsonText(block["resource"]["text"]);
  }
  if (!probe) throw new FilterError(`${label}: the result holds no JSON for the rule to apply to`);
  const chosen = chooseRule(probe.value, filter, label);
  if (!chosen) return result;
  let structured: { value: unknown } | undefined;
  let structuredText: string | undefined;
  if (hasStructured) {
    structured = { value: applyRule(result["structuredContent"], chosen.rule, `${chosen.label} (structuredContent)`) };
    structuredText = JSON.stringify(structured.value);
  }
  const filterText = (text: string, where: string): string => {
    const parsed = parseJsonText(text);
    if (parsed) return JSON.stringify(applyRule(parsed.value, chosen.rule, `${chosen.label} (${where})`));
    if (structuredText !== undefined) return structuredText;
    throw new FilterError(`${chosen.label} (${where}): the text is not JSON, so the rule cannot apply to it`);
  };
  const content = blocks.map((block, index): JsonObject => {
    const type = isObject(block) ? block["type"] : undefined;
    if (!isObject(block) || typeof type !== "string")
      throw new FilterError(`${chosen.label} (content ${index}): not a content block`);
    if (type === "text" && typeof block["text"] === "string")
      return { type, text: filterText(block["text"], `content ${index}`) };
    if (type === "resource" && isObject(block["resource"])) {
      const resource = block["resource"];
      if (typeof resource["text"] !== "string")
        throw new FilterError(`${chosen.label} (content ${index}): an embedded binary resource cannot be filtered`);
      return {
        type,
        resource: {
          ...pick(resource, ["uri", "mimeType"]),
          text: filterText(resource["text"], `content ${index} resource`),
        },
      };
    }
    const kept = Object.hasOwn(OPAQUE_BLOCK_MEMBERS, type) ? OPAQUE_BLOCK_MEMBERS[type] : undefined;
    if (!kept) throw new FilterError(`${chosen.label} (content ${index}): a "${type}" block cannot be filtered`);
    return pick(block, kept);
  });
  return {
    content,
    ...(structured ? { structuredContent: structured.value as JsonObject[string] } : {}),
    ...(typeof result["isError"] === "boolean" ? { isError: result["isError"] } : {}),
  };
}
