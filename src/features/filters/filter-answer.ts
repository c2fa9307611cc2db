/**
 * Filtering a tools/call answer from its text, in one pass: a rule's `retain` reads only
 * what it keeps of `structuredContent` (retain-text.ts) and never builds the whole result;
 * the patches run on the retained part. A text block holding the same JSON text as
 * `structuredContent` (what SDK servers send) gets the filtered `structuredContent`
 * without being read again. On a 10 MiB answer this takes a third of the heap and half
 * the CPU time of parsing it (bench/filters.mjs).
 *
 * The language is defined once, in apply-filter.ts: the variant is chosen by its
 * `chooseRule` (the tests' values read off the text by `valuesAtText`), and the blocks
 * are filtered and the result assembled by its `filteredResult`; only reading the answer
 * differs. The answer is the same, byte for byte, as `filterToolResult` on the parsed
 * answer gives: where the text and the parsed form could disagree (a key twice in an
 * object read, an answer without `result`, a block that is not an object) and on every
 * failure, this path says `undefined` and the caller runs `filterToolResult`, which words
 * every failure. Text blocks whose JSON differs from `structuredContent` (pretty-printed,
 * or with no `structuredContent` beside them) are parsed whole, as on that path.
 */
import { isObject, resultText, type JsonRpcId } from "../../core/jsonrpc";
import { eachElement, eachMember, skipValue, skipWhitespace, type Span } from "../../core/raw-json";
import {
  applyPatches,
  type BlockView,
  type Chosen,
  chooseRule,
  filteredResult,
  filteredStructured,
  filterToolResult,
  firstJsonText,
  readTestsIn,
} from "./apply-filter";
import type { FilterRule, ToolFilter } from "./filter-set";
import { retainText, valuesAtText } from "./retain-text";
import { type Node, preparedTree } from "./retain-tree";

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

/** What one pass over `result` found: structuredContent's span, the rule chosen on it (null: no test holds), its retained part. */
type ResultSpans = {
  content: BlockSpans[] | undefined;
  structured: { readonly span: Span; readonly chosen: Chosen | null; readonly retained: unknown } | undefined;
  isError: Span | undefined;
  resultType: Span | undefined;
};

class NotHere extends Error {
  override readonly name = "NotHere";
}

/** The prepared tree of what `rule` keeps (`true`: all of it). */
function treeOf(rule: FilterRule): Node {
  return rule.retain ? preparedTree(rule.retain) : true;
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

/**
 * The rule chosen on the structuredContent at `start`, and what it retains of it (the
 * whole value, parsed, for a rule that keeps it all), and where it ends.
 */
function readStructured(
  text: string,
  start: number,
  filter: ToolFilter,
  label: string,
): NonNullable<ResultSpans["structured"]> {
  const chosen = chooseRule(filter, label, (pointers) => valuesAtText(text, start, pointers)) ?? null;
  const keep = chosen && treeOf(chosen.rule);
  if (keep === null || keep === true) {
    const end = skipValue(text, start);
    return { span: { start, end }, chosen, retained: keep && parse(text, { start, end }) };
  }
  const retained = retainText(text, start, keep);
  if (!retained) throw new NotHere();
  return { span: { start, end: retained.end }, chosen, retained: retained.value };
}

/** What the `result` object at `at` holds (`structuredContent` retained on the way), and where it ends. */
function readResult(text: string, at: number, filter: ToolFilter, label: string, found: ResultSpans): number {
  if (text.charCodeAt(at) !== 0x7b) throw new NotHere();
  return eachUniqueMember(text, at, (key, start) => {
    if (key === "content" && text.charCodeAt(start) === 0x5b) {
      found.content = [];
      return readBlocks(text, start, found.content);
    }
    if (key === "structuredContent") {
      const structured = readStructured(text, start, filter, label);
      found.structured = structured;
      return structured.span.end;
    }
    const end = skipValue(text, start);
    if (key === "isError") found.isError = { start, end };
    else if (key === "resultType") found.resultType = { start, end };
    return end;
  });
}

/** A block read off the text, for apply-filter.ts: its members parsed when asked for, its text decoded already. */
function blockView(text: string, block: BlockSpans): BlockView {
  return {
    isObject: true,
    member(key) {
      if (key === "text" && block.text !== undefined) return block.text;
      const span = block.spans.get(key);
      return span && parse(text, span);
    },
  };
}

function filterInOnePass(text: string, id: JsonRpcId, filter: ToolFilter, label: string): AnswerFilterOutcome {
  const result: ResultSpans = { content: undefined, structured: undefined, isError: undefined, resultType: undefined };
  let hasResult = false;
  const root = skipWhitespace(text, 0);
  if (text.charCodeAt(root) !== 0x7b) throw new NotHere();
  eachUniqueMember(text, root, (key, start) => {
    if (key !== "result") return skipValue(text, start);
    hasResult = true;
    return readResult(text, start, filter, label, result);
  });
  if (!hasResult) throw new NotHere();
  if (result.resultType && parse(text, result.resultType) === "input_required") return { state: "unchanged" };
  const blocks = (result.content ?? []).map((block) => blockView(text, block));
  const { structured } = result;
  const probe = structured ? undefined : firstJsonText(blocks);
  if (!structured && !probe) throw new NotHere(); // no JSON for the rule: filterToolResult says so
  const chosen = structured ? structured.chosen : chooseRule(filter, label, readTestsIn(probe!.value));
  if (!chosen) return { state: "unchanged" }; // no variant's test holds
  const filtered =
    structured &&
    filteredStructured(applyPatches(structured.retained, chosen.rule, `${chosen.label} (structuredContent)`));
  const same = structured && text.slice(structured.span.start, structured.span.end);
  const out = filteredResult(blocks, chosen, filtered, result.isError && parse(text, result.isError), same);
  // As resultText writes it, with structuredContent's text (most of it) written once, not twice.
  const written = filtered?.text === undefined ? "" : `,"structuredContent":${filtered.text}`;
  const tail = out["isError"] === undefined ? "" : `,"isError":${out["isError"]}`;
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":${JSON.stringify(out["content"])}`;
  return { state: "filtered", text: `${head}${written}${tail}}}` };
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
    return filterInOnePass(text, id, filter, label);
  } catch {
    // Whatever this path cannot take (and every failure of the rule) is decided by filterToolResult.
    return undefined;
  }
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
