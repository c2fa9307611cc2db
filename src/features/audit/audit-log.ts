/**
 * The audit trail in R2: each delivered Queue batch is written as NDJSON objects under
 * `audit/YYYY/MM/DD/HH/<batch-id>.ndjson` (UTC hour of the events; a batch spanning hours
 * is written as one object per hour). The batch id starts with the first event's time in
 * ms, so keys list in time order, and ends with a hash of the batch's message ids, so a
 * batch delivered again overwrites its own objects. Delivery is at least once, so
 * the same event can still lie in two objects (a message redelivered in another batch):
 * readers deduplicate by `gateway.event_id`.
 */
import type { AuditEvent } from "./audit-event";

export const AUDIT_PREFIX = "audit/";
const HOUR_MS = 60 * 60 * 1000;
/** Digits of a time in ms (fixed width until the year 2286, so keys sort by time). */
const MS_DIGITS = 13;

/** `audit/YYYY/MM/DD/HH/` of the hour holding `ms`. */
export function hourPrefix(ms: number): string {
  const date = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${AUDIT_PREFIX}${date.getUTCFullYear()}/${two(date.getUTCMonth() + 1)}/${two(date.getUTCDate())}/${two(date.getUTCHours())}/`;
}

/** The hour prefixes from the hour of `toMs` back to the hour of `fromMs`, newest first. */
export function hourPrefixesNewestFirst(fromMs: number, toMs: number): string[] {
  const prefixes: string[] = [];
  for (let hour = Math.floor(toMs / HOUR_MS) * HOUR_MS; hour >= Math.floor(fromMs / HOUR_MS) * HOUR_MS; hour -= HOUR_MS)
    prefixes.push(hourPrefix(hour));
  return prefixes;
}

async function hexDigest(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest.subarray(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Writes the events of one delivered batch (`messageIds` are the Queue's ids of its
 * messages); returns the keys written.
 *
 * @example
 * await writeAuditBatch(env.PAYLOADS, batch.messages.map((m) => m.body), batch.messages.map((m) => m.id));
 */
export async function writeAuditBatch(
  bucket: R2Bucket,
  events: readonly AuditEvent[],
  messageIds: readonly string[],
): Promise<string[]> {
  const batchHash = await hexDigest([...messageIds].sort().join("\n"));
  const byHour = new Map<string, AuditEvent[]>();
  for (const event of [...events].sort((a, b) => a.timestamp.localeCompare(b.timestamp))) {
    const prefix = hourPrefix(Date.parse(event.timestamp));
    let list = byHour.get(prefix);
    if (!list) {
      list = [];
      byHour.set(prefix, list);
    }
    list.push(event);
  }
  const keys: string[] = [];
  await Promise.all(
    [...byHour].map(async ([prefix, list]) => {
      const first = String(Date.parse(list[0]!.timestamp)).padStart(MS_DIGITS, "0");
      const key = `${prefix}${first}-${batchHash}.ndjson`;
      const body = list.map((event) => `${JSON.stringify(event)}\n`).join("");
      await bucket.put(key, body, {
        httpMetadata: { contentType: "application/x-ndjson" },
        customMetadata: { events: String(list.length) },
      });
      keys.push(key);
    }),
  );
  return keys.sort();
}

/** The object keys of one hour prefix, in key (time) order. Names only: one hour's keys, never its contents. */
export async function keysOfHour(bucket: R2Bucket, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

/** The events of one stored object (lines that are not JSON objects are skipped). */
export async function eventsOfObject(bucket: R2Bucket, key: string): Promise<unknown[]> {
  const object = await bucket.get(key);
  if (!object) return [];
  const events: unknown[] = [];
  for (const line of (await object.text()).split("\n")) {
    if (line.trim() === "") continue;
    try {
      events.push(JSON.parse(line));
    } catch {
      // A line that is not JSON: not an event this gateway wrote.
    }
  }
  return events;
}
