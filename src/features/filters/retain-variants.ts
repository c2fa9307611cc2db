/**
 * Variants (rules guarded by a `test`) on the one-pass path: the variant is chosen on
 * `structuredContent` as `filterToolResult` chooses it on the parsed value, without
 * parsing it.
 *
 * The choice is made twice. First a guess: each test's value is read where its pointer
 * first leads in the text, stopping there (a test on a member near the top costs next to
 * nothing). Then the walk that retains the guessed variant's part reads, in the same
 * pass, every test up to it (probes, retain-tree.ts), where a key twice in one object
 * gives up as it does for a kept name: `JSON.parse` keeps the last of them, which the
 * guess may not have seen. The answer is taken only when that walk confirms the guess;
 * otherwise, as when no test holds, the parsed path decides.
 */
// The core module, not the package root (as apply-filter.ts imports it).
import { _areEquals } from "fast-json-patch/module/core.mjs";
import { parsePointer } from "../../core/json-pointer";
import { skipString, skipValue, skipWhitespace } from "../../core/raw-json";
import type { FilterRule, FilterVariant } from "./filter-set";
import { buildTree } from "./retain";
import type { RetainedText } from "./retain-text";
import { prepareWithProbes, type Branch } from "./retain-tree";

/** A variant ready for the walk: its tree probes the tests of every variant up to it. */
export type VariantPlan = { readonly index: number; readonly rule: FilterRule; readonly keep: Branch };

/** What is prepared once per set of variants (sets are cached): tests' tokens, and each variant's tree (`null`: none possible). */
type Prepared = { readonly tests: readonly (readonly string[])[]; readonly keeps: (Branch | null | undefined)[] };

const PREPARED = new WeakMap<readonly FilterVariant[], Prepared>();

function preparedOf(variants: readonly FilterVariant[]): Prepared {
  let prepared = PREPARED.get(variants);
  if (prepared === undefined) {
    prepared = { tests: variants.map((variant) => parsePointer(variant.test.path)), keeps: [] };
    PREPARED.set(variants, prepared);
  }
  return prepared;
}

/** The tree for variant `index`: its retain, probing the tests of variants 0..index. */
function keepOf(variants: readonly FilterVariant[], prepared: Prepared, index: number): Branch | undefined {
  let keep = prepared.keeps[index];
  if (keep === undefined) {
    const retain = variants[index]!.retain;
    const tree = retain ? buildTree(retain) : true;
    keep = (tree !== true && prepareWithProbes(tree, prepared.tests.slice(0, index + 1))) || null;
    prepared.keeps[index] = keep;
  }
  return keep ?? undefined;
}

/** Whether a test holds for the value found at its pointer (as apply-filter.ts's `testHolds`). */
function holds(found: { value: unknown } | undefined, expected: unknown): boolean {
  return found !== undefined && _areEquals(found.value, expected);
}

/**
 * The value where `tokens` first lead from the value at `start` of `text` (the text is
 * JSON already read once), or `undefined` where they lead nowhere. A guess: a later
 * duplicate key is not looked for.
 */
function firstValueAt(text: string, start: number, tokens: readonly string[]): { value: unknown } | undefined {
  let at = start;
  for (const token of tokens) {
    const c = text.charCodeAt(at);
    let found = -1;
    if (c === 0x7b) found = memberStart(text, at, token);
    else if (c === 0x5b && /^(0|[1-9][0-9]*)$/.test(token)) found = elementStart(text, at, Number(token));
    if (found < 0) return undefined;
    at = found;
  }
  return { value: JSON.parse(text.slice(at, skipValue(text, at))) };
}

/** Where the value of the first member named `name` of the object at `at` starts, or -1. */
function memberStart(text: string, at: number, name: string): number {
  let i = skipWhitespace(text, at + 1);
  while (text.charCodeAt(i) === 0x22) {
    const keyEnd = skipString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    const start = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
    if (key === name) return start;
    i = skipWhitespace(text, skipValue(text, start));
    if (text.charCodeAt(i) !== 0x2c) return -1;
    i = skipWhitespace(text, i + 1);
  }
  return -1;
}

/** Where element `index` of the array at `at` starts, or -1. */
function elementStart(text: string, at: number, index: number): number {
  let i = skipWhitespace(text, at + 1);
  if (text.charCodeAt(i) === 0x5d) return -1;
  for (let n = 0; n < index; n++) {
    i = skipWhitespace(text, skipValue(text, i));
    if (text.charCodeAt(i) !== 0x2c) return -1;
    i = skipWhitespace(text, i + 1);
  }
  return i;
}

/**
 * The variant to retain from the value at `start` (`structuredContent`), guessed from the
 * first value at each test's pointer; `undefined` when no test holds or the variant
 * cannot be walked in one pass.
 */
export function guessVariant(text: string, start: number, variants: readonly FilterVariant[]): VariantPlan | undefined {
  const prepared = preparedOf(variants);
  // Variants mostly test one place (a `type` member) for different values: each place is read once.
  const read = new Map<string, { value: unknown } | undefined>();
  const index = variants.findIndex((variant, i) => {
    const path = variant.test.path;
    if (!read.has(path)) read.set(path, firstValueAt(text, start, prepared.tests[i]!));
    return holds(read.get(path), variant.test.value);
  });
  if (index < 0) return undefined;
  const keep = keepOf(variants, prepared, index);
  return keep && { index, rule: variants[index]!, keep };
}

/** Whether the tests' values read by the walk choose the variant that was guessed. */
export function confirmsVariant(
  retained: RetainedText,
  variants: readonly FilterVariant[],
  plan: VariantPlan,
): boolean {
  for (let i = 0; i < plan.index; i++) if (holds(retained.tests[i], variants[i]!.test.value)) return false;
  return holds(retained.tests[plan.index], variants[plan.index]!.test.value);
}
