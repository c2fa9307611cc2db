/**
 * The default call observer: measures each upstream on real traffic (every request a
 * call record names an upstream for) into this isolate's health window, and writes the
 * window to KV at most once per `HEALTH_FLUSH_INTERVAL_MS` per upstream, after the
 * answer (`waitUntil`). `GET /admin/upstreams` merges the windows of every isolate
 * (storage/upstream-health.ts). The isolate only aggregates; a lost window makes the
 * view less complete, never a call wrong.
 */
import { randomHexId } from "../core/ids";
import { heldSession } from "../upstream/upstream-session";
import { addCall, newWindow, writeWindow, type HealthWindow } from "../storage/upstream-health";
import type { CallObserver } from "./record-calls";

/** An isolate writes each upstream's window at most this often. */
export const HEALTH_FLUSH_INTERVAL_MS = 60_000;
/** Upstreams an isolate keeps windows for (a bound on memory, whatever UPSTREAMS holds). */
const MAX_TRACKED_UPSTREAMS = 256;
/** Failures that are the upstream's, not the gateway's own. */
const UPSTREAM_FAILURES: ReadonlySet<string> = new Set([
  "unreachable",
  "timeout",
  "http-status",
  "session-expired",
  "bad-response",
  "missing-binding",
  "no-response",
]);

/**
 * Requests that /mcp answers for every upstream at once (merged lists, initialize, ping):
 * their record names one upstream but times them all, so they say nothing of it.
 */
const MERGED_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "logging/setLevel",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "tasks/list",
]);

/** This isolate's name on the windows it writes (made on first use: Workers refuse random values at global scope). */
let isolateId: string | undefined;
const windows = new Map<string, HealthWindow>();
const lastFlush = new Map<string, number>();

/** This isolate's windows not yet written, for a report served by this isolate. */
export function pendingWindows(upstream: string): HealthWindow[] {
  const window = windows.get(upstream);
  return window && window.calls > 0 ? [window] : [];
}

/**
 * Observes each completed request that reached an upstream.
 *
 * @example
 * buildPipeline(config, { observers: [upstreamHealth] });
 */
export const upstreamHealth: CallObserver = function upstreamHealth(record, ctx, message) {
  const upstream = record.upstream;
  if (message.kind !== "request" || upstream === undefined) return;
  if (ctx.route.kind === "aggregated" && MERGED_METHODS.has(message.wire.message.method)) return;
  const failure = record.failure !== undefined && UPSTREAM_FAILURES.has(record.failure) ? record.failure : undefined;
  if (record.failure !== undefined && failure === undefined) return; // the gateway's own error says nothing of the upstream
  let window = windows.get(upstream);
  if (!window) {
    if (windows.size >= MAX_TRACKED_UPSTREAMS) windows.clear();
    window = newWindow(upstream, record.startedAt);
    windows.set(upstream, window);
  }
  const protocolVersion = heldSession(ctx.upstreamClient, upstream)?.protocolVersion;
  const now = Date.now();
  addCall(window, {
    at: now,
    durationMs: record.durationMs ?? now - record.startedAt,
    ...(failure ? { failure } : {}),
    ...(protocolVersion ? { protocolVersion } : {}),
  });
  const kv = ctx.services.kv;
  if (!kv || now - (lastFlush.get(upstream) ?? 0) < HEALTH_FLUSH_INTERVAL_MS) return;
  lastFlush.set(upstream, now);
  windows.delete(upstream);
  isolateId ??= randomHexId().slice(0, 12);
  ctx.waitUntil(
    writeWindow(kv, window, isolateId).catch((error: unknown) =>
      console.warn("mcp-edge-gateway: an upstream health window was not written", error),
    ),
  );
};
