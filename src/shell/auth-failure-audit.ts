/**
 * Failed authentications as audit events: a request refused with 401 (or 503 while the
 * identity provider's keys cannot be fetched) leaves an event on the audit Queue saying
 * why, on which route, from which source (CF-Connecting-IP), never the credential. The
 * events are bounded per source and isolate by auth/failure-budget.ts, with a summary
 * of what was left out, so a flood of bad credentials cannot fill the trail.
 */
import { authFailureName, type AuthProblem } from "../auth/authenticate";
import { FailureBudget, type SuppressedFailures } from "../auth/failure-budget";
import type { AuditConfig } from "../config/audit-config";
import type { GatewayError } from "../core/errors";
import { randomHexId } from "../core/ids";
import { queueAuditEvents } from "../pipeline/audit-trail";
import type { AuditEvent } from "../storage/audit-event";

/** The `mcp.method.name` of these events: the request's body is never read before authentication. */
export const AUTHENTICATION_METHOD = "(authentication)";
/** The `user.id` of these events. */
export const UNAUTHENTICATED_USER = "(unauthenticated)";
const UNKNOWN = "unknown";
/** Client-controlled headers are cut at these lengths. */
const MAX_SOURCE_CHARS = 64;
const MAX_USER_AGENT_CHARS = 256;
const MAX_PROTOCOL_VERSION_CHARS = 32;

const budget = new FailureBudget();

export type FailedAuthentication = {
  readonly request: Request;
  /** `/mcp` or `/mcp/<upstream>`. */
  readonly route: string;
  readonly problem: AuthProblem;
  /** What the caller was answered. */
  readonly error: GatewayError;
  readonly startedAt: number;
  readonly audit: AuditConfig;
  readonly queue: Queue | undefined;
  readonly waitUntil: (promise: Promise<unknown>) => void;
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
    "gateway.error.message": `${summary.count} more failed authentication(s) from ${summary.source} within a minute were counted, not recorded one by one (see README, "Failed authentications")`,
    "gateway.duration_ms": 0,
  };
}

/**
 * Records one failed authentication (within the budget) and any summaries now due, sent
 * from `waitUntil`: the answer never waits for them. Nothing when auditing is off.
 *
 * @example
 * recordFailedAuthentication({ request, route: "/mcp", problem, error, startedAt, audit, queue, waitUntil });
 */
export function recordFailedAuthentication({ request, route, problem, error, startedAt, audit, queue, waitUntil }: FailedAuthentication): void {
  const reason = authFailureName(problem);
  if (!audit.enabled || reason === undefined) return;
  const now = Date.now();
  const source = header(request, "cf-connecting-ip", MAX_SOURCE_CHARS) || UNKNOWN;
  const verdict = budget.admit(source, reason, route, now);
  const events = verdict.summaries.map((summary) => summaryEvent(summary, now));
  if (verdict.record) {
    const userAgent = header(request, "user-agent", MAX_USER_AGENT_CHARS);
    events.push({
      ...common(startedAt, route, source),
      "mcp.protocol.version": header(request, "mcp-protocol-version", MAX_PROTOCOL_VERSION_CHARS) || UNKNOWN,
      "error.type": reason,
      "gateway.auth.failure": reason,
      "rpc.response.status_code": String(error.code),
      // The gateway's own text: it names the fault, never the credential.
      "gateway.error.message": error.message,
      "http.request.method": request.method,
      "http.response.status_code": error.status,
      ...(userAgent ? { "user_agent.original": userAgent } : {}),
      "gateway.duration_ms": now - startedAt,
    });
  }
  if (events.length > 0) waitUntil(queueAuditEvents(queue, events));
}
