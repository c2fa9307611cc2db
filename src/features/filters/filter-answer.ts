/**
 * Filtering a tools/call answer from its text, in one pass: the common rule (a `retain`
 * of a few pointers, then patches) reads only what it retains of `structuredContent`
 * (retain-text.ts) and never builds the whole result; the patches run on the retained
 * part. A text block holding the same JSON text as `structuredContent` (what SDK servers
 * send) gets the filtered `structuredContent` without being read again.
 *
 * Variants are chosen on `structuredContent` as the walk meets it (retain-variants.ts).
 *
 * The answer is the same, byte for byte, as `filterToolResult` on the parsed answer gives:
 * this path only takes the answers it is sure of, and says `undefined` for every other,
 * where the caller runs `filterToolResult` (which also words every failure):
 * - a rule without `retain` or retaining `""` (it needs the whole value anyway);
 *   variants without `structuredContent` (chosen on a text block), or whose tests the
 *   walk cannot read, or when no test holds;
 * - any failure of the rule (a pointer that does not resolve, a failing patch), a block
 *   the rule cannot filter, an answer without `result`, a key twice in an object read;
 * Text blocks whose JSON differs from `structuredContent` (pretty-printed, or with no
 * `structuredContent` beside them) are parsed whole and filtered as before, on this path.
 */
import { isObject, resultText, type JsonObject, type JsonRpcId } from "../../core/jsonrpc";
import { eachElement, eachMember, skipValue, skipWhitespace, type Span } from "../../core/raw-json";
import { applyPatches, applyRule, filterToolResult, OPAQUE_BLOCK_MEMBERS, parseJsonText } from "./apply-filter";
import type { FilterRule, FilterVariant, ToolFilter } from "./filter-set";
import { buildTree } from "./retain";
import { retainText, type RetainedText } from "./retain-text";
import { prepareKeep } from "./retain-tree";
import { confirmsVariant, guessVariant } from "./retain-variants";

/** What the one-pass path made of an answer: its filtered text, or the answer unchanged (a question for the client). */
export type AnswerFilterOutcome =
  | { readonly state: "filtered"; readonly text: string }
  | { readonly state: "unchanged" };

/** A block's members, by key, as spans of the answer; its `text`, decoded, when it is a string. */
type BlockSpans = { readonly spans: Map<string, Span>; text?: string };

/** How an SDK server's answer goes on after its text block: `…"}],"structuredContent":`. */
const SDK_TEXT_END = '"}],"structuredContent":';
/** Where the `]` stands in `SDK_TEXT_END`. */
const SDK_BRACKET_AT = SDK_TEXT_END.indexOf("]");
/** How an answer whose last member is `content`, and whose last block is text, ends. */
const ANSWER_TEXT_END = '"}]}}';

/** The rule that applies, with the label its failures would carry. */
type Pick = { readonly rule: FilterRule; readonly label: string };

/**
 * How the rule is picked and `structuredContent` retained: a plain rule is known before
 * the answer is read (`fixed`); a variant is chosen on `structuredContent` when the walk
 * meets it (retain-variants.ts).
 */
type Plan = {
  readonly fixed: Pick | undefined;
  retainAt(text: string, start: number): { retained: RetainedText; pick: Pick };
};

/** What one pass over `result` found. */
type ResultSpans = {
  content: BlockSpans[] | undefined;
  structured: Span | undefined;
  retained: unknown;
  pick: Pick | undefined;
  isError: Span | undefined;
  resultType: Span | undefined;
};

class NotHere extends Error {
  override readonly name = "NotHere";
}

/** Trees of the rules seen, so a rule's pointers are parsed once per set (sets are cached), not once per call. */
const TREES = new WeakMap<FilterRule, ReturnType<typeof prepareKeep>>();

