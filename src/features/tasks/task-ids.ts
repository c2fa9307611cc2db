/**
 * Task ids as the gateway hands them out (MCP 2025-11-25 tasks; the 2026-07-28 tasks
 * extension's `tasks/get`, `tasks/update`, `tasks/cancel`), on both routes.
 *
 * A task id is the receiver's: two upstreams may both hand out `1`, a later `tasks/get`
 * may reach any isolate, and an upstream whose task store is keyed by id alone (not by
 * session) serves any id to anyone who names it. So the id a client sees says which
 * upstream owns the task and what that upstream calls it, and is bound to the principal
 * it was handed to by an HMAC (key derived from SESSION_SECRET): an id presented by any
 * other principal, forged, or an upstream's own id is no task at all. The same tag is
 * the task's name in the ownership index (task-owners.ts) that keeps task lists
 * to the caller's own tasks.
 *
 * The rewrites below touch only the id strings, splicing the message text: every other
 * byte of an upstream's answer passes as it came.
 */
import { base64UrlToBytes, bytesToBase64Url, decodeJson, encodeJson } from "../../core/base64url";
import { derivedKey } from "../../core/derived-keys";
import { elements, member, parseSpan, pathSpan, rootSpan, splice, type Span, type Splice } from "../../core/raw-json";
import type { CallContext } from "../../context/call-context";
import { META_KEYS } from "../../core/revisions";
import { methodFacts } from "../../core/methods";

const TASK_ID_PREFIX = "gwt.";
const TAG_SEPARATOR = ".";
const HMAC_PURPOSE = "mcp-edge-gateway task ids v1";
/** The `_meta` key that ties a message to its task (a request, notification or `tasks/result` answer). */
export const RELATED_TASK_META_KEY = META_KEYS.relatedTask;

/** Whom task ids are bound to: the key's secret and the principal they are handed to. */
export type TaskIdBinding = { readonly secret: string; readonly principal: string };

/** The binding of the caller of `ctx` (the secret is read only when an id is made or read: most messages name no task). */
export function taskIdBinding(ctx: Pick<CallContext, "services" | "identity">): TaskIdBinding {
  return {
    get secret() {
      return ctx.services.sessionSecret;
    },
    principal: ctx.identity.principal,
  };
}

function taskIdKey(secret: string): Promise<CryptoKey> {
  return derivedKey(secret, HMAC_PURPOSE, { name: "HMAC", hash: "SHA-256", length: 256 }, ["sign", "verify"]);
}

function signed(parts: readonly string[]): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(parts));
}

/**
 * The tag binding task `taskId` of `upstream` to the binding's principal (base64url of an
 * HMAC-SHA-256): the end of the id the client sees, and the task's name in the ownership index.
 */
export async function taskTag(binding: TaskIdBinding, upstream: string, taskId: string): Promise<string> {
  const mac = await crypto.subtle.sign(
    "HMAC",
    await taskIdKey(binding.secret),
    signed(["task", binding.principal, upstream, taskId]),
  );
  return bytesToBase64Url(new Uint8Array(mac));
}

/** The principal's name in the ownership index: an HMAC of it, so no principal is stored in a key. */
export async function ownerTag(binding: TaskIdBinding): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await taskIdKey(binding.secret), signed(["owner", binding.principal]));
  return bytesToBase64Url(new Uint8Array(mac));
}

/** The id the binding's principal sees for task `taskId` of `upstream`. */
export async function encodeTaskId(binding: TaskIdBinding, upstream: string, taskId: string): Promise<string> {
  return `${TASK_ID_PREFIX}${encodeJson([upstream, taskId])}${TAG_SEPARATOR}${await taskTag(binding, upstream, taskId)}`;
}

/** The upstream an id from `encodeTaskId` names, unverified: for choosing what to ask, never for asking it. */
export function taskIdUpstream(id: unknown): string | undefined {
  if (typeof id !== "string" || !id.startsWith(TASK_ID_PREFIX)) return undefined;
  const value = decodeJson(id.slice(TASK_ID_PREFIX.length, id.lastIndexOf(TAG_SEPARATOR)));
  return Array.isArray(value) && typeof value[0] === "string" ? value[0] : undefined;
}

