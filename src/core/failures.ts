/**
 * The gateway's expected failures as typed values, and the one formatter that turns each
 * into the JSON-RPC error a client receives.
 *
 * A failure is made where it happens (the upstream layer, the relay, authorization) and
 * travels as a `GatewayFailure` to the edge. Layers that react to one (the sign-in prompt,
 * the catalog's search hint, the 2026-07-28 front's HTTP status) read its `failure` (a
 * tagged union), never its message or code. To add a failure: a member of `Failure`, a
 * case in `describeFailure` and one in `failureWire` (the switches are exhaustive).
 */
import { GatewayError } from "./errors";
import { INVALID_PARAMS, METHOD_NOT_FOUND, type JsonRpcId } from "./jsonrpc";

/** JSON-RPC code for "the upstream behind this name could not answer". */
export const UPSTREAM_ERROR = -32010;

/** What an upstream's 401 or 403 said about signing in. */
export type SignInChallenge = { readonly resourceMetadata?: string; readonly scope?: string; readonly error?: string };

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
  | { reason: "sign-in-required"; upstream: string; detail: string; challenge: SignInChallenge }
  /** The upstream takes each caller's own credential, and this caller's cannot be had (an API key caller, a refused exchange). */
  | { reason: "credential-unavailable"; upstream: string; detail: string };

/** The caller needs to sign in to an upstream before it can be used. */
export type SignInRequired = Extract<UpstreamFailure, { reason: "sign-in-required" }>;
/** The upstream answered with a refusing HTTP status. */
export type UpstreamRefused = Extract<UpstreamFailure, { reason: "http-status" }>;
/** The upstream could not be reached at all. */
export type UpstreamUnreachable = Extract<UpstreamFailure, { reason: "unreachable" }>;

/**
 * A tool, prompt or resource name nothing the caller may use serves. `name` is as the
 * client may be shown it (already cut to length); each of `hints` says where to look instead.
 */
export type UnknownName = { reason: "unknown-name"; label: string; name: string; hints?: readonly string[] };

/** A method the gateway does not serve on this route. */
export type UnknownMethod = { reason: "unknown-method"; method: string };

/** Every expected failure the edge formats: a small closed set, tagged by `reason`. */
export type Failure = UpstreamFailure | UnknownName | UnknownMethod;

/** The protocol era of the client a failure is written for. */
export type FailureEra = "legacy" | "modern";

/** A one-line description of an upstream failure, for logs, list `_meta` and error messages. */
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

/** What a failure is on the wire: the HTTP status, the JSON-RPC code, message and data. */
export type FailureWire = { status: number; code: number; message: string; data?: unknown };

/**
 * The one formatter: a failure as the client of `era` receives it. `redact` cleans text an
 * upstream wrote (it may quote a configured secret) before it reaches the client.
 */
export function failureWire(failure: Failure, era: FailureEra, redact: (text: string) => string): FailureWire {
  switch (failure.reason) {
    case "unknown-name": {
      const hints = (failure.hints ?? []).map((hint) => ` (${hint})`).join("");
      return { status: 200, code: INVALID_PARAMS, message: `Unknown ${failure.label}: ${failure.name}${hints}` };
    }
    case "unknown-method":
      // 2026-07-28 answers a method nothing serves with HTTP 404 (basic/index); 2025 rides on 200.
      return {
        status: era === "modern" ? 404 : 200,
        code: METHOD_NOT_FOUND,
        message: `Method not found: ${failure.method}`,
      };
    default: {
      // JSON-RPC errors ride on HTTP 200: the client's request reached the gateway fine, and
      // SDK clients surface a JSON-RPC error message to the user but only a status for a 5xx.
      const data = { upstream: failure.upstream, reason: failure.reason };
      const message = redact(describeFailure(failure));
      return failure.reason === "sign-in-required"
        ? { status: 200, code: UPSTREAM_ERROR, message, data: { ...data, challenge: failure.challenge } }
        : { status: 200, code: UPSTREAM_ERROR, message, data };
    }
  }
}

const unchanged = (text: string): string => text;

/**
 * The carrier of a typed failure from where it happens to the edge. It is the boundary
 * error (`GatewayError`) its failure formats to, so the edge writes it like any other;
 * a layer that reacts to it reads `failure`.
 *
 * @example
 * throw new GatewayFailure({ reason: "unknown-name", label: "tool", name }, id);
 */
export class GatewayFailure extends GatewayError {
  constructor(
    readonly failure: Failure,
    id: JsonRpcId | null = null,
    readonly era: FailureEra = "legacy",
    private readonly redact: (text: string) => string = unchanged,
  ) {
    const wire = failureWire(failure, era, redact);
    super(wire.status, wire.code, wire.message, wire.data, id);
  }

  /** The same failure answering a given request id. */
  override withId(id: JsonRpcId | null): GatewayFailure {
    return new GatewayFailure(this.failure, id, this.era, this.redact);
  }

  /** The same failure written for a client of `era`. */
  inEra(era: FailureEra): GatewayFailure {
    return new GatewayFailure(this.failure, this.id, era, this.redact);
  }
}

/** The typed failure a thrown value carries, or undefined for anything else. */
export function failureOf(error: unknown): Failure | undefined {
  return error instanceof GatewayFailure ? error.failure : undefined;
}
