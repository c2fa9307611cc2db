/**
 * The two ways an output filter answers a tools/call (the one-pass path of
 * features/filters/filter-answer.ts, and the parsed path it must agree with), each as the text the
 * client would get or the failure's name and message, for tests that compare them. The
 * answers are to a request whose id is 7.
 */
import { FilterError, filterToolResult } from "../../src/features/filters/apply-filter";
import { filterAnswer } from "../../src/features/filters/filter-answer";
import type { ToolFilter } from "../../src/features/filters/filter-set";
import { resultText, type JsonObject } from "../../src/core/jsonrpc";

/** The answer the parsed path gives: the text sent to the client, or the failure. */
export function parsedPath(answer: string, filter: ToolFilter): string {
  const result = (JSON.parse(answer) as { result: JsonObject }).result;
  try {
    const out = filterToolResult(result, filter, "label");
    return out === result ? answer : resultText(7, out);
  } catch (error) {
    // A FilterError fails the call closed; anything else (fast-json-patch's TypeError on a scalar) must be the same too.
    if (error instanceof Error) return `${error instanceof FilterError ? "FilterError" : error.name}: ${error.message}`;
    throw error;
  }
}

export function newPath(answer: string, filter: ToolFilter): string {
  try {
    const out = filterAnswer(answer, 7, filter, "label");
    return out.state === "unchanged" ? answer : out.text;
  } catch (error) {
    // A FilterError fails the call closed; anything else (fast-json-patch's TypeError on a scalar) must be the same too.
    if (error instanceof Error) return `${error instanceof FilterError ? "FilterError" : error.name}: ${error.message}`;
    throw error;
  }
}
