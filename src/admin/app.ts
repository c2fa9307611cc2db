/**
 * The admin API under /admin/: filter sets and the plan, edited while the gateway runs.
 * Bearer `ADMIN_TOKEN`; with the secret unset every path under /admin answers 404 with
 * a message saying the API is off and how to turn it on (a bare 404 would look like a
 * wrong path), and with one shorter than 32 characters a 500 saying how to make a long one
 * (auth/admin-token.ts). Wrong tokens are slowed down per source: 429 with Retry-After
 * after a few (auth/admin-throttle.ts). Every write is validated and nothing invalid is stored; the answer lists
 * each error with its location in the document (a JSON Pointer), including documents
 * nested too deep and patches that would reach an object's prototype.
 *
 *   GET    /admin/filter-sets                 names of the stored sets
 *   PUT    /admin/filter-sets/<name>          body: JSON or YAML
 *   GET    /admin/filter-sets/<name>
 *   DELETE /admin/filter-sets/<name>
 *   POST   /admin/filter-sets/<name>/preview  body: {"tool": "...", "result": <a tool result>, "set"?: <an unsaved set>}
 *   PUT    /admin/plan, GET /admin/plan, DELETE /admin/plan
 *   GET    /admin/audit?from=&to=&tool=&user=&upstream=&outcome=&limit=   the audit trail as NDJSON (admin/audit.ts)
 *   /admin/api-keys, /admin/personas, /admin/visibility: see api-keys.ts and access-documents.ts
 *   /admin/pins: tool pinning, see pins.ts
 */
import { PLAN_KEY, filterSetKey, listFilterSetNames } from "../storage/document-keys";
import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "./hono-app";
import { applyToolFilter, BYTES_PER_TOKEN, filterToolResult, FilterError, selectFilter } from "../policy/apply-filter";
import { checkFilterSet, checkPlan, FILTER_SET_NAME, type FilterSet } from "../policy/filter-set";
import { parseDocument, type Checked, type DocumentProblem } from "../storage/document-store";
import { forgetCached } from "../policy/filter-store";
import { MAX_DOCUMENT_DEPTH, tooDeepAt } from "../policy/document-limits";
import { isObject } from "../core/jsonrpc";
import { readBodyText } from "./read-body";
import { documentResponse } from "./document-routes";
import { deleteDocument, storeDocument } from "./document-versions";
import { addAuditRoutes } from "./audit";
import { createShapingAdmin } from "./shaping";
import { createUpstreamsAdmin } from "./upstreams";
import { createLiveUpstreamRoutes } from "../features/live-upstreams/routes";
import { createPinsAdmin } from "./pins";
import { createApiKeyRoutes } from "./api-keys";
import { createAccessRoutes } from "./access-documents";
import { createUpstreamConnectionRoutes } from "./upstream-connections";
import { recordFailedAuthentication, requestSource } from "../auth/failure-audit";
import { adminTokenState, ADMIN_TOKEN_TOO_SHORT_MESSAGE } from "../auth/admin-token";
import { adminRateLimiter, isConsoleCall, judgeAdminAttempt, throttledMessage } from "../auth/admin-throttle";
import { gatewayConfig } from "../config/gateway-config";
import { addUnmatchedRoute } from "./unmatched";

/** Where the shell mounts the admin API. */
export const ADMIN_BASE = "/admin";

const MAX_DOCUMENT_BYTES = 512 * 1024;
/** A preview carries a sample tool result beside the set, so it may be larger than a document. */
const MAX_PREVIEW_BYTES = 4 * 1024 * 1024;
const ADMIN_OFF_MESSAGE =
  "The admin API is off: it is turned on by the ADMIN_TOKEN secret. Deployed: npx wrangler secret put ADMIN_TOKEN. " +
  "Locally: ADMIN_TOKEN=<token> in .dev.vars, or npm start -- --var ADMIN_TOKEN:<token>. See docs/filters.md, \"Live editing\".";

type AdminBindings = {
  ADMIN_TOKEN?: string;
  GATEWAY_KV?: KVNamespace;
  PAYLOADS?: R2Bucket;
  AUDIT_QUEUE?: Queue;
  [binding: string]: unknown;
};
const ADMIN_UNAUTHORIZED = "Unauthorized: send Authorization: Bearer <ADMIN_TOKEN>";
type AdminContext = Context<{ Bindings: AdminBindings }>;

