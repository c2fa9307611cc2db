/**
 * Audit events of approvals: a call held, approved, denied, a decision refused (an approver's
 * own call, or a principal without the rule's roles), a held call run, and an approval
 * expired or a denial met on the caller's retry. Each names the actor (`user.id`), the call's
 * upstream and tool and, in its message, the rule, the caller, the decider and the approval's
 * id; never the arguments (the call's own event carries them, redacted) or a credential.
 */
import { randomHexId } from "../../core/ids";
import type { HeldCall } from "../../context/object-rpc";
import { queueAuditEvents } from "../audit/audit-queue";
import type { AuditEvent, AuditOutcome } from "../audit/audit-event";

/** The `mcp.method.name` of each kind of approval event. */
export const APPROVAL_EVENT_METHODS = {
  held: "(approval-held)",
  approved: "(approval-approved)",
  denied: "(approval-denied)",
  refused: "(approval-refused)",
  ran: "(approval-used)",
  expired: "(approval-expired)",
  "denial-seen": "(approval-denial-seen)",
} as const;

export type ApprovalEventKind = keyof typeof APPROVAL_EVENT_METHODS;

const OUTCOMES: Record<ApprovalEventKind, AuditOutcome> = {
  held: "success",
  approved: "success",
  denied: "success",
  refused: "error",
  ran: "success",
  expired: "tool_error",
  "denial-seen": "tool_error",
};

/** The audit event of `kind` on `call`, done by `actor` (the caller, an approver, or "(operator)"). */
export function approvalEvent(
  kind: ApprovalEventKind,
  call: HeldCall,
  actor: string,
  route: string,
  detail?: string,
  now = Date.now(),
): AuditEvent {
  const parts = [
    `rule ${call.rule}`,
    `caller ${call.caller}`,
    call.decidedBy !== undefined ? `decided by ${call.decidedBy}` : undefined,
    `approval ${call.id}`,
    detail,
  ];
  return {
    "gateway.event_id": randomHexId(),
    timestamp: new Date(now).toISOString(),
    "mcp.method.name": APPROVAL_EVENT_METHODS[kind],
    "mcp.protocol.version": "(none)",
    "user.id": actor,
    "gateway.route": route,
    "gateway.upstream": call.upstream,
    "gen_ai.tool.name": call.tool,
    "gateway.tool.qualified_name": `${call.upstream}___${call.tool}`,
    "gateway.outcome": OUTCOMES[kind],
    ...(kind === "refused" ? { "error.type": "approval-refused" } : {}),
    "gateway.error.message": parts.filter((part) => part !== undefined).join("; "),
    "gateway.duration_ms": 0,
  };
}

/** Sends approval events to the audit Queue through `waitUntil`. */
export function auditApproval(
  queue: Queue | undefined,
  waitUntil: (promise: Promise<unknown>) => void,
  events: readonly AuditEvent[],
): void {
  waitUntil(queueAuditEvents(queue, events));
}
