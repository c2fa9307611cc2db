/**
 * PUT, GET and DELETE of one live-edited KV document under /admin (icons, overrides,
 * rules, and any later one): the body is JSON or YAML, checked by the document's own
 * checker before anything is stored, the problems listed with their JSON Pointers; this
 * isolate's cached copy is dropped after a write (other isolates pick it up within the
 * document cache TTL).
 */
import type { Hono } from "hono";
import { forgetDocument, parseDocument, type Checked } from "../storage/document-store";
import { readBodyText } from "./read-body";

const MAX_DOCUMENT_BYTES = 512 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace };

function kvOf(env: Bindings): KVNamespace {
  const kv = env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

/**
 * Adds `PUT|GET|DELETE <path>` for the document at KV `key`.
 *
 * @example
 * documentRoutes(admin, "/overrides", { key: OVERRIDES_KEY, label: "overrides document", check: checkOverrides });
 */
export function documentRoutes<B extends Bindings>(app: Hono<{ Bindings: B }>, path: string, { key, label, check }: { key: string; label: string; check: (value: unknown) => Checked<unknown> }): void {
  app.put(path, async (c) => {
    const text = await readBodyText(c.req.raw, MAX_DOCUMENT_BYTES);
    const parsed: Checked<unknown> =
      text === undefined
        ? { ok: false, problems: [{ path: "", message: `larger than ${MAX_DOCUMENT_BYTES} bytes` }] }
        : text.trim() === ""
          ? { ok: false, problems: [{ path: "", message: "the body is empty; send the document as JSON or YAML" }] }
          : parseDocument(text);
    const checked = parsed.ok ? check(parsed.value) : parsed;
    if (!parsed.ok || !checked.ok) return c.json({ error: `invalid ${label}; nothing was stored`, problems: checked.ok ? [] : checked.problems }, 400);
    await kvOf(c.env).put(key, JSON.stringify(parsed.value));
    forgetDocument(key);
    return c.json({ stored: parsed.value });
  });
  app.get(path, async (c) => {
    const text = await kvOf(c.env).get(key);
    if (text === null) return c.json({ error: `no ${label} is stored` }, 404);
    const parsed = parseDocument(text);
    return parsed.ok ? c.json(parsed.value as object) : c.text(text, 200, { "content-type": "text/plain; charset=utf-8" });
  });
  app.delete(path, async (c) => {
    await kvOf(c.env).delete(key);
    forgetDocument(key);
    return c.json({ deleted: label });
  });
}