/** The upstream and its own id behind an id `encodeTaskId` made for this binding's principal, or undefined. */
export async function decodeTaskId(
  binding: TaskIdBinding,
  id: unknown,
): Promise<{ upstream: string; taskId: string } | undefined> {
  if (typeof id !== "string" || !id.startsWith(TASK_ID_PREFIX)) return undefined;
  const at = id.lastIndexOf(TAG_SEPARATOR);
  const mac = at > TASK_ID_PREFIX.length ? base64UrlToBytes(id.slice(at + 1)) : undefined;
  if (!mac) return undefined;
  const value = decodeJson(id.slice(TASK_ID_PREFIX.length, at));
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== "string" || typeof value[1] !== "string")
    return undefined;
  const [upstream, taskId] = value as [string, string];
  const valid = await crypto.subtle.verify(
    "HMAC",
    await taskIdKey(binding.secret),
    mac,
    signed(["task", binding.principal, upstream, taskId]),
  );
  return valid ? { upstream, taskId } : undefined;
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
    if (answerTo !== undefined && methodFacts(answerTo).createsTasks)
      spans.push(pathSpan(text, ["task", "taskId"], result));
    const list = answerTo === "tasks/list" ? member(text, result, "tasks") : undefined;
    if (list && text.charCodeAt(list.start) === 0x5b) {
      for (const item of elements(text, list))
        if (text.charCodeAt(item.start) === 0x7b) spans.push(member(text, item, "taskId"));
    }
  }
  if (params && text.charCodeAt(params.start) === 0x7b) {
    if (method && parseSpan(text, method) === "notifications/tasks/status") spans.push(member(text, params, "taskId"));
    spans.push(pathSpan(text, ["_meta", RELATED_TASK_META_KEY, "taskId"], params));
  }
  return spans.filter((span): span is Span => span !== undefined);
}

/** The message with the string at each span replaced by what `map` makes of it (when a string). */
async function rewriteStrings(
  text: string,
  spans: readonly Span[],
  map: (value: string) => Promise<string | undefined>,
): Promise<string> {
  const edits = (
    await Promise.all(
      spans.map(async (span) => {
        if (text.charCodeAt(span.start) !== 0x22) return undefined;
        const value = parseSpan(text, span);
        const mapped = typeof value === "string" ? await map(value) : undefined;
        return mapped === undefined ? undefined : { span, raw: JSON.stringify(mapped) };
      }),
    )
  ).filter((edit): edit is Splice => edit !== undefined);
  return edits.length > 0 ? splice(text, edits) : text;
}

/**
 * A message from `upstream` with each of its task ids in the form the binding's principal
 * sees; `answerTo` is the method of the request it answers, when it is an answer.
 */
export function toGatewayTaskIds(
  text: string,
  upstream: string,
  binding: TaskIdBinding,
  answerTo?: string,
): Promise<string> {
  return rewriteStrings(text, taskIdSpans(text, answerTo), (id) => encodeTaskId(binding, upstream, id));
}

/**
 * A client's message bound for `upstream` with its related-task `_meta` in the
 * upstream's own form (the answer to an elicitation a task asked for names that task).
 * Ids of other upstreams or principals, or not the gateway's, are left as they are.
 */
export function toUpstreamTaskIds(text: string, upstream: string, binding: TaskIdBinding): Promise<string> {
  const root = rootSpan(text);
  if (text.charCodeAt(root.start) !== 0x7b) return Promise.resolve(text);
  const spans = ["result", "params"]
    .map((key) => pathSpan(text, [key, "_meta", RELATED_TASK_META_KEY, "taskId"], root))
    .filter((span): span is Span => span !== undefined);
  return rewriteStrings(text, spans, async (id) => {
    const decoded = await decodeTaskId(binding, id);
    return decoded?.upstream === upstream ? decoded.taskId : undefined;
  });
}
