/**
 * Authentication in tests: vars that turn AUTH on, API keys made through the real admin
 * API (stored in the test's KV), and the Authorization header of a key.
 */
import { gatewayFetch, type Vars } from "./gateway";

export const ADMIN_TOKEN = "admin-token-for-auth-tests";

/** Vars with API keys on (plus `auth` fields) and the admin API open to ADMIN_TOKEN. */
export function authVars(auth: Record<string, unknown> = { apiKeys: true }, more: Vars = {}): Vars {
  return { AUTH: JSON.stringify(auth), ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "30000", ...more };
}

/** A call of the admin API. */
export function admin(method: string, path: string, body?: unknown, vars: Vars = authVars()): Promise<Response> {
  return gatewayFetch(
    `/admin${path}`,
    { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
    vars,
  );
}

/** Makes an API key through the admin API; returns its id, key and Authorization header. */
export async function makeKey(fields: { principal: string; roles?: string[]; email?: string; expiresAt?: string }, vars?: Vars): Promise<{ id: string; key: string; headers: Record<string, string> }> {
  const response = await admin("POST", "/api-keys", { roles: [], ...fields }, vars);
  if (response.status !== 201) throw new Error(`POST /admin/api-keys: ${response.status} ${await response.text()}`);
  const { id, key } = (await response.json()) as { id: string; key: string };
  return { id, key, headers: { authorization: `Bearer ${key}` } };
}
