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
import { retain } from "./retain";
import { RetainError } from "./retain-tree";

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

/** Where a pointer leads: the value there, or `undefined` when it leads nowhere. */
export type Found = { readonly value: unknown } | undefined;

/**
 * Reads the values the variants' tests compare, each where its pointer (as tokens) leads
 * in the value the rule is chosen on: over a parsed value (`readTestsIn`), or over the
 * answer's text (retain-text.ts's `valuesAtText`, one pass for every test).
 */
export type ReadTests = (pointers: readonly (readonly string[])[]) => readonly Found[];

/** The rule chosen for a result, with the label its failures carry. */
export type Chosen = { readonly rule: FilterRule; readonly label: string };

/** `ReadTests` over a parsed value (JSON Pointer resolution: core/json-pointer.ts's `child`). */
export function readTestsIn(value: unknown): ReadTests {
  return (pointers) =>
    pointers.map((tokens) => {
      let at: { found: boolean; value: unknown } = { found: true, value };
      for (const token of tokens) if (at.found) at = child(at.value, token);
      return at.found ? { value: at.value } : undefined;
    });
}

/** The tests' pointers of a list of variants, parsed once per set (sets are cached). */
const TEST_POINTERS = new WeakMap<readonly FilterVariant[], readonly (readonly string[])[]>();

/**
 * The rule that applies: a plain rule, or the first variant whose test holds (the value
 * at its pointer equals the test's, deeply); `undefined` when no test holds.
 */
export function chooseRule(filter: ToolFilter, label: string, readTests: ReadTests): Chosen | undefined {
  if (!Array.isArray(filter)) return { rule: filter as FilterRule, label };
  const variants = filter as readonly FilterVariant[];
  let pointers = TEST_POINTERS.get(variants);
  if (pointers === undefined) {
    pointers = variants.map((variant) => parsePointer(variant.test.path));
    TEST_POINTERS.set(variants, pointers);
  }
  const values = readTests(pointers);
  const index = variants.findIndex((variant, i) => {
    const found = values[i];
    return found !== undefined && _areEquals(found.value, variant.test.value);
  });
  return index < 0 ? undefined : { rule: variants[index]!, label: `${label} variant ${index}` };
}

/** Applies one tool's filter to a JSON value; `undefined` when no variant's test holds. */
export function applyToolFilter(value: unknown, filter: ToolFilter, label: string): { value: unknown } | undefined {
  const chosen = chooseRule(filter, label, readTestsIn(value));
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

/**
 * A content block as the filter reads it: a parsed block, or one read off the answer's
 * text (filter-answer.ts), whose members are parsed only when asked for.
 */
export type BlockView = { readonly isObject: boolean; member(key: string): unknown };

function blockOf(block: unknown): BlockView {
  return isObject(block)
    ? { isObject: true, member: (key) => block[key] }
    : { isObject: false, member: () => undefined };
}

function pick(member: (key: string) => unknown, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) {
    const value = member(key);
    if (value !== undefined) out[key] = value as JsonObject[string];
  }
  return out;
}

/** The text of the first block (text, or embedded resource) holding JSON: what a rule is chosen on without structuredContent. */
export function firstJsonText(blocks: readonly BlockView[]): Found {
  for (const block of blocks) {
    const type = block.member("type");
    const text = type === "text" ? block.member("text") : undefined;
    const resource = type === "resource" ? block.member("resource") : undefined;
    const found =
      typeof text === "string"
        ? parseJsonText(text)
        : isObject(resource) && typeof resource["text"] === "string"
          ? parseJsonText(resource["text"])
          : undefined;
    if (found) return found;
  }
  return undefined;
}

/** The failure of a result that holds no JSON (no structuredContent, no text of JSON). */
export function noJsonError(label: string): FilterError {
  return new FilterError(`${label}: the result holds no JSON for the rule to apply to`);
}

/** structuredContent filtered, and its text (`undefined` where a patch left nothing). */
export type FilteredStructured = { readonly value: unknown; readonly text: string | undefined };

export function filteredStructured(value: unknown): FilteredStructured {
  return { value, text: JSON.stringify(value) };
}

/**
 * The filtered result: `structured` (structuredContent filtered by the chosen rule, when
 * the result has it), every block filtered (see `filterToolResult`), and `isError`. A text
 * equal to `sameText` (structuredContent's own text, on the one-pass path) is the filtered
 * structuredContent, without being parsed again.
 */
export function filteredResult(
  blocks: readonly BlockView[],
  chosen: Chosen,
  structured: FilteredStructured | undefined,
  isError: unknown,
  sameText?: string,
): JsonObject {
  const structuredText = structured?.text;
  const filterText = (text: string, where: string): string => {
    if (text === sameText) return structuredText!;
    const parsed = parseJsonText(text);
    if (parsed) return JSON.stringify(applyRule(parsed.value, chosen.rule, `${chosen.label} (${where})`));
    if (structuredText !== undefined) return structuredText;
    throw new FilterError(`${chosen.label} (${where}): the text is not JSON, so the rule cannot apply to it`);
  };
  const content = blocks.map((block, index): JsonObject => {
    const type = block.member("type");
    if (!block.isObject || typeof type !== "string")
      throw new FilterError(`${chosen.label} (content ${index}): not a content block`);
    const text = type === "text" ? block.member("text") : undefined;
    if (typeof text === "string") return { type, text: filterText(text, `content ${index}`) };
    const resource = type === "resource" ? block.member("resource") : undefined;
    if (isObject(resource)) {
      if (typeof resource["text"] !== "string")
        throw new FilterError(`${chosen.label} (content ${index}): an embedded binary resource cannot be filtered`);
      return {
        type,
        resource: {
          ...pick((key) => resource[key], ["uri", "mimeType"]),
          text: filterText(resource["text"], `content ${index} resource`),
        },
      };
    }
    const kept = Object.hasOwn(OPAQUE_BLOCK_MEMBERS, type) ? OPAQUE_BLOCK_MEMBERS[type] : undefined;
    if (!kept) throw new FilterError(`${chosen.label} (content ${index}): a "${type}" block cannot be filtered`);
    return pick(block.member, kept);
  });
  return {
    content,
    ...(structured ? { structuredContent: structured.value as JsonObject[string] } : {}),
    ...(typeof isError === "boolean" ? { isError } : {}),
  };
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
  const blocks = (Array.isArray(result["content"]) ? result["content"] : []).map(blockOf);
  const hasStructured = "structuredContent" in result;
  const probe = hasStructured ? { value: result["structuredContent"] } : firstJsonText(blocks);
  if (!probe) throw noJsonError(label);
  const chosen = chooseRule(filter, label, readTestsIn(probe.value));
  if (!chosen) return result;
  const structured = hasStructured
    ? filteredStructured(applyRule(result["structuredContent"], chosen.rule, `${chosen.label} (structuredContent)`))
    : undefined;
  return filteredResult(blocks, chosen, structured, result["isError"]);
}
