/**
 * The audit trail as a test reads it: vars with an upstream of a fresh name (so one
 * test's events are told apart from every other's), a tool call, and the events read
 * back through GET /admin/audit once the Worker's own Queue consumer has written them.
 */
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import { gatewayFetch, post, type Json, type Vars } from "./gateway";

export const AUDIT_ADMIN_TOKEN = "audit-test-admin-token-0123456789";
const CONSUMER_DEADLINE_MS = 15_000;
const POLL_MS = 100;

/** Vars with one upstream of a fresh name (the trace upstream: whoami, fail, refuse). */
export function upstreamVars(extra: Vars = {}): { name: string; vars: Vars } {
  const name = `audit${crypto.randomUUID().slice(0, 8)}`;
  return {
    name,
    vars: {
      ADMIN_TOKEN: AUDIT_ADMIN_TOKEN,
      UPSTREAMS: JSON.stringify([{ name, url: inject("traceUpstreamUrl") }]),
      ...extra,
    },
  };
}

/**
 * The Worker's real Queue with each `sendBatch` recorded before it is sent: given as
 * AUDIT_QUEUE, it lets a test assert how events were grouped into sends.
 */
export function recordingQueue(): { queue: Queue; batches: { body: Json }[][] } {
  const batches: { body: Json }[][] = [];
  const real = (env as unknown as { AUDIT_QUEUE: Queue }).AUDIT_QUEUE;
  const queue = {
    send: (body: unknown, options?: QueueSendOptions) => real.send(body, options),
    sendBatch: (messages: Iterable<MessageSendRequest>, options?: QueueSendBatchOptions) => {
      const batch = [...messages];
      batches.push(batch as { body: Json }[]);
      return real.sendBatch(batch, options);
    },
  } as unknown as Queue;
  return { queue, batches };
}

/** GET /admin/audit?`query`: the events (or the error body) and the headers. */
export async function readAudit(
  query: string,
  vars: Vars = { ADMIN_TOKEN: AUDIT_ADMIN_TOKEN },
): Promise<{ status: number; events: Json[]; headers: Headers }> {
  const response = await gatewayFetch(
    `/admin/audit?${query}`,
    { headers: { authorization: `Bearer ${AUDIT_ADMIN_TOKEN}` } },
    vars,
  );
  const text = await response.text();
  if (response.status !== 200)
    return { status: response.status, events: [JSON.parse(text)], headers: response.headers };
  return {
    status: 200,
    events: text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
    headers: response.headers,
  };
}

/** The events of `query` once the consumer has written at least `count` (it runs on its own schedule, so R2 is asked until then). */
export async function eventsOnceWritten(query: string, count: number): Promise<Json[]> {
  const deadline = Date.now() + CONSUMER_DEADLINE_MS;
  for (;;) {
    const { events } = await readAudit(query);
    if (events.length >= count || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** A tools/call of `name` with `args` on `path` in `session`. */
export function call(
  path: string,
  session: string,
  name: string,
  args: unknown,
  vars: Vars,
  headers: Record<string, string> = {},
  meta?: Json,
): Promise<Response> {
  const params = { name, arguments: args, ...(meta ? { _meta: meta } : {}) };
  return post(
    path,
    { jsonrpc: "2.0", id: Math.floor(Math.random() * 1e9), method: "tools/call", params },
    { session, vars, headers },
  );
}
