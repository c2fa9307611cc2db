/**
 * Audit events of client sign-in: a user granted a client access (consent given, or
 * remembered), a client exchanged its code for tokens, refreshed them or failed to, and a
 * grant was revoked (by the user or an operator). They name who, which client and which
 * grant (identifiers, not credentials), never a token, a code or a secret.
 */
import { randomHexId } from "../../core/ids";
import { queueAuditEvents } from "../audit/audit-queue";
import { gatewayConfig } from "../../config/gateway-config";
import type { AuditEvent } from "../audit/audit-event";

/** The `mcp.method.name` of these events. */
export const GRANT_EVENT_METHODS = {
  grant: "(client-grant)",
  token: "(client-token)",
  refresh: "(client-token-refresh)",
  "refresh-failed": "(client-refresh-failed)",
  revoke: "(client-grant-revoke)",
} as const;

/** Who stands for a refresh that failed: its token named no grant the gateway could read. */
export const UNKNOWN_USER = "(unauthenticated)";

export type GrantEvent = {
  readonly kind: keyof typeof GRANT_EVENT_METHODS;
  readonly principal: string;
  readonly email?: string | undefined;
  readonly clientId?: string | undefined;
  readonly grantId?: string | undefined;
  /** The resource the grant or token is for. */
  readonly resource?: string | undefined;
  /** Who revoked ("user" or "admin"), or how a grant was given ("consent" or "remembered consent"). */
  readonly by?: string | undefined;
  /** Why a refresh failed: the OAuth error code the client got. */
  readonly error?: string | undefined;
};

/** The audit event for `event`. */
export function grantEvent(event: GrantEvent, now = Date.now()): AuditEvent {
  const failed = event.kind === "refresh-failed";
  const built: { -readonly [K in keyof AuditEvent]: AuditEvent[K] } = {
    "gateway.event_id": randomHexId(),
    timestamp: new Date(now).toISOString(),
    "mcp.method.name": GRANT_EVENT_METHODS[event.kind],
    "mcp.protocol.version": "(none)",
    "user.id": event.principal,
    "gateway.route": event.by === "admin" ? "/admin/client-grants" : "/oauth",
    "gateway.outcome": failed ? "error" : "success",
    "gateway.duration_ms": 0,
  };
  if (event.email !== undefined) built["user.email"] = event.email;
  if (event.clientId !== undefined) built["gateway.oauth.client_id"] = event.clientId;
  if (event.grantId !== undefined) built["gateway.oauth.grant_id"] = event.grantId;
  if (event.resource !== undefined) built["mcp.resource.uri"] = event.resource;
  if (failed) built["error.type"] = event.error ?? "refresh-failed";
  if (event.by !== undefined) built["gateway.error.message"] = `by ${event.by}`;
  return built;
}

/** Where audit events go: the Queue when audit is on, and how to outlive the answer. */
export type GrantAuditSink = {
  readonly queue: Queue | undefined;
  readonly enabled: boolean;
  readonly waitUntil: (promise: Promise<unknown>) => void;
};

/** The sink of a request: AUDIT as configured, AUDIT_QUEUE, the request's `waitUntil`. */
export function auditSinkOf(
  env: Readonly<Record<string, unknown>>,
  ctx: { waitUntil(promise: Promise<unknown>): void },
): GrantAuditSink {
  const queue = env["AUDIT_QUEUE"] as Queue | undefined;
  return { queue, enabled: gatewayConfig(env).audit.enabled, waitUntil: (p) => ctx.waitUntil(p) };
}

/** Sends `event` to the audit Queue after the answer (nothing when audit is off). */
export function auditGrant(sink: GrantAuditSink, event: GrantEvent): void {
  if (sink.enabled) sink.waitUntil(queueAuditEvents(sink.queue, [grantEvent(event)]));
}
