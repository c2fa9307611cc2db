/**
 * Where expected upstream failures meet the wire: one exhaustive switch from a tagged
 * `UpstreamFailure` to the error the client receives. The message names the upstream
 * and what to check; the other upstreams keep working.
 */
import { GatewayError } from "../core/errors";
import type { UpstreamFailure } from "./client";

/** JSON-RPC code for "the upstream behind this name could not answer". */
export const UPSTREAM_ERROR = -32010;

/** A one-line description of a failure, for logs, list `_meta` and error messages. */
export function describeFailure(failure: UpstreamFailure): string {
  switch (failure.reason) {
    case "unreachable":
      return `upstream "${failure.upstream}" is unreachable: ${failure.detail}`;
    case "timeout":
      return `upstream "${failure.upstream}" did not answer within ${failure.timeoutMs} ms`;
    case "http-status":
      return `upstream "${failure.upstream}" answered HTTP ${failure.status}${failure.detail ? `: ${failure.detail}` : ""}`;
    case "session-expired":
      return `upstream "${failure.upstream}" no longer knows this session`;
    case "bad-response":
      return `upstream "${failure.upstream}" sent an answer the gateway cannot read: ${failure.detail}`;
    case "missing-binding":
      return `upstream "${failure.upstream}" is misconfigured: ${failure.detail}`;
    default: {
      const never: never = failure;
      return never;
    }
  }
}

/** The boundary error for a failed upstream exchange. */
export function failureError(failure: UpstreamFailure): GatewayError {
  // JSON-RPC errors ride on HTTP 200: the client's request reached the gateway fine, and
  // SDK clients surface a JSON-RPC error message to the user but only a status for a 5xx.
  return new GatewayError(200, UPSTREAM_ERROR, describeFailure(failure), { upstream: failure.upstream, reason: failure.reason });
}
