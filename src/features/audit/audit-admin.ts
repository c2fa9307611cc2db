/**
 * GET /admin/audit: the audit trail read back from R2 as NDJSON, newest last.
 *
 *   GET /admin/audit?from=&to=&tool=&user=&upstream=&outcome=&limit=
 *
 * `from`/`to`: ISO 8601 or ms since the epoch (default: the 24 hours up to now; at most
 * 7 days). `tool`: a tool name or glob (`alpha___*`), matched against the name the
 * client used and the qualified name `<upstream>___<name>`; `user`, `upstream`: exact;
 * `outcome`: success, tool_error or error; `limit`: 1 to 1000 (default 100): the latest
 * `limit` matching events of the range.
 *
 * Memory stays bounded however many events the range holds: hours are walked newest
 * first, one stored object at a time (one batch), and only the matching events kept,
 * at most `limit` of them and at most MAX_RESPONSE_BYTES; the dedupe set holds their
 * ids only (a copy of an event matches whenever the event does). What one hour holds is
 * listed by name (its keys), never read at once.
 */
import type { Hono } from "../../admin/hono-app";
import { isAuditEvent, type AuditEvent, type AuditOutcome, type AuditQuery } from "./audit-event";
import { eventsOfObject, hourPrefixesNewestFirst, keysOfHour } from "./audit-log";
import { isGlob, matchesGlob } from "../../core/glob";
import { qualifyName, SYS_PREFIX } from "../../core/names";

export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 1000;
const DEFAULT_RANGE_MS = 24 * 60 * 60 * 1000;
const MAX_RANGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Objects read per request: keeps one read within the platform's subrequest limit. */
const MAX_OBJECTS_READ = 800;
/** Bytes of events held for one answer (1000 events near the 128 KB message limit would be far more). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const OUTCOMES: readonly AuditOutcome[] = ["success", "tool_error", "error"];

type AuditBindings = { PAYLOADS?: R2Bucket };

type Parsed = { ok: true; query: AuditQuery; limit: number } | { ok: false; error: string };

function timeOf(raw: string | undefined, fallback: number): number | undefined {
  if (raw === undefined || raw === "") return fallback;
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The query of a request's search parameters, or what is wrong with them. */
export function parseAuditQuery(params: URLSearchParams, now = Date.now()): Parsed {
  const toMs = timeOf(params.get("to") ?? undefined, now);
  const fromMs = toMs === undefined ? undefined : timeOf(params.get("from") ?? undefined, toMs - DEFAULT_RANGE_MS);
  if (toMs === undefined || fromMs === undefined)
    return { ok: false, error: "from and to are ISO 8601 times or ms since the epoch" };
  if (fromMs > toMs) return { ok: false, error: "from is after to" };
  if (toMs - fromMs > MAX_RANGE_MS)
    return { ok: false, error: `a range of at most ${MAX_RANGE_MS / 86_400_000} days; ask for several` };
  const rawLimit = params.get("limit");
  const limit = rawLimit === null || rawLimit === "" ? DEFAULT_AUDIT_LIMIT : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT)
    return { ok: false, error: `limit is an integer from 1 to ${MAX_AUDIT_LIMIT}` };
  const outcome = params.get("outcome");
  if (outcome !== null && outcome !== "" && !OUTCOMES.includes(outcome as AuditOutcome))
    return { ok: false, error: `outcome is one of ${OUTCOMES.join(", ")}` };
  const optional = (name: string) => {
    const value = params.get(name);
    return value === null || value === "" ? {} : { [name]: value };
  };
  return {
    ok: true,
    limit,
    query: {
      fromMs,
      toMs,
      ...optional("tool"),
      ...optional("user"),
      ...optional("upstream"),
      ...(outcome ? { outcome: outcome as AuditOutcome } : {}),
    },
  };
}

const ROUTE_PREFIX = "/mcp/";

/**
 * The names a tool call's event is found by: the name the client used and the qualified
 * name (stored since it was recorded; for an older event on `/mcp/<upstream>`, made from
 * its route as the gateway makes it).
 */
