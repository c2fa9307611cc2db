/**
 * The audit trail: one event per audited client message, sent to the Queue from
 * `waitUntil`, so no answer ever waits for it. It wraps the record layer (it needs the
 * completed record, and the answer the client got), and sees each message begin and end:
 * the events of the messages one HTTP request runs together (a JSON-RPC batch) go in
 * one `sendBatch`, sent when the last of them ends.
 *
 * A failed send (or a missing AUDIT_QUEUE binding) is logged with the events' ids and
 * counted; the client's answer is unaffected.
 */
import type { AuditConfig } from "../config/audit-config";
import type { CallContext, ClientMessage, Handler } from "../context/call-context";
import { utf8Length } from "../core/utf8-position";
import type { AuditEvent } from "../storage/audit-event";
import { auditEventOf, isAudited } from "./audit-event";

/**
 * Queue limits of one `sendBatch`: 100 messages and 256 KB in all (read as 256,000 bytes,
 * as the local Queue counts them), each message counted with an allowance for its
 * framing. Every event is at most MAX_EVENT_BYTES (pipeline/audit-bounds.ts), so two
 * of the largest still fit one batch.
 */
export const MAX_BATCH_MESSAGES = 100;
export const MAX_BATCH_BYTES = 250_000;
const MESSAGE_FRAMING_BYTES = 100;

/** The events of one HTTP request's messages that are still running or waiting to be sent (built when sent). */
type PendingBatch = { running: number; events: (() => Promise<AuditEvent | undefined>)[] };

/** Lets the answer go out before any audit work: a timer yields to the runtime's I/O, a microtask would not. */
const afterTheAnswer = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

let failedEvents = 0;

/** Audit events this isolate failed to queue since it started (also in each failure's log line). */
export function auditSendFailures(): number {
  return failedEvents;
}

/** `events` in `sendBatch`-sized groups (count and bytes). */
export function sendBatches(events: readonly AuditEvent[]): AuditEvent[][] {
  const groups: AuditEvent[][] = [];
  let group: AuditEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = utf8Length(JSON.stringify(event)) + MESSAGE_FRAMING_BYTES;
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

async function send(queue: Queue | undefined, pending: readonly (() => Promise<AuditEvent | undefined>)[]): Promise<void> {
  await afterTheAnswer();
  await queueAuditEvents(queue, (await Promise.all(pending.map((build) => build()))).filter((e): e is AuditEvent => e !== undefined));
}

/**
 * Sends built events to the Queue in `sendBatch`-sized groups; a failure is logged with
 * the events' ids and counted, never thrown. For events of no pipeline message (failed
 * authentications) too.
 *
 * @example
 * ctx.waitUntil(queueAuditEvents(env.AUDIT_QUEUE, [event]));
 */
export async function queueAuditEvents(queue: Queue | undefined, events: readonly AuditEvent[]): Promise<void> {
  for (const group of sendBatches(events)) {
    try {
      if (!queue) throw new Error("the AUDIT_QUEUE binding is missing from wrangler.toml");
      await queue.sendBatch(group.map((event) => ({ body: event, contentType: "json" as const })));
    } catch (error) {
      failedEvents += group.length;
      const ids = group.map((e) => e["gateway.event_id"]).join(",");
      console.error(`mcp-edge-gateway: audit: ${group.length} event(s) not queued (${failedEvents} since this isolate started): ${error instanceof Error ? error.message : String(error)}; event ids: ${ids}`);
    }
  }
}

export type AuditTrailOptions = { readonly config: AuditConfig };

/**
 * Wraps the record layer so that each audited message yields an event on the Queue.
 *
 * @example
 * const handle = auditTrail(recordCalls(composeMiddleware(list, relay), []), { config: config.audit });
 */
export function auditTrail(next: Handler, { config }: AuditTrailOptions): Handler {
  // Keyed by the request's waitUntil: the one thing every message of one HTTP request shares, and nothing else does.
  const batches = new WeakMap<CallContext["waitUntil"], PendingBatch>();
  const event = async (ctx: CallContext, message: ClientMessage, answer: string | undefined): Promise<AuditEvent | undefined> => {
    try {
      return await auditEventOf(ctx.record, ctx, message, answer, config);
    } catch (error) {
      failedEvents++;
      console.error("mcp-edge-gateway: audit: an event could not be built", error);
      return undefined;
    }
  };
  return async function auditTrail(ctx, message) {
    if (!isAudited(message, config)) return next(ctx, message);
    let batch = batches.get(ctx.waitUntil);
    if (!batch) batches.set(ctx.waitUntil, (batch = { running: 0, events: [] }));
    batch.running++;
    let answer: string | undefined;
    try {
      answer = await next(ctx, message);
      return answer;
    } finally {
      batch.events.push(() => event(ctx, message, answer));
      if (--batch.running === 0) {
        batches.delete(ctx.waitUntil);
        ctx.waitUntil(send(ctx.services.auditQueue, batch.events));
      }
    }
  };
}
