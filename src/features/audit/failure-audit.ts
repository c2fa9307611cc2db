/**
 * Failed authentications as audit events: a request refused with 401 (or 503 while the
 * identity provider's keys cannot be fetched), on an MCP route or the admin API, leaves
 * an event on the audit Queue saying why, on which route, from which source
 * (CF-Connecting-IP), never the credential. The events are bounded per source and
 * isolate by failure-budget.ts, with a summary of what was left out, so a flood of bad
 * credentials cannot fill the trail.
 */
import type { AuditConfig } from "./audit-config";
import { randomHexId } from "../../core/ids";
import { queueAuditEvents } from "./audit-queue";
import type { AuditEvent } from "./audit-event";
import { FailureBudget, type SuppressedFailures } from "./failure-budget";
import {
  requestSource,
  type FailedAuthentication as ReportedFailure,
  type FailureRecorder,
} from "../../auth/failed-authentication";
import { gatewayConfig } from "../../config/gateway-config";

/** The `mcp.method.name` of these events: the request's body is never read before authentication. */
export const AUTHENTICATION_METHOD = "(authentication)";
/** The `user.id` of these events. */
export const UNAUTHENTICATED_USER = "(unauthenticated)";
const UNKNOWN = "unknown";
/** Client-controlled headers are cut at these lengths. */
const MAX_USER_AGENT_CHARS = 256;
const MAX_PROTOCOL_VERSION_CHARS = 32;

const budget = new FailureBudget();

/** A failed authentication as the shell reports it, with the AUDIT configuration and the Queue in place of its env. */
export type FailedAuthentication = Omit<ReportedFailure, "env"> & {
  readonly audit: AuditConfig;
  readonly queue: Queue | undefined;
};

function header(request: Request, name: string, max: number): string | undefined {
  return request.headers.get(name)?.slice(0, max);
}

function common(timestamp: number, route: string, source: string) {
  return {
    "gateway.event_id": randomHexId(),
    timestamp: new Date(timestamp).toISOString(),
    "mcp.method.name": AUTHENTICATION_METHOD,
    "user.id": UNAUTHENTICATED_USER,
    "gateway.route": route,
    "client.address": source,
    "gateway.outcome": "error",
  } as const;
}

function summaryEvent(summary: SuppressedFailures, now: number): AuditEvent {
  return {
    ...common(now, summary.route, summary.source),
    "mcp.protocol.version": UNKNOWN,
    "error.type": "suppressed",
    "gateway.auth.failure": "suppressed",
    "gateway.auth.suppressed": summary.count,
    "gateway.auth.suppressed_reasons": summary.reasons,
    "gateway.auth.suppressed_from": new Date(summary.fromMs).toISOString(),
    "gateway.auth.suppressed_to": new Date(summary.toMs).toISOString(),
    "gateway.error.message": `${summary.count} more failed authentication(s) from ${summary.source} within a minute were counted, not recorded one by one (see docs/audit.md, "Failed authentications")`,
    "gateway.duration_ms": 0,
  };
}

/**
 * Records one failed authentication (within the budget) and any summaries now due, sent
 * from `waitUntil`: the answer never waits for them. Nothing when auditing is off.
 *
 * @example
 * recordFailedAuthentication({ request, route: "/mcp", reason: "token-expired", answer: { status: 401, code: -32001, message }, startedAt, audit, queue, waitUntil });
 */
export function recordFailedAuthentication({
  request,
  route,
  reason,
  answer,
  startedAt,
  audit,
  queue,
  waitUntil,
}: FailedAuthentication): void {
  if (!audit.enabled) return;
  const now = Date.now();
  const source = requestSource(request);
  const verdict = budget.admit(source, reason, route, now);
  const events = verdict.summaries.map((summary) => summaryEvent(summary, now));
  if (verdict.record) {
    const userAgent = header(request, "user-agent", MAX_USER_AGENT_CHARS);
    events.push({
      ...common(startedAt, route, source),
      "mcp.protocol.version": header(request, "mcp-protocol-version", MAX_PROTOCOL_VERSION_CHARS) || UNKNOWN,
      "error.type": reason,
      "gateway.auth.failure": reason,
      ...(answer.code !== undefined ? { "rpc.response.status_code": String(answer.code) } : {}),
      // The gateway's own text: it names the fault, never the credential.
      "gateway.error.message": answer.message,
      "http.request.method": request.method,
      "http.response.status_code": answer.status,
      ...(userAgent ? { "user_agent.original": userAgent } : {}),
      "gateway.duration_ms": now - startedAt,
    });
  }
  if (events.length > 0) waitUntil(queueAuditEvents(queue, events));
}

/**
 * The audit trail's `FailureRecorder` (the shell's and the admin API's): records with the
 * AUDIT configuration and the audit Queue of the request's `env`.
 */
export const auditFailedAuthentication: FailureRecorder = ({ env, ...failure }) =>
  recordFailedAuthentication({
    ...failure,
    audit: gatewayConfig(env).audit,
    queue: env["AUDIT_QUEUE"] as Queue | undefined,
  });