function treeOf(rule: FilterRule, pointers: readonly string[]): ReturnType<typeof prepareKeep> {
  let tree = TREES.get(rule);
  if (tree === undefined) {
    tree = prepareKeep(buildTree(pointers));
    TREES.set(rule, tree);
  }
  return tree;
}

function parse(text: string, span: Span): unknown {
  return JSON.parse(text.slice(span.start, span.end));
}

/** Walks an object, refusing a key seen twice (the parsed form would keep the last one only). */
function eachUniqueMember(text: string, at: number, visit: (key: string, start: number) => number): number {
  const seen = new Set<string>();
  return eachMember(text, at, (key, start) => {
    if (seen.has(key)) throw new NotHere();
    seen.add(key);
    return visit(key, start);
  });
}

/**
 * Where a text block's string may end: followed by the SDK's `"}],"structuredContent":`,
 * or the answer's last `"}]}}`. The SDK's ending is found by its `]`, rare in JSON text,
 * where `indexOf` of the whole ending stops at every quote of the escaped text (a tenth
 * of the time on a GitHub-like answer). Each `]` is compared once: linear.
 */
function endCandidate(text: string, start: number): number {
  for (
    let bracket = text.indexOf("]", start + 1 + SDK_BRACKET_AT);
    bracket >= 0;
    bracket = text.indexOf("]", bracket + 1)
  ) {
    if (text.startsWith(SDK_TEXT_END, bracket - SDK_BRACKET_AT)) return bracket - SDK_BRACKET_AT;
  }
  const last = skipWhitespaceBack(text, text.length) - ANSWER_TEXT_END.length;
  return last > start && text.startsWith(ANSWER_TEXT_END, last) ? last : -1;
}

/** The offset just past the last character of `text[0, end)` that is not JSON whitespace. */
function skipWhitespaceBack(text: string, end: number): number {
  while (end > 0 && " \t\n\r".includes(text[end - 1]!)) end--;
  return end;
}

/**
 * Whether the strings of an answer's text blocks may still be read by their layout's end
 * (`readString`). An answer guesses until one guess is wrong: a wrong guess searched on to
 * an ending past its block, and every later block would search to it again (and fail
 * again): an answer of many blocks would cost its length once per block.
 */
type EndGuesses = { wrong: boolean };

/**
 * The string at `start`, decoded, and where it ends. A text block's string is most of an
 * answer: where the answer's layout says where it ends, that end is confirmed by
 * `JSON.parse` (which accepts nothing but one whole string there), instead of reading the
 * string once to find its end and again to decode it.
 */
function readString(text: string, start: number, guesses: EndGuesses): { value: string; end: number } {
  const guess = guesses.wrong ? -1 : endCandidate(text, start);
  if (guess > 0) {
    try {
      return { value: JSON.parse(text.slice(start, guess + 1)) as string, end: guess + 1 };
    } catch {
      // another layout: the string ends earlier
    }
  }
  // No ending after this block, or a wrong one: none is searched for again (the searches stay linear).
  guesses.wrong = true;
  const end = skipValue(text, start);
  return { value: JSON.parse(text.slice(start, end)) as string, end };
}

/** The blocks of the `content` array at `at`, and where it ends. */
function readBlocks(text: string, at: number, blocks: BlockSpans[]): number {
  const guesses: EndGuesses = { wrong: false };
  return eachElement(text, at, (_index, start) => {
    if (text.charCodeAt(start) !== 0x7b) throw new NotHere(); // not a content block
    const block: BlockSpans = { spans: new Map() };
    blocks.push(block);
    return eachUniqueMember(text, start, (key, from) => {
      if (key === "text" && text.charCodeAt(from) === 0x22) {
        const string = readString(text, from, guesses);
        block.text = string.value;
        block.spans.set(key, { start: from, end: string.end });
        return string.end;
      }
      const end = skipValue(text, from);
      block.spans.set(key, { start: from, end });
      return end;
    });
  });
}

