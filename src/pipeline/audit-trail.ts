/**
 * The audit trail: one event per audited client message, sent to the Queue from
 * `waitUntil`, so no answer ever waits for it. It wraps the record layer (it needs the
 * completed record, and the answer the client got), and sees each message begin and end:
 * the events of the messages one HTTP request runs together (a JSON-RPC batch) go in
 * one `sendBatch`, sent when the last of them ends. The events of requests that end close
 * together in one isolate share a send too (an outbox per Queue, sent COALESCE_MS after
 * its first events, or at COALESCE_MAX_EVENTS): under load a call costs a fraction of a
 * `sendBatch`, not one. Each request's `waitUntil` holds until the send carrying its
 * events is done.
 *
 * Sending (in `sendBatch`-sized groups, each event bounded) is storage/audit-queue.ts's:
 * a failed send is logged and counted there; the client's answer is unaffected.
 */
import type { AuditConfig } from "../config/audit-config";
import type { CallContext, ClientMessage, Handler } from "../context/call-context";
import type { AuditEvent } from "../storage/audit-event";
import { countUnqueuedEvents, queueAuditEvents } from "../storage/audit-queue";
import { auditEventOf, isAudited } from "./audit-event";

/** The events of one HTTP request's messages that are still running or waiting to be sent (built when sent). */
type PendingBatch = { running: number; events: (() => Promise<AuditEvent | undefined>)[] };

/** Lets the answer go out before any audit work: a timer yields to the runtime's I/O, a microtask would not. */
const afterTheAnswer = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** How long an outbox gathers events after its first ones (nobody waits on it: the answers have gone). */
const COALESCE_MS = 50;
/** An outbox holding this many events is sent at once (events are at most MAX_EVENT_BYTES each). */
const COALESCE_MAX_EVENTS = 50;

/** Events of this isolate's requests waiting to go to one Queue together. */
type Outbox = { readonly events: AuditEvent[]; readonly sendNow: () => void; readonly sent: Promise<void> };
const outboxes = new WeakMap<Queue, Outbox>();

function outboxOf(queue: Queue): Outbox {
  const open = outboxes.get(queue);
  if (open) return open;
  let due!: () => void;
  const whenDue = new Promise<void>((resolve) => (due = resolve));
  const timer = setTimeout(due, COALESCE_MS);
  const events: AuditEvent[] = [];
  const outbox: Outbox = {
    events,
    sendNow: () => {
      clearTimeout(timer);
      due();
    },
    // Closed (later events open a new outbox) in the same turn as it is sent.
    sent: whenDue.then(() => {
      outboxes.delete(queue);
      return queueAuditEvents(queue, events);
    }),
  };
  outboxes.set(queue, outbox);
  return outbox;
}

async function send(queue: Queue | undefined, pending: readonly (() => Promise<AuditEvent | undefined>)[]): Promise<void> {
  await afterTheAnswer();
  const events = (await Promise.all(pending.map((build) => build()))).filter((e): e is AuditEvent => e !== undefined);
  if (events.length === 0) return;
  // No binding: queueAuditEvents says so in the log, event ids included.
  if (!queue) return queueAuditEvents(queue, events);
  const outbox = outboxOf(queue);
  outbox.events.push(...events);
  if (outbox.events.length >= COALESCE_MAX_EVENTS) outbox.sendNow();
  await outbox.sent;
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
      countUnqueuedEvents(1);
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
