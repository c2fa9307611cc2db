/**
 * The admin API's API keys, mounted at /admin/api-keys (behind the admin token):
 *
 *   POST   /admin/api-keys        {"principal", "email"?, "roles", "expiresAt"?} -> {"id", "key"} (the key is shown once)
 *   GET    /admin/api-keys        ids, principals, emails, roles and dates; never keys or hashes
 *   DELETE /admin/api-keys/<id>   revokes: at once on this isolate, on every other within the cache TTL
 */
import { Hono } from "hono";
import { checkNewApiKey, createApiKey, listApiKeys, revokeApiKey } from "../auth/api-keys";
import { parseDocument } from "../storage/document-store";
import { readBodyText } from "./read-body";

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
    const parsed = text === undefined ? undefined : parseDocument(text);
    if (!parsed?.ok) return c.json({ error: "invalid API key request; send JSON", problems: [] }, 400);
    const checked = checkNewApiKey(parsed.value);
    if (!checked.ok) return c.json({ error: "invalid API key request; no key was made", problems: checked.problems }, 400);
    const { id, key, record } = await createApiKey(kvOf(c.env), checked.value);
    return c.json({ id, key, principal: record.principal, roles: record.roles, createdAt: record.createdAt, ...(record.expiresAt ? { expiresAt: record.expiresAt } : {}) }, 201, {
      "cache-control": "no-store",
    });
  });

  routes.get("/", async (c) => c.json({ apiKeys: await listApiKeys(kvOf(c.env)) }));

  routes.delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await revokeApiKey(kvOf(c.env), id))) return c.json({ error: `no API key with id "${id}"` }, 404);
    return c.json({ revoked: id });
  });

  return routes;
}
