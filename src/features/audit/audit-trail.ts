/**
 * The audit trail: one event per audited client message, sent to the Queue from
 * `waitUntil`, so no answer ever waits for it. It wraps the record layer (it needs the
 * completed record, and the answer the client got), and sees each message begin and end:
 * the events of the messages one HTTP request runs together (a JSON-RPC batch) go in
 * one `sendBatch`, sent when the last of them ends. The events of requests that end close
 * together in one isolate share a send too (an outbox per Queue, sent COALESCE_MS after
 * its first events by the request that opened it, or once it holds COALESCE_MAX_EVENTS or
 * COALESCE_MAX_HELD_CHARS): under load a call costs a fraction of a `sendBatch`, not one.
 *
 * Sending (in `sendBatch`-sized groups, each event bounded) is features/audit/audit-queue.ts's:
 * a failed send is logged and counted there; the client's answer is unaffected.
 */
import type { CallContext, ClientMessage, Handler } from "../../context/call-context";
import type { Answer } from "../../context/answer";
import type { FlowEnd } from "../../core/response-flow";
import type { AuditEvent } from "./audit-event";
import { countUnqueuedEvents, queueAuditEvents } from "./audit-queue";
import { auditEventOf } from "./call-event";
import { isAudited, type AuditConfig } from "./audit-config";

/** Builds one message's event once it is sent: pure computation over the completed call (no I/O object of its request). */
type EventBuilder = () => Promise<AuditEvent | undefined>;

/**
 * The events of one HTTP request's messages that are still running or waiting to be sent
 * (built when sent), and the characters of message and answer text their builders hold.
 */
type PendingBatch = { running: number; events: EventBuilder[]; heldChars: number };

/** Lets the answer go out before any audit work: a timer yields to the runtime's I/O, a microtask would not. */
const afterTheAnswer = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * How long an outbox gathers events after its first ones (nobody waits on it: the answers
 * have gone; the consumer waits up to 2 s to fill a batch anyway). Each send has a cost of
 * its own whatever it carries: at 50 ms, a gateway answering a call every 7 ms sent about
 * seven events a time, and the isolate's CPU per call was 0.15 ms higher under `wrangler
 * dev` (docs/benchmarks.md).
 */
const COALESCE_MS = 200;
/**
 * An outbox holding this many events is sent at once, by the request whose events filled
 * it (what its builders hold is bounded by COALESCE_MAX_HELD_CHARS besides).
 */
const COALESCE_MAX_EVENTS = 50;
/**
 * An outbox whose builders hold this much message and answer text (characters: at most
 * 1 MiB as UTF-16) is sent at once, by the request that filled it: the texts an outbox
 * keeps for its builders stay bounded however large the calls it gathers.
 */
const COALESCE_MAX_HELD_CHARS = 512 * 1024;
/**
 * An outbox still open this long after it opened was not sent by the request that opened
 * it (its context was torn down before its timer fired): the next request to find it
 * takes it over and sends it, so events are late, never stuck.
 */
const ABANDONED_AFTER_MS = 1_000;

/**
 * Events of this isolate's requests waiting to go to one Queue together, as builders: the
 * request that sends the outbox builds them all, so a request that only adds its own
 * needs no timer, no `waitUntil` and no work after its answer.
 */
type Outbox = { readonly events: EventBuilder[]; heldChars: number; readonly openedAt: number; closed: boolean };
const outboxes = new WeakMap<Queue, Outbox>();

/** Builds `pending`'s events (a builder that fails is counted and logged, and left out). */
async function built(pending: readonly EventBuilder[]): Promise<AuditEvent[]> {
  return (await Promise.all(pending.map((build) => build()))).filter((e): e is AuditEvent => e !== undefined);
}

/**
 * Closes `outbox` and returns its events to send; none when it was closed already (an
 * opener whose timer fires after its outbox was taken over). No event joins it after this.
 */
function close(queue: Queue, outbox: Outbox): readonly EventBuilder[] {
  if (outbox.closed) return [];
  outbox.closed = true;
  if (outboxes.get(queue) === outbox) outboxes.delete(queue);
  return outbox.events;
}

/** Builds and sends the events of a closed outbox, counting and logging what could not be sent. */
async function deliver(queue: Queue, pending: readonly EventBuilder[]): Promise<void> {
  const events = await built(pending);
  if (events.length === 0) return;
  try {
    await queueAuditEvents(queue, events);
  } catch (error) {
    countUnqueuedEvents(events.length);
    console.error(
      `mcp-edge-gateway: audit: ${events.length} event(s) not queued: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * Sends a request's events through this isolate's outbox for `queue`; returns the work
 * this request must leave to `waitUntil`, if any. A request that finds an outbox open adds
 * its builders and is done (nothing to wait for), unless its events filled it (in events
 * or held text) or it was abandoned: then it closes it and sends it after its answer. A
 * request that finds none opens one and sends it COALESCE_MS later, on its own timer.
 * Every outbox is closed once, in the same turn that removes it, so no event is sent
 * twice or left behind; no request awaits a promise of another request's context.
 */
