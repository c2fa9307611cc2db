/**
 * The admin API's API keys, mounted at /admin/api-keys (behind the admin token):
 *
 *   POST   /admin/api-keys        {"principal", "email"?, "roles", "expiresAt"?} -> {"id", "key"} (the key is shown once)
 *   GET    /admin/api-keys        ids, principals, emails, roles and dates; never keys or hashes
 *                                  (?limit=1..1000, default 1000; "cursor" in the answer when more follow: ?cursor=<it>)
 *   DELETE /admin/api-keys/<id>   revokes: at once on this isolate, on every other within the cache TTL
 */
import { Hono } from "../../admin/hono-app";
import { checkNewApiKey, createApiKey, revokeApiKey } from "./api-keys";
import { listApiKeyPage, MAX_PAGE_KEYS } from "./api-key-listing";
import { parseDocument } from "../../storage/document-store";
import { readBodyText } from "../../admin/read-body";

const MAX_BODY_BYTES = 16 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace };

function kvOf(env: Bindings): KVNamespace {
  if (!env.GATEWAY_KV) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return env.GATEWAY_KV;
}

/**
 * The API-key routes, to be mounted under the authenticated admin app.
 *
 * @example
 * admin.route("/api-keys", createApiKeyRoutes());
 */
export function createApiKeyRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();

  routes.post("/", async (c) => {
    const text = await readBodyText(c.req.raw, MAX_BODY_BYTES);
    const parsed = text === undefined ? undefined : await parseDocument(text);
    if (!parsed?.ok) return c.json({ error: "invalid API key request; send JSON", problems: [] }, 400);
    const checked = checkNewApiKey(parsed.value);
    if (!checked.ok)
      return c.json({ error: "invalid API key request; no key was made", problems: checked.problems }, 400);
    const { id, key, record } = await createApiKey(kvOf(c.env), checked.value);
    return c.json(
      {
        id,
        key,
        principal: record.principal,
        roles: record.roles,
        createdAt: record.createdAt,
        ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}),
      },
      201,
      {
        "cache-control": "no-store",
      },
    );
  });

  routes.get("/", async (c) => {
    const limitParam = c.req.query("limit");
    const limit = limitParam === undefined ? MAX_PAGE_KEYS : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_KEYS)
      return c.json({ error: `limit: an integer from 1 to ${MAX_PAGE_KEYS}` }, 400);
    const page = await listApiKeyPage(kvOf(c.env), { limit, cursor: c.req.query("cursor") });
    if (!page.ok) return c.json({ error: "cursor: not one this listing gave; start again without it" }, 400);
    return c.json(page.value);
  });

  routes.delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await revokeApiKey(kvOf(c.env), id))) return c.json({ error: `no API key with id "${id}"` }, 404);
    return c.json({ revoked: id });
  });

  return routes;
}
