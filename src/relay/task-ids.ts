/**
 * Task ids on the aggregated endpoint (MCP 2025-11-25 tasks).
 *
 * A task id is the receiver's: two upstreams may both hand out `1`, and a later
 * `tasks/get` may reach any isolate. So on /mcp the id the client sees says which
 * upstream owns the task and what that upstream calls it, as server-request ids do.
 * It need not be sealed: the gateway reaches an upstream only in the client's own
 * upstream session, so a forged id reaches no task the client could not name directly.
 *
 * The rewrites below touch only the id strings, splicing the message text: every other
 * byte of an upstream's answer passes as it came.
 */
import { decodeJson, encodeJson } from "../core/base64url";
import { elements, member, parseSpan, pathSpan, rootSpan, splice, type Span, type Splice } from "../core/raw-json";

const TASK_ID_PREFIX = "gwt.";
/** The `_meta` key that ties a message to its task (a request, notification or `tasks/result` answer). */
export const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";

/** The id the client sees for task `taskId` of `upstream`. */
export function encodeTaskId(upstream: string, taskId: string): string {
  return TASK_ID_PREFIX + encodeJson([upstream, taskId]);
}

/** The upstream and its own id behind an id from `encodeTaskId`, or undefined. */
export function decodeTaskId(id: unknown): { upstream: string; taskId: string } | undefined {
  if (typeof id !== "string" || !id.startsWith(TASK_ID_PREFIX)) return undefined;
  const value = decodeJson(id.slice(TASK_ID_PREFIX.length));
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== "string" || typeof value[1] !== "string") return undefined;
  return { upstream: value[0], taskId: value[1] };
}

/** The splice that replaces the string at `span` with `map(string)`, when it is a string. */
function stringSplice(text: string, span: Span | undefined, map: (value: string) => string | undefined): Splice | undefined {
  if (!span || text.charCodeAt(span.start) !== 0x22) return undefined;
  const value = parseSpan(text, span);
  const mapped = typeof value === "string" ? map(value) : undefined;
  return mapped === undefined ? undefined : { span, raw: JSON.stringify(mapped) };
}

/**
 * Where a message from an upstream names one of that upstream's tasks: the related-task
 * `_meta` of any result or params, the params of `notifications/tasks/status`, and, in
 * the answer to `answerTo`, the task object's `taskId` (`tasks/get`, `tasks/cancel`),
 * each item's (`tasks/list`) or the created task's (a task-augmented `tools/call`).
 */
function taskIdSpans(text: string, answerTo: string | undefined): Span[] {
  const root = rootSpan(text);
  if (text.charCodeAt(root.start) !== 0x7b) return [];
  const spans: (Span | undefined)[] = [];
  const result = member(text, root, "result");
  const params = member(text, root, "params");
  const method = member(text, root, "method");
  if (result && text.charCodeAt(result.start) === 0x7b) {
    spans.push(pathSpan(text, ["_meta", RELATED_TASK_META_KEY, "taskId"], result));
    if (answerTo === "tasks/get" || answerTo === "tasks/cancel") spans.push(member(text, result, "taskId"));
    if (answerTo === "tools/call") spans.push(pathSpan(text, ["task", "taskId"], result));
    const list = answerTo === "tasks/list" ? member(text, result, "tasks") : undefined;
    if (list && text.charCodeAt(list.start) === 0x5b) {
      for (const item of elements(text, list)) if (text.charCodeAt(item.start) === 0x7b) spans.push(member(text, item, "taskId"));
    }
  }
  if (params && text.charCodeAt(params.start) === 0x7b) {
    if (method && parseSpan(text, method) === "notifications/tasks/status") spans.push(member(text, params, "taskId"));
    spans.push(pathSpan(text, ["_meta", RELATED_TASK_META_KEY, "taskId"], params));
  }
  return spans.filter((span): span is Span => span !== undefined);
}

/**
 * A message from `upstream` with each of its task ids in the form the client sees on
 * /mcp; `answerTo` is the method of the request it answers, when it is an answer.
 */
export function toGatewayTaskIds(text: string, upstream: string, answerTo?: string): string {
  const edits = taskIdSpans(text, answerTo)
    .map((span) => stringSplice(text, span, (id) => encodeTaskId(upstream, id)))
    .filter((edit): edit is Splice => edit !== undefined);
  return edits.length > 0 ? splice(text, edits) : text;
}

/**
 * A client's message bound for `upstream` with its related-task `_meta` in the
 * upstream's own form (the answer to an elicitation a task asked for names that task).
 * Ids of other upstreams, or not the gateway's, are left as they are.
 */
export function toUpstreamTaskIds(text: string, upstream: string): string {
  const root = rootSpan(text);
  if (text.charCodeAt(root.start) !== 0x7b) return text;
  const edits = ["result", "params"]
    .map((key) => stringSplice(text, pathSpan(text, [key, "_meta", RELATED_TASK_META_KEY, "taskId"], root), (id) => {
      const decoded = decodeTaskId(id);
      return decoded?.upstream === upstream ? decoded.taskId : undefined;
    }))
    .filter((edit): edit is Splice => edit !== undefined);
  return edits.length > 0 ? splice(text, edits) : text;
}
