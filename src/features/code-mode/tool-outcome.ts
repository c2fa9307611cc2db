/**
 * What a code-mode program gets from one of its tool calls: the result's value, its
 * `structuredContent` when it has one, else its text (parsed when it is JSON). A tool
 * error, or a call the gateway refused, rejects in the program with the message the
 * client would have read for the same direct call.
 */
import { isObject, type JsonObject } from "../../core/jsonrpc";
import type { InnerAnswer } from "./inner-call";
import { needsClientMessage } from "./names";

/** What a program's tool call comes to: a JSON text, or the message of its refusal or error. */
export type ToolOutcome =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly message: string };

/** The texts of a result's text items, joined. */
function textsOf(result: JsonObject): string {
  const content = Array.isArray(result["content"]) ? result["content"] : [];
  return content
    .flatMap((item) =>
      isObject(item) && item["type"] === "text" && typeof item["text"] === "string" ? [item["text"]] : [],
    )
    .join("\n");
}

/** The value a program gets from a result. */
function programValue(result: JsonObject): string {
  if (result["structuredContent"] !== undefined) return JSON.stringify(result["structuredContent"]);
  const content = Array.isArray(result["content"]) ? result["content"] : [];
  const onlyText = content.length > 0 && content.every((item) => isObject(item) && item["type"] === "text");
  if (!onlyText) return JSON.stringify(content);
  const text = textsOf(result);
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

/** The methods an `input_required` result asks the client for. */
function askedMethods(result: JsonObject): string {
  const requests = isObject(result["inputRequests"]) ? Object.values(result["inputRequests"]) : [];
  const methods = requests.flatMap((request) =>
    isObject(request) && typeof request["method"] === "string" ? [request["method"]] : [],
  );
  return [...new Set(methods)].join(", ") || "input";
}

/** The outcome of a JSON-RPC response's text. */
function outcomeOf(text: string, name: string): ToolOutcome {
  const response: unknown = JSON.parse(text);
  if (!isObject(response)) return { ok: false, message: `${name}: the gateway got no answer` };
  if (isObject(response["error"])) return { ok: false, message: `${name}: ${String(response["error"]["message"])}` };
  const result = response["result"];
  if (!isObject(result)) return { ok: false, message: `${name}: the answer held no result` };
  // A 2026-07-28 client is asked through the result (input_required): a program cannot answer either.
  if (result["resultType"] === "input_required")
    return { ok: false, message: needsClientMessage(name, askedMethods(result)) };
  if (result["isError"] === true) return { ok: false, message: `${name} failed: ${textsOf(result) || "(no message)"}` };
  return { ok: true, value: programValue(result) };
}

/**
 * The outcome of an inner call's answer.
 *
 * @example
 * const response = '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"sum":3}}}';
 * toolOutcome({ ok: true, response }, "alpha___add")
 * // { ok: true, value: '{"sum":3}' }
 */
export function toolOutcome(answer: InnerAnswer, name: string): ToolOutcome {
  return answer.ok ? outcomeOf(answer.response, name) : answer;
}
