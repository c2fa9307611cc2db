/**
 * Audit events as the named-server tests read them: the first event of a query that
 * matches, once the Worker's own Queue consumer wrote it to R2 (on its own schedule).
 */
import { readAudit } from "../helpers/audit";
import type { Json } from "../helpers/gateway";

/** How long the consumer is given to write an event. */
const CONSUMER_DEADLINE_MS = 15_000;
const POLL_MS = 100;

/** The first audit event of `query` that `matches`; undefined when none was written in time. */
export async function eventWhere(query: string, matches: (event: Json) => boolean): Promise<Json> {
  const deadline = Date.now() + CONSUMER_DEADLINE_MS;
  for (;;) {
    const found = (await readAudit(query)).events.find(matches);
    if (found || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
