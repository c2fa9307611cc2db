/**
 * The filters' part of the admin API: filter sets and the plan, edited while the gateway runs
 * (admin/app.ts checks the admin token first). Every write is validated and nothing invalid
 * is stored; the answer lists each error with its location in the document (a JSON Pointer).
 *
 *   GET    /admin/filter-sets                 names of the stored sets
 *   PUT    /admin/filter-sets/<name>          body: JSON or YAML
 *   GET    /admin/filter-sets/<name>
 *   DELETE /admin/filter-sets/<name>
 *   POST   /admin/filter-sets/<name>/preview  body: {"tool": "...", "result": <a tool result>, "set"?: <an unsaved set>}
 *   PUT    /admin/plan, GET /admin/plan, DELETE /admin/plan
 */
import { PLAN_KEY, filterSetKey, listFilterSetNames } from "../../storage/document-keys";
import type { Context, MiddlewareHandler } from "hono";
import type { AdminApp, AdminBindings } from "../../admin/app";
import { applyToolFilter, BYTES_PER_TOKEN, filterToolResult, FilterError, selectFilter } from "./apply-filter";
import { checkFilterSet, checkPlan, FILTER_SET_NAME, type FilterSet } from "./filter-set";
import { parseDocument, type Checked, type DocumentProblem } from "../../storage/document-store";
import { forgetCached } from "./filter-store";
import { MAX_DOCUMENT_DEPTH, tooDeepAt } from "../../storage/document-limits";
import { isObject } from "../../core/jsonrpc";
import { readBodyText } from "../../admin/read-body";
import { documentResponse } from "../../admin/document-routes";
import { deleteDocument, storeDocument } from "../../admin/document-versions";

const MAX_DOCUMENT_BYTES = 512 * 1024;
/** A preview carries a sample tool result beside the set, so it may be larger than a document. */
const MAX_PREVIEW_BYTES = 4 * 1024 * 1024;

type AdminContext = Context<{ Bindings: AdminBindings }>;

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
  if (text === undefined)
    return { ok: false, problems: [{ path: "", message: `larger than ${MAX_DOCUMENT_BYTES} bytes` }] };
  if (text.trim() === "")
    return { ok: false, problems: [{ path: "", message: "the body is empty; send the document as JSON or YAML" }] };
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

/** Adds the filter-set and plan routes to the admin API. */
export function addFilterRoutes(admin: AdminApp): void {
  const checkName: MiddlewareHandler<{ Bindings: AdminBindings }> = async function checkName(c, next) {
    if (!FILTER_SET_NAME.test(c.req.param("name") ?? ""))
      return problemsResponse(c, "invalid filter set name", [
        { path: "", message: "a set name is 1-64 letters, digits, '-' or '_'" },
      ]);
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

  admin.get("/filter-sets/:name", async (c) =>
    documentResponse(
      c,
      await kvOf(c).get(filterSetKey(c.req.param("name"))),
      `no filter set named "${c.req.param("name")}"`,
    ),
  );

  admin.delete("/filter-sets/:name", async (c) => {
    const name = c.req.param("name");
    return deleteDocument(c, kvOf(c), filterSetKey(name), {
      label: name,
      forget: forgetCached,
      missing: `no filter set named "${name}"`,
    });
  });

  admin.post("/filter-sets/:name/preview", async (c) => {
    const name = c.req.param("name");
    const text = await readBodyText(c.req.raw, MAX_PREVIEW_BYTES);
    if (text === undefined)
      return problemsResponse(c, "invalid preview request", [
        { path: "", message: `larger than ${MAX_PREVIEW_BYTES} bytes` },
      ]);
    const body = await parseDocument(text);
    const tooDeep = body.ok ? tooDeepAt(body.value) : undefined;
    if (tooDeep !== undefined)
      return problemsResponse(c, "invalid preview request", [
        { path: tooDeep, message: `nested deeper than ${MAX_DOCUMENT_DEPTH} levels of objects and arrays` },
      ]);
    if (!body.ok || !isObject(body.value) || typeof body.value["tool"] !== "string" || !("result" in body.value)) {
      return problemsResponse(
        c,
        'a preview needs {"tool": "<upstream>___<tool>", "result": <a tool result>}',
        body.ok ? [] : body.problems,
      );
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
    if (!selected)
      return c.json({
        tool,
        rule: null,
        filtered: result,
        bytesBefore: byteLength(result),
        bytesAfter: byteLength(result),
        bytesSaved: 0,
      });
    const label = `filter set "${set.name}", rule "${selected.key}"`;
    try {
      // A tool result (content / structuredContent) is filtered as the gateway would; any other JSON as one value.
      const isToolResult = isObject(result) && (Array.isArray(result["content"]) || "structuredContent" in result);
      const filtered = isToolResult
        ? filterToolResult(result, selected.filter, label)
        : (applyToolFilter(result, selected.filter, label)?.value ?? result);
      const before = byteLength(result);
      const after = byteLength(filtered);
      return c.json({
        tool,
        rule: selected.key,
        mode: set.mode,
        filtered,
        bytesBefore: before,
        bytesAfter: after,
        bytesSaved: before - after,
        tokensSavedEstimate: Math.round((before - after) / BYTES_PER_TOKEN),
      });
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      return c.json(
        { tool, rule: selected.key, error: `${error.message}; the gateway would answer this call with a tool error` },
        422,
      );
    }
  });

  admin.put("/plan", async (c) => {
    const parsed = await readDocument(c);
    const checked = parsed.ok ? checkPlan(parsed.value) : parsed;
    if (!checked.ok) return problemsResponse(c, "invalid plan; nothing was stored", checked.problems);
    return storeDocument(c, kvOf(c), PLAN_KEY, parsed.ok ? parsed.value : null, forgetCached);
  });

  admin.delete("/plan", async (c) => deleteDocument(c, kvOf(c), PLAN_KEY, { label: "plan", forget: forgetCached }));

  admin.get("/plan", async (c) =>
    documentResponse(
      c,
      await kvOf(c).get(PLAN_KEY),
      'no plan is stored; every call uses the filter set named "default", if there is one',
    ),
  );
}
