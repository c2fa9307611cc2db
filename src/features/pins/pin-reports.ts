/**
 * Telling people about pins: one audit event per change a list revealed (sent to the
 * audit Queue, with an id derived from the change so the same change seen by two
 * isolates is one event to a reader that deduplicates), and the `notifications/message`
 * a client that asked for log messages gets beside a list whose definitions are not all
 * approved.
 */
import { canonicalDigest } from "../../core/canonical-json";
import type { AuditEvent } from "../audit/audit-event";
import { queueAuditEvents } from "../audit/audit-queue";
import type { PinChange, PinningMode, PinStatus } from "./pins";
import { GATEWAY_LOGGER } from "../shaping/client-logging";

/** A change with what the reporter knows about it. */
export type ReportedChange = PinChange & {
  readonly upstream: string;
  readonly status: PinStatus;
  readonly members?: readonly string[];
};

/** Who saw the change: a client's call (its principal and route) or the Cron Trigger. */
export type Observer = { readonly principal: string; readonly route: string; readonly protocolVersion: string };

/** The audit event of one change. */
export async function pinEvent(
  change: ReportedChange,
  mode: PinningMode,
  observer: Observer,
  now: string,
): Promise<AuditEvent> {
  const id = await canonicalDigest([
    "pin",
    change.upstream,
    change.kind,
    change.name,
    change.change,
    change.oldDigest ?? null,
    change.newDigest ?? null,
  ]);
  return {
    "gateway.event_id": `pin-${id}`,
    timestamp: now,
    "mcp.method.name": "(pin-change)",
    ...(change.kind === "tool" ? { "gen_ai.tool.name": change.name } : { "gen_ai.prompt.name": change.name }),
    "mcp.protocol.version": observer.protocolVersion,
    "user.id": observer.principal,
    "gateway.route": observer.route,
    "gateway.upstream": change.upstream,
    "gateway.outcome": "success",
    "gateway.duration_ms": 0,
    "gateway.pin.change": change.change,
    "gateway.pin.kind": change.kind,
    "gateway.pin.name": change.name,
    ...(change.oldDigest !== undefined ? { "gateway.pin.old_digest": change.oldDigest } : {}),
    ...(change.newDigest !== undefined ? { "gateway.pin.new_digest": change.newDigest } : {}),
    ...(change.members ? { "gateway.pin.changed_members": change.members } : {}),
    "gateway.pin.status": change.change === "removed" ? "removed" : change.status,
    "gateway.pin.mode": mode,
    ...(change.findings && change.findings.length > 0 ? { "gateway.pin.findings": change.findings } : {}),
  };
}

/** Sends pin events to the audit Queue (from waitUntil), bounded and batched like every audit event; a Queue failure is logged, never the caller's. */
export async function sendPinEvents(queue: Queue | undefined, events: readonly AuditEvent[]): Promise<void> {
  if (events.length > 0) await queueAuditEvents(queue, events);
}

/** A definition a client's list did not show as the upstream serves it. */
export type Unsettled = {
  readonly upstream: string;
  readonly kind: "tool" | "prompt";
  readonly listedName: string;
  readonly status: Exclude<PinStatus, "pinned">;
  readonly digest: string;
  readonly mode: PinningMode;
};

function sentence(item: Unsettled): string {
  const what = `${item.kind} ${JSON.stringify(item.listedName)} of upstream "${item.upstream}"`;
  const served =
    item.mode === "enforce"
      ? item.status === "held"
        ? "it is not listed until an operator approves it"
        : "the approved definition is listed; calls go through only while their arguments fit both"
      : "it is listed as the upstream serves it (pinning: warn)";
  const state =
    item.status === "held"
      ? "is new and not approved"
      : item.status === "rejected"
        ? "has a change an operator rejected"
        : "changed and the change is not approved";
  return `${what} ${state} (${item.digest}); ${served}`;
}

/** The log notification naming the definitions of a list that are not approved. */
export function unsettledMessage(items: readonly Unsettled[], removed: readonly ReportedChange[]): string {
  const lines = [
    ...items.map(sentence),
    ...removed.map(
      (change) =>
        `${change.kind} "${change.name}" of upstream "${change.upstream}" is no longer listed by the upstream`,
    ),
  ];
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: {
      level: "warning",
      logger: GATEWAY_LOGGER,
      data: {
        message: lines.join("\n"),
        event: "pins",
        unsettled: items.map(({ upstream, kind, listedName, status, digest }) => ({
          upstream,
          kind,
          name: listedName,
          status,
          digest,
        })),
        removed: removed.map(({ upstream, kind, name, oldDigest }) => ({
          upstream,
          kind,
          name,
          digest: oldDigest ?? null,
        })),
      },
    },
  });
}
