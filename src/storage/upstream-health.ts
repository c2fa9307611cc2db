/**
 * Upstream health windows in KV: what one isolate saw of one upstream's real traffic
 * over a stretch of time (calls, relay failures, last success, latency samples, the
 * protocol revision it speaks). Isolates write a window at most once per flush interval
 * per upstream, each under its own key with a short expiry, so "recent" is whatever
 * windows KV still holds; readers merge them. Approximate by design: an isolate's
 * unwritten calls, KV's propagation delay and sampling all blur it, and nothing depends
 * on it for correctness.
 */

const HEALTH_KEY_PREFIX = "upstream-health/";
/** How long a window counts as recent. */
export const HEALTH_RETENTION_S = 15 * 60;
/** Latency samples a window keeps (the first ones of the window past this are dropped). */
export const MAX_LATENCY_SAMPLES = 256;
/** Windows read per upstream for a report, newest first. */
const MAX_WINDOWS_READ = 50;

export type HealthWindow = {
  readonly upstream: string;
  /** ms since the epoch. */
  readonly from: number;
  to: number;
  calls: number;
  /** Calls that did not get the upstream's answer (unreachable, timeout, HTTP status...). */
  errors: number;
  lastSuccess: number | null;
  lastFailure: { readonly at: number; readonly reason: string } | null;
  protocolVersion: string | null;
  latenciesMs: number[];
};

export function newWindow(upstream: string, now = Date.now()): HealthWindow {
  return {
    upstream,
    from: now,
    to: now,
    calls: 0,
    errors: 0,
    lastSuccess: null,
    lastFailure: null,
    protocolVersion: null,
    latenciesMs: [],
  };
}

/** Adds one call to a window. */
export function addCall(
  window: HealthWindow,
  call: { at: number; durationMs: number; failure?: string; protocolVersion?: string },
): void {
  window.calls++;
  window.to = Math.max(window.to, call.at);
  if (call.failure !== undefined) {
    window.errors++;
    window.lastFailure = { at: call.at, reason: call.failure };
  } else window.lastSuccess = call.at;
  if (call.protocolVersion) window.protocolVersion = call.protocolVersion;
  if (window.latenciesMs.length < MAX_LATENCY_SAMPLES) window.latenciesMs.push(call.durationMs);
}

/**
 * Writes a window (its own key: windows are never overwritten).
 *
 * @example
 * ctx.waitUntil(writeWindow(kv, window, isolateId));
 */
export async function writeWindow(kv: KVNamespace, window: HealthWindow, writer: string): Promise<void> {
  const key = `${HEALTH_KEY_PREFIX}${window.upstream}/${String(window.from).padStart(15, "0")}-${writer}`;
  await kv.put(key, JSON.stringify(window), { expirationTtl: HEALTH_RETENTION_S });
}

/** The recent windows of `upstream` that KV holds, newest first. */
export async function readWindows(kv: KVNamespace, upstream: string): Promise<HealthWindow[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown, string> = await kv.list({
      prefix: `${HEALTH_KEY_PREFIX}${upstream}/`,
      ...(cursor ? { cursor } : {}),
    });
    keys.push(...page.keys.map((key) => key.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  const newest = keys.sort().reverse().slice(0, MAX_WINDOWS_READ);
  const texts = await Promise.all(newest.map((key) => kv.get(key)));
  return texts.filter((text): text is string => text !== null).map((text) => JSON.parse(text) as HealthWindow);
}

/** The `p`-th percentile (0-100) of sorted values, nearest rank; null for none. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export type HealthReport = {
  readonly protocolVersion: string | null;
  readonly lastSuccess: string | null;
  readonly lastFailure: { readonly at: string; readonly reason: string } | null;
  readonly recent: {
    readonly since: string | null;
    readonly calls: number;
    readonly errors: number;
    readonly errorRate: number | null;
    readonly latencyMs: { p50: number | null; p90: number | null; p99: number | null };
  };
};

/** Merges windows into one report. */
export function summarize(windows: readonly HealthWindow[]): HealthReport {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  let calls = 0;
  let errors = 0;
  let lastSuccess: number | null = null;
  let lastFailure: { at: number; reason: string } | null = null;
  let latest: HealthWindow | undefined;
  let since: number | null = null;
  const latencies: number[] = [];
  for (const window of windows) {
    calls += window.calls;
    errors += window.errors;
    if (window.lastSuccess !== null && (lastSuccess === null || window.lastSuccess > lastSuccess))
      lastSuccess = window.lastSuccess;
    if (window.lastFailure && (!lastFailure || window.lastFailure.at > lastFailure.at))
      lastFailure = window.lastFailure;
    if (window.protocolVersion && (!latest || window.to > latest.to)) latest = window;
    since = since === null ? window.from : Math.min(since, window.from);
    latencies.push(...window.latenciesMs);
  }
  latencies.sort((a, b) => a - b);
  return {
    protocolVersion: latest?.protocolVersion ?? null,
    lastSuccess: iso(lastSuccess),
    lastFailure: lastFailure && { at: iso(lastFailure.at)!, reason: lastFailure.reason },
    recent: {
      since: iso(since),
      calls,
      errors,
      errorRate: calls === 0 ? null : errors / calls,
      latencyMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99) },
    },
  };
}
