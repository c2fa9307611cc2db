/**
 * Requests of a 2026-07-28 client, as an SDK v2 client sends them: the `_meta` envelope
 * on every request and the headers mirroring the body.
 */
import { answer, post, type GatewayTarget, type Json, type Vars } from "./gateway";

export const MODERN = "2026-07-28";

export type ModernOptions = {
  capabilities?: Record<string, unknown>;
  vars?: Vars;
  target?: GatewayTarget;
  id?: number | string;
  headers?: Record<string, string>;
  progressToken?: string;
  /** Returns once the Worker's `waitUntil` work (audit events) is done. */
  settle?: boolean;
};

let nextId = 1;

/** POSTs a modern request (params plus the `_meta` envelope). */
export function modernPost(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
): Promise<Response> {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
    "io.modelcontextprotocol/clientInfo": { name: "modern-test", version: "2" },
    ...(options.progressToken !== undefined ? { progressToken: options.progressToken } : {}),
  };
  const name =
    typeof params["name"] === "string" ? params["name"] : typeof params["uri"] === "string" ? params["uri"] : undefined;
  const headers: Record<string, string> = {
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
    ...options.headers,
  };
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: options.id ?? nextId++,
    method,
    params: { ...params, _meta: meta },
  });
  return post(path, body, { headers, vars: options.vars, target: options.target, settle: options.settle ?? false });
}

/** A modern request's final JSON-RPC response. */
export async function modern(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
): Promise<Json> {
  return answer(await modernPost(path, method, params, options));
}
