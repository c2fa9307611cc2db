/**
 * PUT, GET and DELETE of one live-edited KV document under /admin (icons, overrides,
 * rules, and any later one): the body is JSON or YAML, checked by the document's own
 * checker before anything is stored, the problems listed with their JSON Pointers; this
 * isolate's cached copy is dropped after a write (other isolates pick it up within the
 * document cache TTL). GET answers an ETag; a write with If-Match is refused with 412
 * when it no longer holds (document-versions.ts).
 */
import type { Context } from "hono";
import type { Hono } from "./hono-app";
import { forgetDocument, parseDocument, type Checked } from "../storage/document-store";
import { deleteDocument, etagHeaders, storeDocument } from "./document-versions";
import { readBodyText } from "./read-body";

const MAX_DOCUMENT_BYTES = 512 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace };

function kvOf(env: Bindings): KVNamespace {
  const kv = env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

/**
 * A GET's answer for a document's stored text: the document as JSON (as text when it does
 * not parse), with its ETag; 404 with `missing` when nothing is stored.
 */
export async function documentResponse(c: Context, text: string | null, missing: string): Promise<Response> {
  if (text === null) return c.json({ error: missing }, 404);
  const parsed = await parseDocument(text);
  const headers = await etagHeaders(text);
  return parsed.ok
    ? c.json(parsed.value as object, 200, headers)
    : c.text(text, 200, { ...headers, "content-type": "text/plain; charset=utf-8" });
}

/**
 * Adds `PUT|GET|DELETE <path>` for the document at KV `key`.
 *
 * @example
 * documentRoutes(admin, "/overrides", { key: OVERRIDES_KEY, label: "overrides document", check: checkOverrides });
 */
export function documentRoutes<B extends Bindings>(
  app: Hono<{ Bindings: B }>,
  path: string,
  { key, label, check }: { key: string; label: string; check: (value: unknown) => Checked<unknown> },
): void {
  app.put(path, async (c) => {
    const text = await readBodyText(c.req.raw, MAX_DOCUMENT_BYTES);
    const parsed: Checked<unknown> =
      text === undefined
        ? { ok: false, problems: [{ path: "", message: `larger than ${MAX_DOCUMENT_BYTES} bytes` }] }
        : text.trim() === ""
          ? { ok: false, problems: [{ path: "", message: "the body is empty; send the document as JSON or YAML" }] }
          : await parseDocument(text);
    const checked = parsed.ok ? check(parsed.value) : parsed;
    if (!parsed.ok || !checked.ok)
      return c.json(
        { error: `invalid ${label}; nothing was stored`, problems: checked.ok ? [] : checked.problems },
        400,
      );
    return storeDocument(c, kvOf(c.env), key, parsed.value, forgetDocument);
  });
  app.get(path, async (c) => documentResponse(c, await kvOf(c.env).get(key), `no ${label} is stored`));
  app.delete(path, async (c) => deleteDocument(c, kvOf(c.env), key, { label, forget: forgetDocument }));
}
