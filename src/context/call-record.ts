/**
 * The call record: what happened to one client message, as values that the layers which
 * know them write down on the way (the relay: status, bytes, failure; output filters: set
 * and bytes saved; rules: the rules fired) and the record layer completes from the answer
 * (upstream, bridged call, payload id: context/answer.ts), with bytes to the client and the
 * duration. It is write-only for the pipeline: observers (audit, upstream health) read it,
 * no layer reads it to decide, and none parses another's text to learn it.
 */
import type { TraceContext } from "../core/traceparent";

/** Why a call did not get an upstream's answer, as the relay saw it. */
export type CallFailure =
  | "unreachable"
  | "timeout"
  | "http-status"
  | "session-expired"
  | "bad-response"
  | "missing-binding"
  | "no-response"
  | "gateway-error";

/** A list entry left out because it names a member twice (relay/ambiguous-entries.ts), for pinning to report. */
export type AmbiguousEntry = {
  readonly upstream: string;
  readonly method: string;
  /** The first member named twice. */
  readonly key: string;
  /** The entry's bytes as the upstream listed them. */
  readonly raw: string;
};

/** A guardrail rule that found something in a call (features/guardrails/): never the matched text. */
export type GuardrailHit = {
  readonly rule: string;
  readonly action: "redact" | "block" | "warn";
  readonly detector: string;
  readonly kind: string;
  readonly where: "arguments" | "result";
  readonly count: number;
};

export type CallRecord = {
  /** When the pipeline took the message (ms since the epoch). */
  readonly startedAt: number;
  /** The persona that authorized the call (authorization), for audit. */
  persona?: string;
  /** Why authorization refused or hid what the call asked for ("no persona for roles", "not allowed by persona"). */
  denied?: string;
  /** The upstream that served the call (the last one asked, for routes that try several). */
  upstream?: string;
  /** The name the client called a tool or prompt by when a named server gave it a new one (its alias). */
  alias?: string;
  /** HTTP status of the upstream's answer. */
  upstreamStatus?: number;
  /** UTF-8 bytes of the messages the upstream sent for this call (an offloaded answer counted as stored). */
  bytesFromUpstream?: number;
  /** UTF-8 bytes of the messages sent to the client for this call. */
  bytesToClient?: number;
  /** The filter set applied (or, in shadow mode, measured) and the rule chosen. */
  filterSet?: string;
  filterRule?: string;
  /** Bytes the filter removed; in shadow mode, what it would have removed. */
  bytesSaved?: number;
  /** True when the filter set runs in shadow mode (nothing was changed). */
  filterShadow?: boolean;
  /** What guardrail rules found in the call's arguments and result (features/guardrails/). */
  guardrails?: GuardrailHit[];
  /** The arguments with every guardrail finding replaced by a marker: what audit records of them. */
  guardedArguments?: unknown;
  /** The id of the payload offload stored instead of the answer. */
  payloadId?: string;
  /** The rules whose guidance was appended to the result (features/shaping/rules.ts), by name. */
  rulesFired?: string[];
  /** The Durable Object (its id) holding a 2025 upstream's call whose question this answer is, for a modern client's retry (eras/call-bridge.ts). */
  bridgedCall?: string;
  /** Why the call failed, when it did. */
  failure?: CallFailure;
  /** The digest of the pending change that kept a call from the upstream (features/pins/pinning.ts, enforce). */
  pinHeld?: string;
  /** List entries the relay left out because they name a member twice (relay/ambiguous-entries.ts). */
  ambiguousEntries?: AmbiguousEntry[];
  /** How long the pipeline took, ms. */
  durationMs?: number;
  /** The trace the call continued (trace-context middleware): what the upstream was sent as its parent. */
  trace?: TraceContext;
  /** The JSON-RPC error a thrown gateway error answered the call with (the record layer). */
  errorCode?: number;
  errorMessage?: string;
  /** The code-mode run (src/features/code-mode/) this call is, or belongs to: its id. */
  codeRun?: string;
  /** The SHA-256 (base64url) of a code-mode run's program, on the run's own record. */
  codeDigest?: string;
};

/** A fresh record for a message taken now. */
export function newCallRecord(now = Date.now()): CallRecord {
  return { startedAt: now };
}
