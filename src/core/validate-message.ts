/**
 * Validating JSON-RPC messages: what a client sent (one JSON-RPC 2.0 message, or a clear
 * 400 naming what is wrong so a client author can fix it), and what an upstream sent.
 */
import { GatewayError } from "./errors";
import { INVALID_REQUEST, isId, isObject, type JsonRpcId, type JsonRpcMessage, type WireMessage } from "./jsonrpc";

/**
 * Checks that `value` is one JSON-RPC 2.0 message. The error names what is wrong so a
 * client author can fix it.
 */
export function validateMessage(value: unknown): JsonRpcMessage {
  if (!isObject(value))
    throw new GatewayError(400, INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be a JSON object");
  const id = "id" in value ? value["id"] : undefined;
  if (value["jsonrpc"] !== "2.0") {
    throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', undefined, idOrNull(id));
  }
  if ("params" in value && !isObject(value["params"])) {
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      'Invalid Request: "params" must be an object',
      undefined,
      idOrNull(id),
    );
  }
  if ("method" in value) {
    if (typeof value["method"] !== "string" || value["method"] === "") {
      throw new GatewayError(
        400,
        INVALID_REQUEST,
        'Invalid Request: "method" must be a non-empty string',
        undefined,
        idOrNull(id),
      );
    }
    if ("id" in value && !isId(id)) {
      throw new GatewayError(
        400,
        INVALID_REQUEST,
        'Invalid Request: "id" must be a string or a number',
        undefined,
        null,
      );
    }
    return value as JsonRpcMessage;
  }
  if ("result" in value || "error" in value) {
    if (!isId(id))
      throw new GatewayError(
        400,
        INVALID_REQUEST,
        'Invalid Request: a response needs a string or number "id"',
        undefined,
        null,
      );
    if ("result" in value && !isObject(value["result"])) {
      throw new GatewayError(400, INVALID_REQUEST, 'Invalid Request: "result" must be an object', undefined, id);
    }
    return value as JsonRpcMessage;
  }
  throw new GatewayError(
    400,
    INVALID_REQUEST,
    'Invalid Request: a message needs "method" (request, notification) or "result"/"error" (response)',
    undefined,
    idOrNull(id),
  );
}

/**
 * `validateMessage` for what a client sent, which the gateway answers: an integer id past
 * ±2^53 has already lost its last digits to JSON.parse, and an answer carrying the rounded
 * id would match no request of the client's; such a message is refused instead (its id,
 * which cannot be written back, as null).
 */
export function validateClientMessage(value: unknown): JsonRpcMessage {
  const message = validateMessage(value);
  const id = "id" in message ? message.id : undefined;
  if (typeof id === "number" && Number.isInteger(id) && !Number.isSafeInteger(id)) {
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      `Invalid Request: "id" is an integer beyond ${Number.MAX_SAFE_INTEGER} (2^53 - 1), which the gateway cannot write back exactly; use a string id or a smaller number`,
      undefined,
      null,
    );
  }
  return message;
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
