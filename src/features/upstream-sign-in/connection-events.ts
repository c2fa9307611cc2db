/**
 * Audit events of upstream connections: a user connected (signed in), a refresh failed
 * (the user will be asked again), a connection was revoked (by the user or an operator).
 * They name who, which upstream and what happened, never a token or a code.
 */
import { randomHexId } from "../../core/ids";
import { queueAuditEvents } from "../audit/audit-queue";
import type { AuditEvent } from "../audit/audit-event";

/** The `mcp.method.name` of these events. */
export const CONNECTION_EVENT_METHODS = {
  connect: "(upstream-connect)",
  "refresh-failed": "(upstream-refresh-failed)",
  revoke: "(upstream-revoke)",
} as const;

export type ConnectionEvent = {
  readonly kind: keyof typeof CONNECTION_EVENT_METHODS;
  readonly principal: string;
  readonly upstream: string;
  /** For a refresh failure or a revocation: why, in the gateway's own words. */
  readonly detail?: string;
  /** Who revoked: "user" or "admin". */
  readonly by?: string;
};

/** The audit event for `event`. */
export function connectionEvent(event: ConnectionEvent, now = Date.now()): AuditEvent {
  return {
    "gateway.event_id": randomHexId(),
    timestamp: new Date(now).toISOString(),
    "mcp.method.name": CONNECTION_EVENT_METHODS[event.kind],
    "mcp.protocol.version": "(none)",
    "user.id": event.principal,
    "gateway.route": event.by === "admin" ? "/admin/upstream-connections" : "/oauth/upstream",
    "gateway.upstream": event.upstream,
    "gateway.outcome": event.kind === "refresh-failed" ? "error" : "success",
    ...(event.kind === "refresh-failed" ? { "error.type": "refresh-failed" } : {}),
    ...(event.detail !== undefined || event.by !== undefined
      ? { "gateway.error.message": [event.by && `by ${event.by}`, event.detail].filter(Boolean).join(": ") }
      : {}),
    "gateway.duration_ms": 0,
  };
}

/** Sends `event` to the audit Queue (after the answer, through `waitUntil`). */
export function auditConnection(
  queue: Queue | undefined,
  waitUntil: (promise: Promise<unknown>) => void,
  event: ConnectionEvent,
): void {
  waitUntil(queueAuditEvents(queue, [connectionEvent(event)]));
}
