/**
 * Admin API calls for tests: a bearer token turned on through vars, documents sent as
 * JSON, YAML text or bytes.
 */
import { gatewayFetch, type GatewayTarget, type Vars } from "./gateway";

export const TEST_ADMIN_TOKEN = "admin-token-for-shaping-tests-0123456789";
/** Vars that turn the admin API on and make every isolate read KV documents afresh. */
export const ADMIN_VARS: Vars = { ADMIN_TOKEN: TEST_ADMIN_TOKEN, FILTER_CACHE_TTL_MS: "0" };

/** Sends `method path` to the admin API; `body` as JSON unless it is a string or bytes. */
export function admin(
  method: string,
  path: string,
  body?: unknown,
  options: { vars?: Vars; contentType?: string; target?: GatewayTarget; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...options.headers };
  let payload: BodyInit | undefined;
  if (body instanceof Uint8Array) payload = body;
  else if (typeof body === "string") payload = body;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  return gatewayFetch(
    `/admin${path}`,
    { method, headers, ...(payload !== undefined ? { body: payload } : {}) },
    { ...ADMIN_VARS, ...options.vars },
    options.target,
  );
}

/** Stores a document through the admin API and fails the test if it is refused. */
export async function putDocument(path: string, document: unknown, vars: Vars = {}): Promise<void> {
  const response = await admin("PUT", path, document, { vars });
  if (response.status !== 200) throw new Error(`PUT /admin${path}: ${response.status} ${await response.text()}`);
}
