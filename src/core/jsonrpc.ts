/**
 * JSON-RPC 2.0 messages as the gateway sees them: the parsed form for routing and
 * policy, and the original text for relaying byte for byte.
 */

export type JsonRpcId = string | number;

export type JsonObject = { [key: string]: unknown };

export type JsonRpcRequest = { jsonrpc: "2.0"; id: JsonRpcId; method: string; params?: JsonObject };
export type JsonRpcNotification = { jsonrpc: "2.0"; method: string; params?: JsonObject };
export type JsonRpcResponse =
  | { jsonrpc: "2.0"; id: JsonRpcId; result: JsonObject }
  | { jsonrpc: "2.0"; id: JsonRpcId | null; error: { code: number; message: string; data?: unknown } };

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** A message with the exact text it arrived as. `text` is what gets relayed. */
export type WireMessage<M extends JsonRpcMessage = JsonRpcMessage> = { readonly text: string; readonly message: M };

/**
 * A notification relayed as the upstream's bytes, never decoded (upstream/reply-body.ts):
 * its JSON text as UTF-8 on one line (it came as one SSE data line), a view of a buffer
 * the reader reuses, so valid only until the `emit` that carries it resolves; with what
 * was read of it.
 */
export type NotificationBytes = { readonly bytes: Uint8Array; readonly method: string; readonly level?: string };

/** A message toward the client: its text, or a notification's bytes. */
export type OutgoingMessage = string | NotificationBytes;

export type MessageKind = "request" | "notification" | "response";

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a valid JSON-RPC id (a string or a number). */
export function isId(value: unknown): value is JsonRpcId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

export function kindOf(message: JsonRpcMessage): MessageKind {
  if ("method" in message) return "id" in message ? "request" : "notification";
  return "response";
}

/** Serialises a result response the gateway makes itself. */
export function resultText(id: JsonRpcId, result: JsonObject): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result });
}

/** Serialises an error response. */
export function errorText(id: JsonRpcId | null, code: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify({ jsonrpc: "2.0", id, error });
}

/**
 * Sets a member of a JSON object being built as `JSON.parse` owns it: a "__proto__" key
 * stays a plain member, never the object's prototype (defineProperty only for that key:
 * on every key it would make each copy a slow dictionary-mode object).
 */
export function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
