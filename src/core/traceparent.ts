/**
 * W3C Trace Context (`traceparent`, https://www.w3.org/TR/trace-context/): parse the
 * client's, continue it with a span of the gateway's own, or mint a new trace. The
 * gateway sends its traceparent to the upstream and records the ids on the audit
 * event, so an operator can join gateway, upstream and client logs on the trace id.
 */

import { randomHex } from "./ids";

/** A trace as the gateway continues it. */
export type TraceContext = {
  /** 32 lowercase hex digits, never all zero. */
  readonly traceId: string;
  /** The gateway's span for this message (16 hex digits): the parent the upstream sees. */
  readonly spanId: string;
  /** The client's span, when the client sent a traceparent. */
  readonly parentSpanId?: string;
  /** Trace flags (2 hex digits, `01` = sampled). */
  readonly flags: string;
};

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;
/** Flags of a trace the gateway starts: sampled, so upstreams that trace record it. */
const MINTED_FLAGS = "01";

/** A random id of `bytes` bytes as hex, never all zero (an invalid trace or span id). */
function nonZeroHex(bytes: number): string {
  const out = randomHex(bytes);
  return ALL_ZERO.test(out) ? nonZeroHex(bytes) : out;
}

/**
 * The trace a message continues: `incoming` when it is a valid traceparent (version `ff`
 * and all-zero ids are invalid; a later version's extra fields are ignored, as the
 * specification asks), else a new trace. Either way the gateway's span is new.
 *
 * @example
 * continueTrace("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").traceId // "4bf92f35..."
 */
export function continueTrace(incoming: unknown): TraceContext {
  const match = typeof incoming === "string" ? TRACEPARENT.exec(incoming.trim().toLowerCase()) : null;
  if (match) {
    const [, version, traceId, parentSpanId, flags, rest] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
      string | undefined,
    ];
    const valid =
      version !== "ff" &&
      !(version === "00" && rest !== undefined) &&
      !ALL_ZERO.test(traceId) &&
      !ALL_ZERO.test(parentSpanId);
    if (valid) return { traceId, spanId: nonZeroHex(8), parentSpanId, flags };
  }
  return { traceId: nonZeroHex(16), spanId: nonZeroHex(8), flags: MINTED_FLAGS };
}

/** The traceparent the gateway sends on: its own span as the parent. */
export function traceparentOf(trace: TraceContext): string {
  return `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;
}
