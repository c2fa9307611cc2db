/**
 * Why a request the gateway sends for itself (the pin sweep, the console's lists, the
 * admin probes: upstream/internal-client.ts) got no result, as a tagged value: the
 * exchange failed (an `UpstreamFailure`), or the upstream answered, but with a JSON-RPC
 * error, with nothing, or with more than the caller's bound. Callers branch on `reason`
 * and `code`, never on a message's text.
 */
import type { UpstreamFailure } from "./failures";
import { describeFailure } from "./failures";

/** Why an internal request got no result. */
export type InternalCallFailure =
  | UpstreamFailure
  /** The upstream (or the relay in front of it) answered `method` with a JSON-RPC error. */
  | { reason: "rpc-error"; upstream: string; method: string; code: number; message: string }
  /** The upstream's answer ended without a response to the request (or with one without a result). */
  | { reason: "no-answer"; upstream: string; method: string; detail: string }
  /** The answer (or a list's pages together) ran past the caller's bound. */
  | { reason: "too-large"; upstream: string; method: string; limitBytes: number };

/**
 * A one-line description of `failure`, for logs and the reports internal callers keep.
 *
 * @example
 * describeInternalFailure({ reason: "no-answer", upstream: "a", method: "ping", detail: "got no answer" });
 * // "ping got no answer"
 */
export function describeInternalFailure(failure: InternalCallFailure): string {
  switch (failure.reason) {
    case "rpc-error":
      return `${failure.method} answered with an error: ${failure.message}`;
    case "no-answer":
      return `${failure.method} ${failure.detail}`;
    case "too-large":
      return `${failure.method} answered with more than ${failure.limitBytes} bytes`;
    default:
      return describeFailure(failure);
  }
}
