/**
 * The admin routes of the guardrails document (mounted under /admin, behind its bearer):
 *
 *   PUT    /admin/guardrails           the whole document (JSON or YAML), checked; nothing invalid is stored
 *   GET    /admin/guardrails           the stored document, with its ETag
 *   DELETE /admin/guardrails           no guardrails (If-Match honoured)
 *   POST   /admin/guardrails/preview   {"upstream", "tool", "persona"?, "on"?, "sample", "guardrails"?}
 *                                      ("guardrails": an unsaved document to preview instead of the stored one)
 *
 * Writes take If-Match / If-None-Match as every document does (admin/document-versions.ts)
 * and drop this isolate's copy at once (other isolates within the document cache TTL).
 * The engine (patterns, detectors) is loaded for a write or a preview, never for a read.
 */
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { documentResponse } from "../../admin/document-routes";
import { deleteDocument, storeDocument } from "../../admin/document-versions";
import { readBodyText } from "../../admin/read-body";
import { gatewayConfig } from "../../config/gateway-config";
import { isObject } from "../../core/jsonrpc";
import { parseDocument, type Checked } from "../../storage/document-store";
import { loadGuardrailsEngine } from "./engine-loader";
import { forgetGuardrails, GUARDRAILS_KEY } from "./store";

/**
 * The longest document the admin API takes, in bytes. Defined here, not in document.ts:
 * importing a value from the engine's files would pull them into the main module.
 */
export const MAX_GUARDRAILS_DOCUMENT_BYTES = 256 * 1024;
/** A preview carries a sample beside the rules, so it may be larger than a document. */
export const MAX_PREVIEW_BYTES = 4 * 1024 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace };

function kvOf(c: Context<{ Bindings: Bindings }>): KVNamespace {
  if (!c.env.GATEWAY_KV) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return c.env.GATEWAY_KV;
}

async function readBody(request: Request, maxBytes: number): Promise<Checked<unknown>> {
  const text = await readBodyText(request, maxBytes);
  if (text === undefined) return { ok: false, problems: [{ path: "", message: `larger than ${maxBytes} bytes` }] };
  if (text.trim() === "")
    return { ok: false, problems: [{ path: "", message: "the body is empty; send the document as JSON or YAML" }] };
  return parseDocument(text);
}

/** What a written document's webhooks and models are held to: this Worker's secrets, AI binding and URL. */
function writeContext(c: Context<{ Bindings: Bindings }>) {
  return { env: c.env as Readonly<Record<string, unknown>>, requestUrl: new URL(c.req.url) };
}

/**
 * Builds the guardrails admin routes, mounted at /admin.
 *
 * @example
 * admin.route("/", createGuardrailsAdmin());
 */
export function createGuardrailsAdmin(): Hono<{ Bindings: Bindings }> {
  const admin = new Hono<{ Bindings: Bindings }>();
  const forget = () => forgetGuardrails();

  admin.put("/guardrails", async (c) => {
    const body = await readBody(c.req.raw, MAX_GUARDRAILS_DOCUMENT_BYTES);
    const checked = body.ok ? (await loadGuardrailsEngine()).checkGuardrails(body.value, writeContext(c)) : body;
    if (!body.ok || !checked.ok)
      return c.json(
        { error: "invalid guardrails document; nothing was stored", problems: checked.ok ? [] : checked.problems },
        400,
      );
    return storeDocument(c, kvOf(c), GUARDRAILS_KEY, body.value, forget);
  });

  admin.get("/guardrails", async (c) =>
    documentResponse(c, await kvOf(c).get(GUARDRAILS_KEY), "no guardrails document is stored; no call is checked"),
  );

  admin.delete("/guardrails", async (c) =>
    deleteDocument(c, kvOf(c), GUARDRAILS_KEY, {
      label: "guardrails document",
      forget,
      missing: "no guardrails document is stored",
    }),
  );

  admin.post("/guardrails/preview", async (c) => {
    const body = await readBody(c.req.raw, MAX_PREVIEW_BYTES);
    if (!body.ok) return c.json({ error: "invalid preview request", problems: body.problems }, 400);
    const engine = await loadGuardrailsEngine();
    let document: unknown = isObject(body.value) ? body.value["guardrails"] : undefined;
    if (document === undefined) {
      const stored = await kvOf(c).get(GUARDRAILS_KEY);
      if (stored === null)
        return c.json({ error: 'no guardrails document is stored; send one as "guardrails" to preview it' }, 404);
      const parsed = await parseDocument(stored);
      document = parsed.ok ? parsed.value : undefined;
    }
    const checked = engine.checkGuardrails(document);
    if (!checked.ok)
      return c.json(
        {
          error: "invalid guardrails document",
          problems: checked.problems.map((p) => ({ ...p, path: `/guardrails${p.path}` })),
        },
        400,
      );
    const preview = engine.previewGuardrails(checked.value, body.value, gatewayConfig(c.env).audit.redactKeys);
    if (!preview.ok) return c.json({ error: "invalid preview request", problems: preview.problems }, 400);
    const { ok: _ok, ...answer } = preview;
    return c.json(answer);
  });

  return admin;
}
