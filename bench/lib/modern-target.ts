/**
 * A benchmark target called the 2026-07-28 way: no session and no handshake, every
 * tools/call (or tools/list, `spec.method`) carries the `_meta` envelope (protocol version, client capabilities, client
 * info) and the headers mirroring it (MCP-Protocol-Version, Mcp-Method, Mcp-Name), as an
 * SDK v2 client sends it. The answer must be a complete result (`resultType`).
 */
import type { Target, TargetSpec } from "./target.ts";

export const MODERN_PROTOCOL_VERSION = "2026-07-28";
const REQUEST_TIMEOUT_MS = 10_000;

let nextId = 1;

/** The target, checked with one call before it is returned (so a broken one fails before any measurement). */
export async function openModernTarget(spec: TargetSpec): Promise<Target> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN_PROTOCOL_VERSION,
    "mcp-method": spec.method ?? "tools/call",
    ...(spec.method === "tools/list" ? {} : { "mcp-name": spec.tool }),
    ...spec.headers,
  };
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "mcp-edge-gateway-bench", version: "0.1.0" },
  };
  const call = async () => {
    const method = spec.method ?? "tools/call";
    const params = method === "tools/call" ? { name: spec.tool, arguments: spec.args, _meta: meta } : { _meta: meta };
    const body = JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params });
    const response = await fetch(spec.url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== 200 || !text.includes('"resultType":"complete"'))
      throw new Error(`${spec.name}: ${method} answered HTTP ${response.status}: ${text.slice(0, 300)}`);
  };
  await call();
  return { ...spec, call };
}