/** What the `result` object at `at` holds (`structuredContent` retained on the way), and where it ends. */
function readResult(text: string, at: number, plan: Plan, found: ResultSpans): number {
  if (text.charCodeAt(at) !== 0x7b) throw new NotHere();
  return eachUniqueMember(text, at, (key, start) => {
    if (key === "content" && text.charCodeAt(start) === 0x5b) {
      found.content = [];
      return readBlocks(text, start, found.content);
    }
    if (key === "structuredContent") {
      const { retained, pick } = plan.retainAt(text, start);
      found.structured = { start, end: retained.end };
      found.retained = retained.value;
      found.pick = pick;
      return retained.end;
    }
    const end = skipValue(text, start);
    if (key === "isError") found.isError = { start, end };
    else if (key === "resultType") found.resultType = { start, end };
    return end;
  });
}

function filterBlocks(
  text: string,
  blocks: readonly BlockSpans[],
  same: string | undefined,
  structuredText: string | undefined,
  rule: FilterRule,
  label: string,
): { content: JsonObject[]; json: boolean } {
  let json = false;
  /** As filterToolResult filters a text: JSON is filtered, other text becomes the filtered structuredContent. */
  const textOf = (value: string, where: string): string => {
    if (same !== undefined && value === same) {
      json = true;
      return structuredText!;
    }
    const parsed = parseJsonText(value);
    if (parsed) {
      json = true;
      return JSON.stringify(applyRule(parsed.value, rule, `${label} (${where})`));
    }
    if (structuredText !== undefined) return structuredText;
    throw new NotHere(); // not JSON, and nothing to put instead: filterToolResult fails the call
  };
  const content = blocks.map((block, index): JsonObject => {
    const typeSpan = block.spans.get("type");
    const type = typeSpan && parse(text, typeSpan);
    if (type === "text" && block.text !== undefined) return { type, text: textOf(block.text, `content ${index}`) };
    const body = type === "resource" ? block.spans.get("resource") : undefined;
    if (type === "resource" && body && text.charCodeAt(body.start) === 0x7b) {
      const resource = parse(text, body) as JsonObject;
      if (typeof resource["text"] !== "string") throw new NotHere(); // an embedded binary resource
      const kept: JsonObject = {};
      for (const key of ["uri", "mimeType"]) if (resource[key] !== undefined) kept[key] = resource[key]!;
      return { type, resource: { ...kept, text: textOf(resource["text"], `content ${index} resource`) } };
    }
    const members =
      typeof type === "string" && Object.hasOwn(OPAQUE_BLOCK_MEMBERS, type) ? OPAQUE_BLOCK_MEMBERS[type] : undefined;
    if (!members) throw new NotHere();
    const kept: JsonObject = {};
    for (const key of members) {
      const span = block.spans.get(key);
      if (span) kept[key] = parse(text, span) as JsonObject[string];
    }
    return kept;
  });
  return { content, json };
}

function filterInOnePass(text: string, id: JsonRpcId, plan: Plan): AnswerFilterOutcome {
  const result: ResultSpans = {
    content: undefined,
    structured: undefined,
    retained: undefined,
    pick: undefined,
    isError: undefined,
    resultType: undefined,
  };
  let hasResult = false;
  const root = skipWhitespace(text, 0);
  if (text.charCodeAt(root) !== 0x7b) throw new NotHere();
  eachUniqueMember(text, root, (key, start) => {
    if (key !== "result") return skipValue(text, start);
    hasResult = true;
    return readResult(text, start, plan, result);
  });
  if (!hasResult) throw new NotHere();
  if (result.resultType && parse(text, result.resultType) === "input_required") return { state: "unchanged" };
  const pick = result.pick ?? plan.fixed;
  if (!pick) throw new NotHere(); // variants, chosen on a text block: the parsed path chooses
  const { rule, label } = pick;
  let structured: { value: unknown } | undefined;
  let structuredText: string | undefined;
  let same: string | undefined;
  if (result.structured) {
    structured = { value: applyPatches(result.retained, rule, `${label} (structuredContent)`) };
    structuredText = JSON.stringify(structured.value);
    same = text.slice(result.structured.start, result.structured.end);
  }
  const { content, json } = filterBlocks(text, result.content ?? [], same, structuredText, rule, label);
  if (!structured && !json) throw new NotHere(); // no JSON for the rule: filterToolResult says so
  const isError = result.isError && parse(text, result.isError);
  const tail = typeof isError === "boolean" ? `,"isError":${isError}` : "";
  if (structured && structuredText === undefined) throw new NotHere(); // a patch left nothing: the parsed path writes that
  // As resultText writes it, with the filtered structuredContent written once, not twice.
  const written = structuredText === undefined ? "" : `,"structuredContent":${structuredText}`;
  return {
    state: "filtered",
    text: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":${JSON.stringify(content)}${written}${tail}}}`,
  };
}

