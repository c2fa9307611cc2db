/**
 * Authentication in tests: vars that turn AUTH on, API keys made through the real admin
 * API (stored in the test's KV), and the Authorization header of a key.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createApiKey, type NewApiKey } from "../../src/features/api-keys/api-keys";
import { gatewayFetch, type Vars } from "./gateway";

export const ADMIN_TOKEN = "admin-token-for-auth-tests-0123456789";

/** Vars with API keys on (plus `auth` fields) and the admin API open to ADMIN_TOKEN. */
export function authVars(auth: Record<string, unknown> = { apiKeys: true }, more: Vars = {}): Vars {
  return { AUTH: JSON.stringify(auth), ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "30000", ...more };
}

/** A call of the admin API. */
export function admin(method: string, path: string, body?: unknown, vars: Vars = authVars()): Promise<Response> {
  return gatewayFetch(
    `/admin${path}`,
    {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    },
    vars,
  );
}

/** Makes an API key through the admin API; returns its id, key and Authorization header. */
export async function makeKey(
  fields: { principal: string; roles?: string[]; email?: string; expiresAt?: string },
  vars?: Vars,
): Promise<{ id: string; key: string; headers: Record<string, string> }> {
  const response = await admin("POST", "/api-keys", { roles: [], ...fields }, vars);
  if (response.status !== 201) throw new Error(`POST /admin/api-keys: ${response.status} ${await response.text()}`);
  const { id, key } = (await response.json()) as { id: string; key: string };
  return { id, key, headers: { authorization: `Bearer ${key}` } };
}

/**
 * Checks that what `send` gets on `/mcp/<upstream>` is exactly what it gets on a route
 * naming no upstream at all: the same status and body (the 404 naming only the upstreams
 * the caller may reach), the route's name aside.
 */
export async function expectNoSuchUpstream(
  send: (path: string) => Promise<Response>,
  upstream: string,
  label?: string,
): Promise<void> {
  const ghost = `ghost${crypto.randomUUID().slice(0, 8)}`;
  const [response, unknown] = [await send(`/mcp/${upstream}`), await send(`/mcp/${ghost}`)];
  expect(unknown.status, label).toBe(404);
  expect(response.status, label).toBe(404);
  expect(await response.text(), label).toBe((await unknown.text()).replace(ghost, upstream));
}

/**
 * A key stored in the test's KV as the gateway stored keys before listings were kept in
 * KV metadata: the record alone (a listing reads such keys one by one, 100 a page).
 */
export async function storeKeyWithoutMetadata(fields: NewApiKey): Promise<Awaited<ReturnType<typeof createApiKey>>> {
  const key = await createApiKey(env.GATEWAY_KV, fields);
  await env.GATEWAY_KV.put(`api-keys/${key.id}`, JSON.stringify(key.record));
  return key;
}
