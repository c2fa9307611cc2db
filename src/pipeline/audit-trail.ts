/**
 * The audit trail: one event per audited client message, sent to the Queue from
 * `waitUntil`, so no answer ever waits for it. It wraps the record layer (it needs the
 * completed record, and the answer the client got), and sees each message begin and end:
 * the events of the messages one HTTP request runs together (a JSON-RPC batch) go in
 * one `sendBatch`, sent when the last of them ends. The events of requests that end close
 * together in one isolate share a send too (an outbox per Queue, sent COALESCE_MS after
 * its first events by the request that opened it, or at COALESCE_MAX_EVENTS): under load
 * a call costs a fraction of a `sendBatch`, not one.
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
/**
 * An outbox holding this many events is sent at once, by the request whose events filled
 * it. Events are at most MAX_EVENT_BYTES each, so an outbox holds a few MB at the very worst
 * (events are about a kilobyte as a rule).
 */
const COALESCE_MAX_EVENTS = 50;
/**
 * An outbox still open this long after it opened was not sent by the request that opened
 * it (its context was torn down before its timer fired): the next request to find it
 * takes it over and sends it, so events are late, never stuck.
 */
const ABANDONED_AFTER_MS = 20 * COALESCE_MS;

/** Events of this isolate's requests waiting to go to one Queue together. */
type Outbox = { readonly events: AuditEvent[]; readonly openedAt: number; sent: boolean };
const outboxes = new WeakMap<Queue, Outbox>();

/** Sends `outbox` (once: whoever closes it), counting and logging what could not be sent. */
async function sendOutbox(queue: Queue, outbox: Outbox): Promise<void> {
  if (outbox.sent) return;
  outbox.sent = true;
  if (outboxes.get(queue) === outbox) outboxes.delete(queue);
  try {
    await queueAuditEvents(queue, outbox.events);
  } catch (error) {
    countUnqueuedEvents(outbox.events.length);
    console.error(`mcp-edge-gateway: audit: ${outbox.events.length} event(s) not queued: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Sends a request's events through this isolate's outbox for `queue`. Only the request
 * that opens an outbox waits (COALESCE_MS, on its own timer) and sends it; a request that
 * finds one open adds its events and is done, or sends it if its events filled it or it
 * was abandoned. No request awaits a promise of another request's context.
 */
async function send(queue: Queue | undefined, pending: readonly (() => Promise<AuditEvent | undefined>)[]): Promise<void> {
  await afterTheAnswer();
  const events = (await Promise.all(pending.map((build) => build()))).filter((e): e is AuditEvent => e !== undefined);
  if (events.length === 0) return;
  // No binding: queueAuditEvents says so in the log, event ids included.
  if (!queue) return queueAuditEvents(queue, events);
  const now = Date.now();
  const open = outboxes.get(queue);
  if (open) {
    open.events.push(...events);
    if (open.events.length >= COALESCE_MAX_EVENTS || now - open.openedAt >= ABANDONED_AFTER_MS) await sendOutbox(queue, open);
    return;
  }
  const outbox: Outbox = { events: [...events], openedAt: now, sent: false };
  outboxes.set(queue, outbox);
  await new Promise<void>((resolve) => setTimeout(resolve, COALESCE_MS));
  await sendOutbox(queue, outbox);
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
