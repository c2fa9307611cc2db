/**
 * JSON-RPC 2.0 messages as the gateway sees them: the parsed form for routing and
 * policy, and the original text for relaying byte for byte.
 */
import { GatewayError } from "./errors";

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

export type MessageKind = "request" | "notification" | "response";

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

export function kindOf(message: JsonRpcMessage): MessageKind {
  if ("method" in message) return "id" in message ? "request" : "notification";
  return "response";
}

/**
 * Checks that `value` is one JSON-RPC 2.0 message. The error names what is wrong so a
 * client author can fix it.
 */
export function validateMessage(value: unknown): JsonRpcMessage {
  if (!isObject(value)) throw new GatewayError(400, INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be a JSON object");
  const id = "id" in value ? value["id"] : undefined;
  if (value["jsonrpc"] !== "2.0") {
    throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', undefined, idOrNull(id));
  }
  if ("params" in value && !isObject(value["params"])) {
    throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "params" must be an object', undefined, idOrNull(id));
  }
  if ("method" in value) {
    if (typeof value["method"] !== "string" || value["method"] === "") {
      throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "method" must be a non-empty string', undefined, idOrNull(id));
    }
    if ("id" in value && !isId(id)) {
      throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "id" must be a string or a number', undefined, null);
    }
    return value as JsonRpcMessage;
  }
  if ("result" in value || "error" in value) {
    if (!isId(id)) throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: a response needs a string or number "id"', undefined, null);
    if ("result" in value && !isObject(value["result"])) {
      throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "result" must be an object', undefined, id);
    }
    return value as JsonRpcMessage;
  }
  throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: a message needs "method" (request, notification) or "result"/"error" (response)', undefined, idOrNull(id));
}

function idOrNull(id: unknown): JsonRpcId | null {
  return isId(id) ? id : null;
}

/** Parses an upstream's message text; undefined when it is not a JSON-RPC message. */
export function readUpstreamMessage(text: string): WireMessage | undefined {
  try {
    return { text, message: validateMessage(JSON.parse(text)) };
  } catch {
    return undefined;
  }
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
