/**
 * Audit events onto the Queue: the one sender of every producer (calls through the
 * pipeline, failed authentications, pin changes), so each event is bounded
 * (`trimEvent`: never over a Queue message) and each `sendBatch` stays within the
 * Queue's limits, whoever built the events. A failed send is logged with the events' ids
 * and counted, never thrown: audit never changes a client's answer.
 */
import { jsonBytes, MAX_EVENT_BYTES, trimEvent } from "./audit-bounds";
import type { AuditEvent } from "./audit-event";

/**
 * Queue limits of one `sendBatch`: 100 messages and 256 KB in all (read as 256,000 bytes,
 * as the local Queue counts them), each message counted with an allowance for its
 * framing. Every event is at most MAX_EVENT_BYTES (audit-bounds.ts), so two of the
 * largest still fit one batch.
 */
export const MAX_BATCH_MESSAGES = 100;
export const MAX_BATCH_BYTES = 250_000;
const MESSAGE_FRAMING_BYTES = 100;

let unqueuedEvents = 0;

/** Audit events this isolate failed to build or queue since it started (also in each failure's log line). */
export function auditSendFailures(): number {
  return unqueuedEvents;
}

/** Counts `count` events lost before they reached the Queue (an event that could not be built). */
export function countUnqueuedEvents(count: number): void {
  unqueuedEvents += count;
}

/**
 * `events` in `sendBatch`-sized groups (count and bytes); `sizes[i]`, when given, is
 * `jsonBytes(events[i])` already measured (each event's JSON is written once).
 */
export function sendBatches(events: readonly AuditEvent[], sizes?: readonly number[]): AuditEvent[][] {
  const groups: AuditEvent[][] = [];
  let group: AuditEvent[] = [];
  let bytes = 0;
  for (const [i, event] of events.entries()) {
    const size = (sizes?.[i] ?? jsonBytes(event)) + MESSAGE_FRAMING_BYTES;
    if (group.length > 0 && (group.length >= MAX_BATCH_MESSAGES || bytes + size > MAX_BATCH_BYTES)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(event);
    bytes += size;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * Sends events to the Queue, each cut to fit a message, in `sendBatch`-sized groups; a
 * failure is logged with the events' ids and counted, never thrown.
 *
 * @example
 * ctx.waitUntil(queueAuditEvents(env.AUDIT_QUEUE, [event]));
 */
export async function queueAuditEvents(queue: Queue | undefined, events: readonly AuditEvent[]): Promise<void> {
  // Each event's JSON measured once: an event within MAX_EVENT_BYTES (nearly all) is not trimmed nor measured again.
  const bounded: AuditEvent[] = [];
  const sizes: number[] = [];
  for (const event of events) {
    const size = jsonBytes(event);
    const fitted = size <= MAX_EVENT_BYTES ? event : trimEvent(event);
    bounded.push(fitted);
    sizes.push(fitted === event ? size : jsonBytes(fitted));
  }
  for (const group of sendBatches(bounded, sizes)) {
    try {
      if (!queue) throw new Error("the AUDIT_QUEUE binding is missing from wrangler.toml");
      await queue.sendBatch(group.map((event) => ({ body: event, contentType: "json" as const })));
    } catch (error) {
      unqueuedEvents += group.length;
      const ids = group.map((e) => e["gateway.event_id"]).join(",");
      console.error(
        `mcp-edge-gateway: audit: ${group.length} event(s) not queued (${unqueuedEvents} since this isolate started): ${error instanceof Error ? error.message : String(error)}; event ids: ${ids}`,
      );
    }
  }
}