/**
 * Filters the tools/call answer `text` in one pass, for the answers it can take (see the
 * header); `undefined` for every other, which the caller filters with `filterToolResult`.
 */
export function filterAnswerText(
  text: string,
  id: JsonRpcId,
  filter: ToolFilter,
  label: string,
): AnswerFilterOutcome | undefined {
  try {
    // Inside: a rule's tree is prepared on its first call, and a pointer deep enough overflows the stack there too.
    const plan = planOf(filter, label);
    return plan && filterInOnePass(text, id, plan);
  } catch {
    // Whatever this path cannot take (and every failure of the rule) is decided by filterToolResult.
    return undefined;
  }
}

/** How `filter` is applied in one pass, or `undefined` when it is not (a rule without `retain`, or retaining `""`). */
function planOf(filter: ToolFilter, label: string): Plan | undefined {
  if (Array.isArray(filter)) {
    const variants = filter as readonly FilterVariant[];
    return {
      fixed: undefined,
      retainAt(text, start) {
        const plan = guessVariant(text, start, variants);
        const retained = plan && retainText(text, start, plan.keep);
        if (!plan || !retained || !confirmsVariant(retained, variants, plan)) throw new NotHere();
        return { retained, pick: { rule: plan.rule, label: `${label} variant ${plan.index}` } };
      },
    };
  }
  const rule = filter as FilterRule;
  if (!rule.retain) return undefined;
  const keep = treeOf(rule, rule.retain);
  if (keep === true) return undefined;
  return {
    fixed: { rule, label },
    retainAt(text, start) {
      const retained = retainText(text, start, keep);
      if (!retained) throw new NotHere();
      return { retained, pick: { rule, label } };
    },
  };
}

/** Filters the parsed answer: unchanged for an error, a question for the client, or a result no variant's test holds for. */
function filterParsed(text: string, id: JsonRpcId, filter: ToolFilter, label: string): AnswerFilterOutcome {
  const response: unknown = JSON.parse(text);
  if (!isObject(response) || !isObject(response["result"])) return { state: "unchanged" }; // a JSON-RPC error passes as it is
  if (response["result"]["resultType"] === "input_required") return { state: "unchanged" }; // its retry's answer is filtered
  const filtered = filterToolResult(response["result"], filter, label);
  return filtered === response["result"]
    ? { state: "unchanged" }
    : { state: "filtered", text: resultText(id, filtered) };
}

/**
 * Filters the tools/call answer `text` (a JSON-RPC response) with `filter`, for the
 * client whose request had `id`: in one pass where it can, else on the parsed answer.
 * Throws `FilterError` when the rule fails (the call fails closed); a JSON-RPC error, an
 * `input_required` result or a result no variant's test holds for come back unchanged.
 */
export function filterAnswer(text: string, id: JsonRpcId, filter: ToolFilter, label: string): AnswerFilterOutcome {
  return filterAnswerText(text, id, filter, label) ?? filterParsed(text, id, filter, label);
}
