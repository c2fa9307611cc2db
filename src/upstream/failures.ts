/**
 * Where expected upstream failures meet the wire: one exhaustive switch from a tagged
 * `UpstreamFailure` to the error the client receives. The message names the upstream
 * and what to check; the other upstreams keep working.
 */
import { GatewayError } from "../core/errors";
import { redactSecrets } from "../config/secrets";
import type { Challenge } from "./oauth/discovery";

/** Why an exchange with an upstream failed, as a tagged value. */
export type UpstreamFailure =
  | { reason: "unreachable"; upstream: string; detail: string }
  /** `waited` for: the headers, the end of an answer with a deadline, the next byte of a stream. */
  | { reason: "timeout"; upstream: string; timeoutMs: number; waited: "headers" | "answer" | "silence" }
  /** `modernOnly`: it refused a 2025 handshake as a 2026-07-28-only server does (-32022). */
  | { reason: "http-status"; upstream: string; status: number; detail: string; modernOnly?: true }
  /** The upstream refused the session id (HTTP 404, or 400 as some servers answer). */
  | { reason: "session-expired"; upstream: string; status: 400 | 404 }
  | { reason: "bad-response"; upstream: string; detail: string }
  | { reason: "missing-binding"; upstream: string; detail: string }
  /** The upstream acts as each user: this caller must sign in to it (again, or with a wider scope). */
  | { reason: "sign-in-required"; upstream: string; detail: string; challenge: Challenge }
  /** The upstream takes each caller's own credential, and this caller's cannot be had (an API key caller, a refused exchange). */
  | { reason: "credential-unavailable"; upstream: string; detail: string };

/** JSON-RPC code for "the upstream behind this name could not answer". */
export const UPSTREAM_ERROR = -32010;

/** A one-line description of a failure, for logs, list `_meta` and error messages. */
export function describeFailure(failure: UpstreamFailure): string {
  switch (failure.reason) {
    case "unreachable":
      return `upstream "${failure.upstream}" is unreachable: ${failure.detail}`;
    case "timeout":
      switch (failure.waited) {
        case "headers":
          return `upstream "${failure.upstream}" did not answer within ${failure.timeoutMs} ms`;
        case "answer":
          return `upstream "${failure.upstream}" did not finish its answer within ${failure.timeoutMs} ms`;
        case "silence":
          return `upstream "${failure.upstream}" sent nothing for ${failure.timeoutMs} ms`;
        default: {
          const never: never = failure.waited;
          return never;
        }
      }
    case "http-status":
      return `upstream "${failure.upstream}" answered HTTP ${failure.status}${failure.detail ? `: ${failure.detail}` : ""}`;
    case "session-expired":
      return `upstream "${failure.upstream}" no longer knows this session`;
    case "bad-response":
      return `upstream "${failure.upstream}" sent an answer the gateway cannot read: ${failure.detail}`;
    case "missing-binding":
      return `upstream "${failure.upstream}" is misconfigured: ${failure.detail}`;
    case "sign-in-required":
      return `upstream "${failure.upstream}" needs you to sign in: ${failure.detail}`;
    case "credential-unavailable":
      return `upstream "${failure.upstream}" takes each caller's own credential, and yours could not be had: ${failure.detail}`;
    default: {
      const never: never = failure;
      return never;
    }
  }
}

/**
 * The boundary error for a failed upstream exchange. Its message never holds a configured
 * secret's value (`env` says which those are), whatever an upstream put in the failure.
 */
export function failureError(failure: UpstreamFailure, env: Readonly<Record<string, unknown>>): GatewayError {
  // JSON-RPC errors ride on HTTP 200: the client's request reached the gateway fine, and
  // SDK clients surface a JSON-RPC error message to the user but only a status for a 5xx.
  return new GatewayError(200, UPSTREAM_ERROR, redactSecrets(describeFailure(failure), env), {
    upstream: failure.upstream,
    reason: failure.reason,
    ...(failure.reason === "sign-in-required" ? { challenge: failure.challenge } : {}),
  });
}