async function sameSecret(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all([crypto.subtle.digest("SHA-256", encoder.encode(given)), crypto.subtle.digest("SHA-256", encoder.encode(expected))]);
  return crypto.subtle.timingSafeEqual(a, b);
}

function problemsResponse(c: AdminContext, error: string, problems: readonly DocumentProblem[]): Response {
  return c.json({ error, problems }, 400);
}

function kvOf(c: AdminContext): KVNamespace {
  const kv = c.env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

async function readDocument(c: AdminContext): Promise<Checked<unknown>> {
  const text = await readBodyText(c.req.raw, MAX_DOCUMENT_BYTES);
  if (text === undefined) return { ok: false, problems: [{ path: "", message: `larger than ${MAX_DOCUMENT_BYTES} bytes` }] };
  if (text.trim() === "") return { ok: false, problems: [{ path: "", message: "the body is empty; send the document as JSON or YAML" }] };
  return parseDocument(text);
}

async function storedSet(c: AdminContext, name: string): Promise<FilterSet | undefined> {
  const text = await kvOf(c).get(filterSetKey(name));
  if (text === null) return undefined;
  const parsed = await parseDocument(text);
  const checked = parsed.ok ? checkFilterSet(name, parsed.value) : parsed;
  return checked.ok ? checked.value : undefined;
}

function byteLength(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/** Builds the admin sub-app, mounted at /admin. */
export function createAdminApp(): Hono<{ Bindings: AdminBindings }> {
  const admin = new Hono<{ Bindings: AdminBindings }>();

  admin.use("*", async function adminAuth(c, next) {
    const secret = adminTokenState(c.env.ADMIN_TOKEN);
    if (secret.state === "off") return c.json({ error: ADMIN_OFF_MESSAGE }, 404);
    if (secret.state === "too-short") return c.json({ error: ADMIN_TOKEN_TOO_SHORT_MESSAGE }, 500);
    const startedAt = Date.now();
    const header = c.req.header("authorization") ?? "";
    const given = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    const right = await sameSecret(given, secret.token);
    // The console's own calls carry the token itself, for a user signed in already: never throttled.
    const attempt =
      isConsoleCall(c.req.raw) && right
        ? ({ verdict: "accepted" } as const)
        : await judgeAdminAttempt(requestSource(c.req.raw), right, adminRateLimiter(c.env));
    if (attempt.verdict !== "accepted") {
      const throttled = attempt.verdict === "throttled" ? throttledMessage(attempt.retryAfterS) : undefined;
      // Someone guessing the admin token is the failed authentication most worth a trace.
      recordFailedAuthentication({
        request: c.req.raw,
        route: "/admin",
        reason: throttled ? "throttled-admin-token" : given === "" ? "missing-admin-token" : "wrong-admin-token",
        answer: { status: throttled ? 429 : 401, message: throttled ?? ADMIN_UNAUTHORIZED },
        startedAt,
        audit: gatewayConfig(c.env).audit,
        queue: c.env.AUDIT_QUEUE,
        waitUntil: (promise) => c.executionCtx.waitUntil(promise),
      });
      if (attempt.verdict === "throttled") {
        return c.json({ error: throttled }, 429, { "retry-after": String(attempt.retryAfterS) });
      }
      return c.json({ error: ADMIN_UNAUTHORIZED }, 401, { "www-authenticate": 'Bearer realm="mcp-edge-gateway admin"' });
    }
    await next();
  });

  const checkName: MiddlewareHandler<{ Bindings: AdminBindings }> = async function checkName(c, next) {
    if (!FILTER_SET_NAME.test(c.req.param("name") ?? "")) return problemsResponse(c, "invalid filter set name", [{ path: "", message: "a set name is 1-64 letters, digits, '-' or '_'" }]);
    await next();
  };
  admin.use("/filter-sets/:name", checkName);
  admin.use("/filter-sets/:name/*", checkName);

  admin.get("/filter-sets", async (c) => {
    return c.json({ filterSets: await listFilterSetNames(kvOf(c)) });
  });

  admin.put("/filter-sets/:name", async (c) => {
    const name = c.req.param("name");
    const parsed = await readDocument(c);
    const checked = parsed.ok ? checkFilterSet(name, parsed.value) : parsed;
    if (!checked.ok) return problemsResponse(c, `invalid filter set "${name}"; nothing was stored`, checked.problems);
    const key = filterSetKey(name);
    return storeDocument(c, kvOf(c), key, parsed.ok ? parsed.value : null, forgetCached, { name });
  });

  admin.get("/filter-sets/:name", async (c) => documentResponse(c, await kvOf(c).get(filterSetKey(c.req.param("name"))), `no filter set named "${c.req.param("name")}"`));

  admin.delete("/filter-sets/:name", async (c) => {
    const name = c.req.param("name");
    return deleteDocument(c, kvOf(c), filterSetKey(name), { label: name, forget: forgetCached, missing: `no filter set named "${name}"` });
  });

  admin.post("/filter-sets/:name/preview", async (c) => {
    const name = c.req.param("name");
    const text = await readBodyText(c.req.raw, MAX_PREVIEW_BYTES);
    if (text === undefined) return problemsResponse(c, "invalid preview request", [{ path: "", message: `larger than ${MAX_PREVIEW_BYTES} bytes` }]);
    const body = await parseDocument(text);
    const tooDeep = body.ok ? tooDeepAt(body.value) : undefined;
    if (tooDeep !== undefined) return problemsResponse(c, "invalid preview request", [{ path: tooDeep, message: `nested deeper than ${MAX_DOCUMENT_DEPTH} levels of objects and arrays` }]);
    if (!body.ok || !isObject(body.value) || typeof body.value["tool"] !== "string" || !("result" in body.value)) {
      return problemsResponse(c, "a preview needs {\"tool\": \"<upstream>___<tool>\", \"result\": <a tool result>}", body.ok ? [] : body.problems);
    }
    let set: FilterSet | undefined;
    if (body.value["set"] !== undefined) {
      const checked = checkFilterSet(name, body.value["set"]);
      if (!checked.ok) return problemsResponse(c, `invalid filter set "${name}"`, checked.problems);
      set = checked.value;
    } else set = await storedSet(c, name);
    if (!set) return c.json({ error: `no valid filter set named "${name}"` }, 404);
    const tool = body.value["tool"];
    const result = body.value["result"];
    const selected = selectFilter(set, tool);
    if (!selected) return c.json({ tool, rule: null, filtered: result, bytesBefore: byteLength(result), bytesAfter: byteLength(result), bytesSaved: 0 });
    const label = `filter set "${set.name}", rule "${selected.key}"`;
    try {
      // A tool result (content / structuredContent) is filtered as the gateway would; any other JSON as one value.
      const isToolResult = isObject(result) && (Array.isArray(result["content"]) || "structuredContent" in result);
      const filtered = isToolResult ? filterToolResult(result, selected.filter, label) : (applyToolFilter(result, selected.filter, label)?.value ?? result);
      const before = byteLength(result);
      const after = byteLength(filtered);
      return c.json({ tool, rule: selected.key, mode: set.mode, filtered, bytesBefore: before, bytesAfter: after, bytesSaved: before - after, tokensSavedEstimate: Math.round((before - after) / BYTES_PER_TOKEN) });
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      return c.json({ tool, rule: selected.key, error: `${error.message}; the gateway would answer this call with a tool error` }, 422);
    }
  });

  admin.put("/plan", async (c) => {
    const parsed = await readDocument(c);
    const checked = parsed.ok ? checkPlan(parsed.value) : parsed;
    if (!checked.ok) return problemsResponse(c, "invalid plan; nothing was stored", checked.problems);
    return storeDocument(c, kvOf(c), PLAN_KEY, parsed.ok ? parsed.value : null, forgetCached);
  });

  admin.delete("/plan", async (c) => deleteDocument(c, kvOf(c), PLAN_KEY, { label: "plan", forget: forgetCached }));

  admin.get("/plan", async (c) => documentResponse(c, await kvOf(c).get(PLAN_KEY), 'no plan is stored; every call uses the filter set named "default", if there is one'));

  addAuditRoutes(admin);

  admin.route("/", createShapingAdmin());
  admin.route("/", createUpstreamsAdmin());
  admin.route("/", createLiveUpstreamRoutes());
  admin.route("/", createPinsAdmin());
  admin.route("/api-keys", createApiKeyRoutes());
  admin.route("/upstream-connections", createUpstreamConnectionRoutes());
  admin.route("/", createAccessRoutes());

  addUnmatchedRoute(admin, ADMIN_BASE);
  return admin;
}