function toolNames(event: AuditEvent): string[] {
  // Read back from R2: a line may hold anything.
  const name: unknown = event["gen_ai.tool.name"];
  if (typeof name !== "string") return [];
  const qualified: unknown = event["gateway.tool.qualified_name"];
  if (typeof qualified === "string") return [name, qualified];
  const route: unknown = event["gateway.route"];
  if (typeof route !== "string" || !route.startsWith(ROUTE_PREFIX) || name.startsWith(SYS_PREFIX)) return [name];
  return [name, qualifyName(route.slice(ROUTE_PREFIX.length), name)];
}

/** True when `event` is in the query's range and matches each filter given. */
export function matchesQuery(event: AuditEvent, query: AuditQuery): boolean {
  const at = Date.parse(event.timestamp);
  if (at < query.fromMs || at > query.toMs) return false;
  if (query.user !== undefined && event["user.id"] !== query.user) return false;
  if (query.upstream !== undefined && event["gateway.upstream"] !== query.upstream) return false;
  if (query.outcome !== undefined && event["gateway.outcome"] !== query.outcome) return false;
  if (query.tool !== undefined) {
    const wanted = query.tool;
    const matches = isGlob(wanted) ? (name: string) => matchesGlob(wanted, name) : (name: string) => name === wanted;
    if (!toolNames(event).some(matches)) return false;
  }
  return true;
}

type Found = { events: AuditEvent[]; truncated?: "objects" | "bytes" };

/** The latest `limit` distinct matching events, read object by object, newest first. */
async function latestEvents(bucket: R2Bucket, query: AuditQuery, limit: number): Promise<Found> {
  const events: AuditEvent[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  let reads = 0;
  for (const prefix of hourPrefixesNewestFirst(query.fromMs, query.toMs)) {
    const keys = await keysOfHour(bucket, prefix);
    for (let k = keys.length - 1; k >= 0; k--) {
      if (++reads > MAX_OBJECTS_READ) return { events, truncated: "objects" };
      const stored = await eventsOfObject(bucket, keys[k]!);
      for (let i = stored.length - 1; i >= 0; i--) {
        const event = stored[i];
        if (!isAuditEvent(event) || seen.has(event["gateway.event_id"]) || !matchesQuery(event, query)) continue;
        bytes += JSON.stringify(event).length;
        if (bytes > MAX_RESPONSE_BYTES) return { events, truncated: "bytes" };
        seen.add(event["gateway.event_id"]);
        events.push(event);
        if (events.length >= limit) return { events };
      }
    }
  }
  return { events };
}

function ndjson(events: readonly AuditEvent[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next >= events.length) return controller.close();
      controller.enqueue(encoder.encode(`${JSON.stringify(events[next++])}\n`));
    },
  });
}

/** Adds GET /audit to the admin app (behind its bearer check). */
export function addAuditRoutes<T extends { Bindings: AuditBindings }>(admin: Hono<T>): void {
  admin.get("/audit", async (c) => {
    const parsed = parseAuditQuery(new URL(c.req.url).searchParams);
    if (!parsed.ok) return c.json({ error: `invalid audit query: ${parsed.error}` }, 400);
    const bucket = c.env.PAYLOADS;
    if (!bucket)
      return c.json(
        { error: "the PAYLOADS binding (R2) is missing from wrangler.toml; audit events are stored there" },
        500,
      );
    const found = await latestEvents(bucket, parsed.query, parsed.limit);
    const events = found.events.sort(
      (a, b) => a.timestamp.localeCompare(b.timestamp) || a["gateway.event_id"].localeCompare(b["gateway.event_id"]),
    );
    const headers: Record<string, string> = {
      "content-type": "application/x-ndjson; charset=utf-8",
      "x-audit-events": String(events.length),
    };
    if (found.truncated)
      headers["x-audit-truncated"] =
        found.truncated === "objects"
          ? `read ${MAX_OBJECTS_READ} stored batches; narrow from/to for older events`
          : `over ${MAX_RESPONSE_BYTES} bytes; lower limit`;
    return new Response(ndjson(events), { headers });
  });
}
