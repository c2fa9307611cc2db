/**
 * Audit events of live upstream edits through the admin API: which upstream was created,
 * changed or removed, by the admin. They name the upstream, never its URL's query, its
 * headers or its credential.
 */
import { randomHexId } from "../../core/ids";
import { queueAuditEvents } from "../audit/audit-queue";
import type { AuditEvent } from "../audit/audit-event";

/** The `mcp.method.name` of these events. */
export const LIVE_UPSTREAM_EVENT_METHODS = {
  create: "(upstream-create)",
  change: "(upstream-change)",
  remove: "(upstream-remove)",
} as const;

export type LiveUpstreamEdit = keyof typeof LIVE_UPSTREAM_EVENT_METHODS;

/** The audit event of `edit` of the live upstream `name`. */
export function liveUpstreamEvent(edit: LiveUpstreamEdit, name: string, now = Date.now()): AuditEvent {
  return {
    "gateway.event_id": randomHexId(),
    timestamp: new Date(now).toISOString(),
    "mcp.method.name": LIVE_UPSTREAM_EVENT_METHODS[edit],
    "mcp.protocol.version": "(none)",
    "user.id": "admin",
    "gateway.route": `/admin/upstreams/${name}`,
    "gateway.upstream": name,
    "gateway.outcome": "success",
    "gateway.duration_ms": 0,
  };
}

/** Sends the event of `edit` to the audit Queue (after the answer, through `waitUntil`). */
export function auditLiveUpstream(
  queue: Queue | undefined,
  waitUntil: (promise: Promise<unknown>) => void,
  edit: LiveUpstreamEdit,
  name: string,
): void {
  waitUntil(queueAuditEvents(queue, [liveUpstreamEvent(edit, name)]));
}
