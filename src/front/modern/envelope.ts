/**
 * The per-request envelope of 2026-07-28, checked on every modern request: the `_meta`
 * fields (basic/index, "_meta") and the HTTP headers that mirror the body
 * (basic/transports/streamable-http, "Server Validation"). Failures are tagged values;
 * `envelopeError` maps each to the HTTP status and JSON-RPC code the spec names, the
 * request's id echoed.
 */
import { fail, GatewayError, ok, type Result } from "../../core/errors";
import {
  INVALID_PARAMS,
  isObject,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type WireMessage,
} from "../../core/jsonrpc";
import { decodeHeaderValue } from "./header-value";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  HEADER_MISMATCH,
  LOG_LEVEL_META_KEY,
  METHOD_HEADER,
  MODERN_PROTOCOL_VERSIONS,
  NAME_HEADER,
  NAMED_METHODS,
  PROTOCOL_VERSION_HEADER,
  PROTOCOL_VERSION_META_KEY,
  SERVED_PROTOCOL_VERSIONS,
  UNSUPPORTED_PROTOCOL_VERSION,
} from "./protocol";

/** What a valid modern request declares about its client. */
export type Envelope = {
  readonly wire: WireMessage<JsonRpcRequest>;
  readonly protocolVersion: string;
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: JsonObject;
  /** Set when the client asked for log messages (`io.modelcontextprotocol/logLevel`). */
  readonly logLevel?: string;
};

export type EnvelopeFailure =
  | { readonly reason: "missing-meta"; readonly id: JsonRpcId; readonly detail: string }
  | { readonly reason: "unsupported-version"; readonly id: JsonRpcId; readonly requested: string }
  | { readonly reason: "header-mismatch"; readonly id: JsonRpcId; readonly detail: string };

/** Quotes a header value for a message: bounded, so an error never echoes a huge header. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

function checkHeaders(headers: Headers, request: JsonRpcRequest, protocolVersion: string): string | undefined {
  const version = headers.get(PROTOCOL_VERSION_HEADER);
  if (version === null) return "the MCP-Protocol-Version header is missing";
  if (version !== protocolVersion)
    return `MCP-Protocol-Version header value ${quoted(version)} does not match _meta value ${quoted(protocolVersion)}`;
  const method = headers.get(METHOD_HEADER);
  if (method === null) return "the Mcp-Method header is missing";
  if (method !== request.method)
    return `Mcp-Method header value ${quoted(method)} does not match body value ${quoted(request.method)}`;
  const source = NAMED_METHODS.get(request.method);
  if (!source) return undefined;
  const bodyValue = request.params?.[source];
  const raw = headers.get(NAME_HEADER);
  if (raw === null) return `the Mcp-Name header is missing (required for ${request.method})`;
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok) return `Mcp-Name header value ${quoted(raw)} is not valid Base64 sentinel form`;
  if (decoded.value !== bodyValue)
    return `Mcp-Name header value ${quoted(decoded.value)} does not match body value ${quoted(String(bodyValue))}`;
  return undefined;
}

/**
 * Checks the `_meta` envelope and the mirrored headers of a modern request.
 *
 * @example
 * const envelope = checkEnvelope(request.headers, wire);
 * if (!envelope.ok) throw envelopeError(envelope);
 */
export function checkEnvelope(headers: Headers, wire: WireMessage<JsonRpcRequest>): Result<Envelope, EnvelopeFailure> {
  const { id, params } = wire.message;
  const meta = isObject(params) ? params["_meta"] : undefined;
  if (!isObject(meta))
    return fail({
      reason: "missing-meta",
      id,
      detail: `params._meta with ${PROTOCOL_VERSION_META_KEY} and ${CLIENT_CAPABILITIES_META_KEY} is required`,
    });
  const protocolVersion = meta[PROTOCOL_VERSION_META_KEY];
  if (typeof protocolVersion !== "string")
    return fail({ reason: "missing-meta", id, detail: `_meta.${PROTOCOL_VERSION_META_KEY} (a string) is required` });
  const clientCapabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  if (!isObject(clientCapabilities))
    return fail({
      reason: "missing-meta",
      id,
      detail: `_meta.${CLIENT_CAPABILITIES_META_KEY} (an object) is required`,
    });
  const clientInfo = meta[CLIENT_INFO_META_KEY];
  if (clientInfo !== undefined && !isObject(clientInfo))
    return fail({ reason: "missing-meta", id, detail: `_meta.${CLIENT_INFO_META_KEY} must be an object` });
  const logLevel = meta[LOG_LEVEL_META_KEY];
  const mismatch = checkHeaders(headers, wire.message, protocolVersion);
  if (mismatch) return fail({ reason: "header-mismatch", id, detail: mismatch });
  if (!(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(protocolVersion))
    return fail({ reason: "unsupported-version", id, requested: protocolVersion });
  return ok({
    wire,
    protocolVersion,
    clientCapabilities,
    clientInfo: clientInfo ?? {},
    ...(typeof logLevel === "string" ? { logLevel } : {}),
  });
}

/** The wire error of an envelope failure: HTTP 400 and the code the spec names, the request id echoed. */
export function envelopeError(failure: EnvelopeFailure): GatewayError {
  switch (failure.reason) {
    case "missing-meta":
      return new GatewayError(400, INVALID_PARAMS, `Invalid params: ${failure.detail}`, undefined, failure.id);
    case "unsupported-version":
      return new GatewayError(
        400,
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        { supported: [...SERVED_PROTOCOL_VERSIONS], requested: failure.requested },
        failure.id,
      );
    case "header-mismatch":
      return new GatewayError(400, HEADER_MISMATCH, `Header mismatch: ${failure.detail}`, undefined, failure.id);
    default: {
      const never: never = failure;
      return never;
    }
  }
}
