/**
 * The Worker's Queue consumer: the audit events of each delivered batch are written to
 * R2 (features/audit/audit-log.ts) and the batch acknowledged. When the write fails every
 * message is retried with exponential backoff; after `max_retries` (wrangler.toml) the
 * Queue moves them to the dead-letter queue. A message that is not an audit event
 * (nothing this gateway sent) is logged and acknowledged: retrying cannot fix it.
 */
import { isAuditEvent, type AuditEvent } from "./audit-event";
import { writeAuditBatch } from "./audit-log";

/** Retry delay of a failed batch: doubles per attempt from this, up to the cap. */
export const RETRY_BASE_DELAY_S = 10;
export const MAX_RETRY_DELAY_S = 15 * 60;

/** The delay before attempt `attempts + 1` of a message already tried `attempts` times. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(MAX_RETRY_DELAY_S, RETRY_BASE_DELAY_S * 2 ** Math.max(0, attempts - 1));
}

/**
 * Consumes one batch of the audit Queue.
 *
 * @example
 * export default { fetch: app.fetch, queue: (batch, env) => consumeAuditBatch(batch, env) };
 */
export async function consumeAuditBatch(
  batch: MessageBatch<unknown>,
  env: Readonly<Record<string, unknown>>,
): Promise<void> {
  const events: AuditEvent[] = [];
  const ids: string[] = [];
  const delivered: Message<unknown>[] = [];
  for (const message of batch.messages) {
    if (isAuditEvent(message.body)) {
      events.push(message.body);
      ids.push(message.id);
      delivered.push(message);
    } else {
      console.error(
        `mcp-edge-gateway: audit: message ${message.id} on queue ${batch.queue} is not an audit event; acknowledged and dropped`,
      );
      message.ack();
    }
  }
  if (events.length === 0) return;
  const bucket = env["PAYLOADS"] as R2Bucket | undefined;
  try {
    if (!bucket) throw new Error("the PAYLOADS binding is missing from wrangler.toml");
    await writeAuditBatch(bucket, events, ids);
    for (const message of delivered) message.ack();
  } catch (error) {
    console.error(
      `mcp-edge-gateway: audit: writing a batch of ${events.length} event(s) to R2 failed; retried with backoff: ${error instanceof Error ? error.message : String(error)}`,
    );
    for (const message of delivered) message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
  }
}
