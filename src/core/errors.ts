/**
 * The one boundary error type and its formatter.
 *
 * Expected failures travel as tagged values (see `Result`) and are turned into a
 * `GatewayError` by an exhaustive switch where they meet the wire. Anything else that
 * is thrown is a bug: it becomes a 500 with a generic message, and is logged.
 */
import { errorText, INTERNAL_ERROR, type JsonRpcId } from "./jsonrpc";

/** A value-or-failure for expected failures, tagged by `reason`. */
export type Result<T, E extends { reason: string }> = { ok: true; value: T } | ({ ok: false } & E);

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function fail<const E extends { reason: string }>(error: E): { ok: false } & E {
  return { ok: false, ...error };
}

/** An error with the HTTP status and JSON-RPC code the client receives. */
export class GatewayError extends Error {
  override readonly name = "GatewayError";
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly id: JsonRpcId | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The same error answering a given request id. */
  withId(id: JsonRpcId | null): GatewayError {
    return new GatewayError(this.status, this.code, this.message, this.data, id, this.headers);
  }
}

const GENERIC_INTERNAL_MESSAGE = "Internal error in the gateway; the operator's logs have the details";

/** What any thrown value is on the wire: a `GatewayError` as it is; anything else (a bug) logged and generic. */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  console.error("mcp-edge-gateway: unexpected error", error);
  return new GatewayError(500, INTERNAL_ERROR, GENERIC_INTERNAL_MESSAGE);
}

/** The JSON-RPC error text of any thrown value, answering `id` unless the error names its own. */
export function errorTextOf(error: unknown, id: JsonRpcId | null = null): string {
  const wire = asGatewayError(error);
  return errorText(wire.id ?? id, wire.code, wire.message, wire.data);
}

/** Writes any thrown value as a JSON-RPC error response. Unknown errors are logged, never shown. */
export function errorResponse(error: unknown, id: JsonRpcId | null = null): Response {
  const wire = asGatewayError(error);
  return new Response(errorText(wire.id ?? id, wire.code, wire.message, wire.data), {
    status: wire.status,
    headers: { "content-type": "application/json", ...wire.headers },
  });
}
