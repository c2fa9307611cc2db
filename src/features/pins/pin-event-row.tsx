/** @jsxRuntime classic */
/** @jsx h */
/**
 * A pin event on the Audit page (`mcp.method.name` "(pin-change)", written by
 * features/pins/pin-reports.ts): a row of its own kind, not a call. Its event says
 * "success" (the list that revealed the change was answered), which the page must not
 * show as a green call: a rug pull is a definition changed under an approval, with
 * findings. The row shows the change, where the definition stands under the upstream's
 * mode, and the findings with their severities. Every field but the gateway's own words
 * is upstream text (names, matches), shown as text with its invisible characters shown.
 */
import { h } from "../../admin/console/jsx";
import type { AuditEvent } from "../audit/audit-event";
import { Time } from "../../admin/console/layout";
import { Findings } from "./pins-change";
import type { PinFindingView } from "./pins-data";
import { Visible } from "../../admin/console/visible-text";

/** The method name of a pin event. */
export const PIN_EVENT_METHOD = "(pin-change)";
/** Statuses under which clients are not served the upstream's current definition as it is, or it is unreviewed. */
const ATTENTION_STATUSES: ReadonlySet<string> = new Set(["pending", "held", "rejected"]);
/** Severities in the order they are summed up. */
const SEVERITY_ORDER = ["high", "medium", "low"] as const;

/** True for a pin event rather than a call. */
export function isPinEvent(event: AuditEvent): boolean {
  return event["mcp.method.name"] === PIN_EVENT_METHOD;
}

function findingsOf(event: AuditEvent): PinFindingView[] {
  const raw: unknown = event["gateway.pin.findings"];
  if (!Array.isArray(raw)) return [];
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  return raw
    .filter((f): f is Record<string, unknown> => typeof f === "object" && f !== null)
    .map((f) => ({ rule: text(f["rule"]), severity: text(f["severity"]), at: text(f["at"]), match: text(f["match"]) }));
}

/** "3 high, 1 low": the findings counted by severity (as text, not colour alone). */
export function severityCounts(findings: readonly PinFindingView[]): { severity: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const finding of findings) counts.set(finding.severity, (counts.get(finding.severity) ?? 0) + 1);
  const known: readonly string[] = SEVERITY_ORDER;
  const others = [...counts.keys()].filter((severity) => !known.includes(severity)).sort();
  return [...SEVERITY_ORDER, ...others]
    .filter((severity) => counts.has(severity))
    .map((severity) => ({ severity, count: counts.get(severity)! }));
}

/** The badges of a definition's findings by severity, e.g. "3 high". */
export function SeverityBadges({ findings }: { findings: readonly PinFindingView[] }) {
  return (
    <span class="severities">
      {severityCounts(findings).map(({ severity, count }) => (
        <span class={`badge severity-${severity === "high" ? "high" : "other"}`} data-severity={severity}>
          {`${count} ${severity}`}
        </span>
      ))}
    </span>
  );
}

/** One pin event as a row of the Audit page's table (the same seven columns as a call's). */
export function PinEventRow({ event }: { event: AuditEvent }) {
  const findings = findingsOf(event);
  const status = event["gateway.pin.status"] ?? "";
  const mode = event["gateway.pin.mode"] ?? "";
  const attention = ATTENTION_STATUSES.has(status) || findings.some((finding) => finding.severity === "high");
  const listed: unknown = event["gateway.pin.changed_members"];
  const members = Array.isArray(listed) ? listed.filter((member): member is string => typeof member === "string") : [];
  const id = event["gateway.event_id"];
  const standing = `${status || "recorded"}${mode ? ` (${mode})` : ""}`;
  return (
    <tr class="pin-event" data-event-id={id} data-kind="pin-change" data-pin-status={status}>
      <td>
        <Time iso={event.timestamp} />
      </td>
      <td>
        <strong>{`Pin ${event["gateway.pin.change"] ?? "change"}`}</strong>
        {`: ${event["gateway.pin.kind"] ?? "definition"} `}
        <code>
          <Visible text={event["gateway.pin.name"] ?? ""} />
        </code>
        {members.length > 0 && (
          <span class="muted">
            {" (changed: "}
            <Visible text={members.join(", ")} />
            {")"}
          </span>
        )}
      </td>
      <td>{event["user.id"]}</td>
      <td>{event["gateway.upstream"] ?? ""}</td>
      <td>
        <span class={`badge ${attention ? "bad" : "pin"}`}>{standing}</span>{" "}
        {findings.length > 0 ? <SeverityBadges findings={findings} /> : <span class="muted">no findings</span>}
      </td>
      <td>—</td>
      <td>
        {findings.length > 0 && <Findings findings={findings} />}
        <details>
          <summary>Event {id.slice(0, 8)}</summary>
          <pre>
            <Visible text={JSON.stringify(event, null, 2)} />
          </pre>
        </details>
      </td>
    </tr>
  );
}