function send(queue: Queue | undefined, pending: PendingBatch): Promise<void> | undefined {
  // No binding: queueAuditEvents says so in the log, event ids included.
  if (!queue) return afterTheAnswer().then(async () => queueAuditEvents(queue, await built(pending.events)));
  const now = Date.now();
  const open = outboxes.get(queue);
  if (open) {
    open.events.push(...pending.events);
    open.heldChars += pending.heldChars;
    if (
      open.events.length < COALESCE_MAX_EVENTS &&
      open.heldChars < COALESCE_MAX_HELD_CHARS &&
      now - open.openedAt < ABANDONED_AFTER_MS
    )
      return undefined;
    const full = close(queue, open);
    return afterTheAnswer().then(() => deliver(queue, full));
  }
  // A request that would fill an outbox alone sends its events by itself, after its answer.
  if (pending.events.length >= COALESCE_MAX_EVENTS || pending.heldChars >= COALESCE_MAX_HELD_CHARS)
    return afterTheAnswer().then(() => deliver(queue, pending.events));
  const outbox: Outbox = { events: pending.events, heldChars: pending.heldChars, openedAt: now, closed: false };
  outboxes.set(queue, outbox);
  return new Promise<void>((resolve) => setTimeout(resolve, COALESCE_MS)).then(() =>
    deliver(queue, close(queue, outbox)),
  );
}

export type AuditTrailOptions = { readonly config: AuditConfig };

/** What the event reads of a tool error that flowed to the client unread (core/response-flow.ts): that it was one. */
const FLOWED_TOOL_ERROR = '{"result":{"isError":true}}';

/**
 * Wraps the record layer so that each audited message yields an event on the Queue.
 *
 * @example
 * const handle = auditTrail(recordCalls(composeMiddleware(list, relay), []), { config: config.audit });
 */
export function auditTrail(next: Handler, { config }: AuditTrailOptions): Handler {
  // Keyed by the request's waitUntil: the one thing every message of one HTTP request shares, and nothing else does.
  const batches = new WeakMap<CallContext["waitUntil"], PendingBatch>();
  const event = async (
    ctx: CallContext,
    message: ClientMessage,
    answer: string | undefined,
  ): Promise<AuditEvent | undefined> => {
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
    if (!batch) {
      batch = { running: 0, events: [], heldChars: 0 };
      batches.set(ctx.waitUntil, batch);
    }
    batch.running++;
    let answer: Answer | undefined;
    try {
      answer = await next(ctx, message);
      return answer;
    } finally {
      // The answer's text is read when the event is built, after the answer went out; not that of an
      // answer kept as the upstream's bytes (a success) unless it is a tool error (core/response-bytes.ts).
      const read = answer;
      const pending = batch;
      const ended = (flowed?: FlowEnd) => {
        // An answer that flowed went out unread: a tool error is said by its layout, without its message.
        const text = () => {
          if (flowed) return flowed.ok && flowed.layout.toolError ? FLOWED_TOOL_ERROR : undefined;
          return read?.held && !read.held.toolError ? undefined : read?.text;
        };
        pending.events.push(() => event(ctx, message, text()));
        pending.heldChars += (read?.byteLength ?? 0) + ("wire" in message ? message.wire.text.length : 0);
        if (--pending.running > 0) return undefined;
        batches.delete(ctx.waitUntil);
        return send(ctx.services.auditQueue, pending);
      };
      // An answer that flows (read by no one) has its event once it ended, its record complete; no other
      // request's outbox ever waits on it.
      if (read?.flow) ctx.waitUntil(read.flow.ended.then(ended));
      else {
        const sending = ended();
        if (sending) ctx.waitUntil(sending);
      }
    }
  };
}
