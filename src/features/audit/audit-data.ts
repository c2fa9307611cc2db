/**
 * The audit trail as the console reads it: GET /admin/audit (NDJSON) parsed into events,
 * and events counted per minute for the small charts of Overview and Audit.
 */
import { isAuditEvent, type AuditEvent } from "./audit-event";
import type { AdminCall } from "../../admin/console/admin-client";
import { errorOf } from "../../admin/console/admin-client";

/** Events of one query, or the admin API's error; `truncated` when the API said it stopped early. */
export type AuditRead = { ok: true; events: AuditEvent[]; truncated?: string } | { ok: false; error: string };

/**
 * Reads the audit events the query names (the admin API's own parameters).
 *
 * @example
 * const read = await readAudit(call, new URLSearchParams({ limit: "50" }));
 */
export async function readAudit(call: AdminCall, params: URLSearchParams): Promise<AuditRead> {
  const answer = await call("GET", `/audit?${params}`);
  if (!answer.ok) return { ok: false, error: errorOf(answer).error };
  const events: AuditEvent[] = [];
  for (const line of answer.text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const event: unknown = JSON.parse(line);
      if (isAuditEvent(event)) events.push(event);
    } catch {
      // a line that is not JSON is skipped; the API writes none
    }
  }
  const truncated = answer.headers.get("x-audit-truncated");
  return { ok: true, events, ...(truncated ? { truncated } : {}) };
}

/** Calls and errors in `slots` equal slots from `startMs` to `endMs` (oldest first): the bars of a chart. */
export function perSlot(
  events: readonly AuditEvent[],
  startMs: number,
  endMs: number,
  slots: number,
): { calls: number[]; errors: number[] } {
  const calls = new Array<number>(slots).fill(0);
  const errors = new Array<number>(slots).fill(0);
  const width = Math.max(1, (endMs - startMs) / slots);
  for (const event of events) {
    const at = Date.parse(event.timestamp);
    if (!(at >= startMs && at < endMs)) continue;
    const slot = Math.min(slots - 1, Math.floor((at - startMs) / width));
    calls[slot]!++;
    if (event["gateway.outcome"] !== "success") errors[slot]!++;
  }
  return { calls, errors };
}
