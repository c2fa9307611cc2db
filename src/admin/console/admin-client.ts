/**
 * The console's only way to read or change anything: a request to the admin API's own
 * handlers, in process, with the admin token the Worker holds. So the console can do
 * exactly what the API can (validation, limits, error messages included) and no more;
 * the API stays the source of truth.
 */
import type { Hono } from "../hono-app";
import { isObject } from "../../core/jsonrpc";
import { asConsoleCall } from "../../auth/admin-throttle";

/** Where Cloudflare says a request comes from (features/audit/failure-audit.ts `requestSource`). */
const SOURCE_HEADER = "cf-connecting-ip";

/** What the console needs of the admin app: its fetch. */
export type AdminApi = Pick<Hono<never>, "fetch">;

/** One problem of a refused document, as the admin API lists it (a JSON Pointer and a message). */
export type ApiProblem = { readonly path: string; readonly message: string };

/** An admin API answer: its status, parsed JSON body (or text) and headers. */
export type ApiAnswer = {
  readonly status: number;
  readonly ok: boolean;
  readonly body: unknown;
  readonly text: string;
  readonly headers: Headers;
};

/** The error text and problems of a failed answer, for showing next to what caused them. */
export function errorOf(answer: ApiAnswer): { error: string; problems: ApiProblem[] } {
  const body = isObject(answer.body) ? answer.body : {};
  const error = typeof body["error"] === "string" ? body["error"] : `the admin API answered HTTP ${answer.status}`;
  const raw = Array.isArray(body["problems"]) ? body["problems"] : [];
  const problems = raw.map(
    (problem): ApiProblem =>
      isObject(problem)
        ? { path: String(problem["path"] ?? ""), message: String(problem["message"] ?? "") }
        : { path: "", message: String(problem) },
  );
  return { error, problems };
}

/**
 * What a console form carries instead of an ETag when the document was absent when the
 * page was loaded: its save is sent with `If-None-Match: *`, so it never overwrites a
 * document someone created since (412). Not an entity-tag (those are quoted).
 */
export const ABSENT_ETAG = "absent";

/**
 * Calls the admin API on behalf of a signed-in console user; `ifMatch` makes a write
 * conditional on the ETag the page was rendered with (the API answers 412 when the
 * document changed since), or on the document still being absent (`ABSENT_ETAG`).
 */
export type AdminCall = (
  method: string,
  path: string,
  body?: BodyInit,
  contentType?: string,
  ifMatch?: string,
) => Promise<ApiAnswer>;

/**
 * An `AdminCall` bound to this request's environment and execution context. Each call
 * carries the user's address (CF-Connecting-IP), as the user's own request to the API
 * would; it is marked as the console's (`asConsoleCall`), so never throttled for it.
 *
 * @example
 * const call = adminCaller(admin, c.env, c.executionCtx, c.req.raw);
 * const answer = await call("GET", "/filter-sets");
 */
export function adminCaller(
  admin: AdminApi,
  env: { ADMIN_TOKEN?: string },
  executionCtx: Parameters<AdminApi["fetch"]>[2],
  request: Request,
): AdminCall {
  const origin = new URL(request.url).origin;
  const source = request.headers.get(SOURCE_HEADER);
  return async (method, path, body, contentType = "application/json", ifMatch) => {
    const headers: Record<string, string> = { authorization: `Bearer ${env.ADMIN_TOKEN ?? ""}` };
    if (source !== null) headers[SOURCE_HEADER] = source;
    if (body !== undefined) headers["content-type"] = contentType;
    if (ifMatch === ABSENT_ETAG) headers["if-none-match"] = "*";
    else if (ifMatch) headers["if-match"] = ifMatch;
    const init = { method, headers, ...(body !== undefined ? { body } : {}) };
    const request = asConsoleCall(new Request(`${origin}${path}`, init));
    const response = await admin.fetch(request, env as never, executionCtx);
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get("content-type") ?? "").includes("application/json")) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: response.status, ok: response.ok, body: parsed, text, headers: response.headers };
  };
}
