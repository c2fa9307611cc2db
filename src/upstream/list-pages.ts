/**
 * The one loop that follows the pages of a list (`tools/list`, `prompts/list`, ...) for
 * the gateway's own callers: wherever the pages come from (an upstream through the pool,
 * the relay, the whole pipeline), each page's answer is checked once (an error, or no
 * result, ends the walk as a typed failure), its result's members are handed to the
 * caller as raw spans (definitions stay the upstream's bytes), and `nextCursor` is
 * followed within a bound on pages and on bytes. A walk that stops at a bound says it is
 * incomplete; it is never an error.
 */
import { fail, ok, type Result } from "../core/errors";
import { isObject, type JsonObject, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { type Member, members, parseSpan, rootSpan } from "../core/raw-json";
import type { InternalCallFailure } from "./internal-failure";

/** Pages a walk follows unless its caller bounds it lower. */
export const MAX_LIST_PAGES = 50;
/** Characters of answers a walk reads in all unless its caller bounds it lower (a page past it is the last). */
export const MAX_LIST_CHARS = 16 * 1024 * 1024;

/** How far a walk goes. */
export type ListBounds = { readonly maxPages?: number; readonly maxChars?: number };

/** Where pages come from: the answer text to the list request at `cursor` (undefined: the first page). */
export type PageSource = (cursor: string | undefined, page: number) => Promise<Result<string, InternalCallFailure>>;

/**
 * Reads one page: `text` is the whole answer, `result` the members of its result. "stop"
 * ends the walk here (the caller has enough; the walk then counts as complete only if this
 * was the last page); "unreadable" ends it as a failure (the page lacks what the caller reads).
 */
export type PageReader = (text: string, result: readonly Member[]) => "stop" | "unreadable" | undefined;

/** What a walk saw: `complete` when the last page had no `nextCursor`. */
export type ListWalk = { readonly complete: boolean; readonly pages: number };

/**
 * Follows a list's pages from `source`, giving each to `read`, for `method` of `upstream`.
 *
 * @example
 * const walk = await followPages("alpha", "tools/list", (cursor) => send(cursor), (text, result) => {
 *   names.push(...toolNames(text, result));
 * }, { maxPages: 4 });
 */
export async function followPages(
  upstream: string,
  method: string,
  source: PageSource,
  read: PageReader,
  { maxPages = MAX_LIST_PAGES, maxChars = MAX_LIST_CHARS }: ListBounds = {},
): Promise<Result<ListWalk, InternalCallFailure>> {
  let cursor: string | undefined;
  let chars = 0;
  for (let page = 0; page < maxPages; page++) {
    const answer = await source(cursor, page);
    if (!answer.ok) return answer;
    const text = answer.value;
    chars += text.length;
    // One walk over the answer's members finds the error or the result; one over the result's, the cursor.
    const top = text.charCodeAt(rootSpan(text).start) === 0x7b ? members(text, rootSpan(text)) : [];
    const error = top.find((field) => field.key === "error");
    if (error) return fail(rpcError(upstream, method, parseSpan(text, error.value)));
    const result = top.find((field) => field.key === "result")?.value;
    if (!result || text.charCodeAt(result.start) !== 0x7b)
      return fail({ reason: "no-answer", upstream, method, detail: "answered without a result" });
    const fields = members(text, result);
    const verdict = read(text, fields);
    if (verdict === "unreadable") return fail({ reason: "no-answer", upstream, method, detail: "gave no list" });
    const next = fields.find((field) => field.key === "nextCursor");
    const value = next ? parseSpan(text, next.value) : undefined;
    if (typeof value !== "string" || value === "") return ok({ complete: true, pages: page + 1 });
    if (verdict === "stop" || chars >= maxChars) return ok({ complete: false, pages: page + 1 });
    cursor = value;
  }
  return ok({ complete: false, pages: maxPages });
}

/**
 * The request for one page of `method` (the first when `cursor` is undefined), as text and value.
 *
 * @example
 * const wire = listRequest("tools/list", "gw-resolve", cursor);
 */
export function listRequest(method: string, id: JsonRpcId, cursor: string | undefined): WireMessage<JsonRpcRequest> {
  const message: JsonRpcRequest = {
    jsonrpc: "2.0",
    id,
    method,
    ...(cursor !== undefined ? { params: { cursor } } : {}),
  };
  return { text: JSON.stringify(message), message };
}

/** The typed failure of a JSON-RPC `error` member (its code and message, whatever their shape). */
export function rpcError(upstream: string, method: string, detail: unknown): InternalCallFailure {
  const error: JsonObject = isObject(detail) ? detail : {};
  const code = typeof error["code"] === "number" ? error["code"] : 0;
  const message = typeof error["message"] === "string" ? error["message"] : "error";
  return { reason: "rpc-error", upstream, method, code, message };
}
