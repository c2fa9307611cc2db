/**
 * What a 2025 client cannot take from a 2026-07-28 upstream, taken out and said so: the
 * 2025 schema wants a tool's `outputSchema` to be an object schema (`type: "object"`)
 * and `structuredContent` to be an object, where 2026-07-28 allows any JSON Schema and
 * any JSON value. Such members are removed (the text `content` still carries the result)
 * and the result's `_meta` names what went (`DOWNGRADED_META_KEY`). Every other byte —
 * `resultType`, caching hints, unknown members — stays as the upstream wrote it: the
 * 2025 schema lets results carry more.
 *
 * A tool whose `x-mcp-header` annotations are invalid is left out of a 2025 client's list
 * (the transport page says an HTTP client MUST exclude it; for a 2025 client the gateway is
 * that client), with a warning in the log and a note in the list's `_meta`.
 */
import { isObject } from "../core/jsonrpc";
import {
  appendMemberSplice,
  elements,
  member,
  members,
  parseSpan,
  removeMemberSplice,
  rootSpan,
  splice,
  type Span,
  type Splice,
} from "../core/raw-json";
import { annotationProblem } from "./modern-wire";
import { isStatelessRevision } from "../core/revisions";
import { methodFacts } from "../core/methods";

/** Where the gateway says what it removed for a 2025 client. */
export const DOWNGRADED_META_KEY = "mcp-edge-gateway/downgraded";

/**
 * Whether `version` is a per-request (2026-07-28 or later) revision.
 *
 * @example
 * isModernVersion(LATEST_SESSION_REVISION); // false
 */
export function isModernVersion(version: string): boolean {
  return isStatelessRevision(version);
}

type Removed = {
  readonly tool?: string;
  readonly member: "outputSchema" | "structuredContent" | "tool";
  readonly reason: string;
};

function isObjectSchema(schema: unknown): boolean {
  return isObject(schema) && schema["type"] === "object";
}

/** The splice adding `removed` to the `_meta` of the object at `span`. */
function metaSplice(text: string, span: Span, removed: readonly Removed[]): Splice {
  const meta = member(text, span, "_meta");
  if (meta && text.charCodeAt(meta.start) === 0x7b)
    return appendMemberSplice(text, meta, DOWNGRADED_META_KEY, JSON.stringify(removed));
  if (meta) return { span: meta, raw: JSON.stringify({ [DOWNGRADED_META_KEY]: removed }) };
  return appendMemberSplice(text, span, "_meta", JSON.stringify({ [DOWNGRADED_META_KEY]: removed }));
}

/** The list without the tools whose `x-mcp-header` annotations are invalid. */
function withoutInvalidTools(text: string, result: Span): string {
  const tools = member(text, result, "tools");
  if (!tools || text.charCodeAt(tools.start) !== 0x5b) return text;
  const kept: string[] = [];
  const removed: Removed[] = [];
  for (const tool of elements(text, tools)) {
    const value = parseSpan(text, tool);
    const problem = isObject(value) ? annotationProblem(value["inputSchema"]) : undefined;
    if (problem === undefined) {
      kept.push(text.slice(tool.start, tool.end));
      continue;
    }
    const name = isObject(value) && typeof value["name"] === "string" ? value["name"] : "?";
    console.warn(`mcp-edge-gateway: tool "${name}" left out of a 2025 client's tools/list: ${problem}`);
    removed.push({ tool: name, member: "tool", reason: `invalid x-mcp-header annotation: ${problem}` });
  }
  if (removed.length === 0) return text;
  return splice(text, [{ span: tools, raw: `[${kept.join(",")}]` }, metaSplice(text, result, removed)]);
}

function downgradeToolList(original: string, at: Span): string {
  const text = withoutInvalidTools(original, at);
  const result = text === original ? at : member(text, rootSpan(text), "result")!;
  const tools = member(text, result, "tools");
  if (!tools || text.charCodeAt(tools.start) !== 0x5b) return text;
  const edits: Splice[] = [];
  for (const tool of elements(text, tools)) {
    if (text.charCodeAt(tool.start) !== 0x7b) continue;
    const schema = member(text, tool, "outputSchema");
    if (!schema || isObjectSchema(parseSpan(text, schema))) continue;
    const name = member(text, tool, "name");
    const removed: Removed = {
      ...(name ? { tool: String(parseSpan(text, name)) } : {}),
      member: "outputSchema",
      reason: "not an object schema, which 2025 clients require",
    };
    edits.push(removeMemberSplice(text, tool, "outputSchema")!, metaSplice(text, tool, [removed]));
  }
  return edits.length > 0 ? splice(text, edits) : text;
}

function downgradeToolResult(text: string, result: Span): string {
  const structured = member(text, result, "structuredContent");
  if (!structured || text.charCodeAt(structured.start) === 0x7b) return text;
  const removed: Removed = {
    member: "structuredContent",
    reason: "not an object, which 2025 clients require; the content carries the result",
  };
  return splice(text, [removeMemberSplice(text, result, "structuredContent")!, metaSplice(text, result, [removed])]);
}

/**
 * The response text a 2025 client gets for `method` from a 2026-07-28 upstream.
 *
 * @example
 * downgradeFor2025(answer, request.method); // a tool result's array structuredContent moved under _meta
 * // {"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"mcp-edge-gateway/downgraded":[...]}}}
 */
export function downgradeFor2025(text: string, method: string): string {
  const downgraded = methodFacts(method).downgraded;
  if (downgraded === undefined) return text;
  const result = member(text, rootSpan(text), "result");
  if (!result || text.charCodeAt(result.start) !== 0x7b || members(text, result).length === 0) return text;
  return downgraded === "tool list" ? downgradeToolList(text, result) : downgradeToolResult(text, result);
}
