/**
 * How many failed authentications an isolate records one by one, so a flood of bad
 * credentials cannot fill the audit trail: at most AUTH_FAILURE_EVENTS_PER_SOURCE a
 * minute from one source (its address), and at most AUTH_FAILURE_EVENTS_PER_ISOLATE a
 * minute from all sources together. What is past the bound is counted, not recorded:
 * when a source's minute has ended, one summary says how many of its failures were left
 * out, why they failed and when. Failures of sources that arrive once the isolate's bound
 * is reached are counted under OTHER_SOURCES.
 *
 * A summary is handed out with the next failure this isolate sees after the minute ends
 * (an isolate keeps no timers). Memory is bounded: a source is tracked only while it has
 * events recorded in its minute (at most AUTH_FAILURE_EVENTS_PER_ISOLATE new ones a
 * minute), and never more than MAX_TRACKED_SOURCES at once.
 */

/** Failures recorded one by one per source and minute. */
export const AUTH_FAILURE_EVENTS_PER_SOURCE = 10;
/** Failures recorded one by one per isolate and minute, all sources together. */
export const AUTH_FAILURE_EVENTS_PER_ISOLATE = 100;
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** The source under which failures past the isolate's bound from untracked sources are counted. */
export const OTHER_SOURCES = "(other sources)";
const MAX_TRACKED_SOURCES = 1_000;
/** Summaries handed out with one failure (the rest follow with the next ones). */
const MAX_SUMMARIES_PER_FAILURE = 10;
/** Distinct reasons counted in one summary (the reasons are a small fixed set; this only bounds it). */
const MAX_REASONS = 32;

/** The failures of one source that were counted and not recorded. */
export type SuppressedFailures = {
  readonly source: string;
  readonly count: number;
  /** The first and last of them (ms since the epoch). */
  readonly fromMs: number;
  readonly toMs: number;
  readonly reasons: Readonly<Record<string, number>>;
  /** Their route, or `(several)`. */
  readonly route: string;
};

/** What to do with one failure: record it or not, and the summaries now due. */
export type FailureVerdict = { readonly record: boolean; readonly summaries: readonly SuppressedFailures[] };

type Window = {
  readonly start: number;
  recorded: number;
  suppressed?: { count: number; fromMs: number; toMs: number; reasons: Record<string, number>; route: string };
};

function summaryOf(source: string, window: Window): SuppressedFailures | undefined {
  const suppressed = window.suppressed;
  return (
    suppressed && {
      source,
      count: suppressed.count,
      fromMs: suppressed.fromMs,
      toMs: suppressed.toMs,
      reasons: suppressed.reasons,
      route: suppressed.route,
    }
  );
}

/**
 * The per-isolate bound on failed-authentication events.
 *
 * @example
 * const verdict = budget.admit("203.0.113.7", "token-expired", "/mcp", Date.now());
 * if (verdict.record) recordFailure(); for (const summary of verdict.summaries) recordSummary(summary);
 */
export class FailureBudget {
  /** By source, in the order their minutes began (a source whose minute ends is deleted, then begins anew at the end). */
  readonly #windows = new Map<string, Window>();
  #isolateStart = Number.NEGATIVE_INFINITY;
  #isolateRecorded = 0;

  /** Takes one failure of `source` for `reason` on `route` at `now`. */
  admit(source: string, reason: string, route: string, now: number): FailureVerdict {
    const summaries = this.#closeEnded(now);
    if (now - this.#isolateStart >= AUTH_FAILURE_WINDOW_MS) {
      this.#isolateStart = now;
      this.#isolateRecorded = 0;
    }
    let window = this.#windows.get(source);
    if (window && now - window.start >= AUTH_FAILURE_WINDOW_MS) {
      const summary = summaryOf(source, window);
      if (summary) summaries.push(summary);
      this.#windows.delete(source);
      window = undefined;
    }
    const room = this.#isolateRecorded < AUTH_FAILURE_EVENTS_PER_ISOLATE;
    if (!window && room && this.#windows.size < MAX_TRACKED_SOURCES) {
      window = { start: now, recorded: 0 };
      this.#windows.set(source, window);
    }
    if (window && room && window.recorded < AUTH_FAILURE_EVENTS_PER_SOURCE) {
      window.recorded++;
      this.#isolateRecorded++;
      return { record: true, summaries };
    }
    this.#suppress(window ?? this.#otherSources(now), reason, route, now);
    return { record: false, summaries };
  }

  #otherSources(now: number): Window {
    let window = this.#windows.get(OTHER_SOURCES);
    if (!window) {
      window = { start: now, recorded: 0 };
      this.#windows.set(OTHER_SOURCES, window);
    }
    return window;
  }

  #suppress(window: Window, reason: string, route: string, now: number): void {
    window.suppressed ??= { count: 0, fromMs: now, toMs: now, reasons: {}, route };
    const suppressed = window.suppressed;
    suppressed.count++;
    suppressed.toMs = now;
    if (reason in suppressed.reasons || Object.keys(suppressed.reasons).length < MAX_REASONS)
      suppressed.reasons[reason] = (suppressed.reasons[reason] ?? 0) + 1;
    if (suppressed.route !== route) suppressed.route = "(several)";
  }

  /** The summaries of windows whose minute has ended (oldest first, a bounded number), which are forgotten. */
  #closeEnded(now: number): SuppressedFailures[] {
    const summaries: SuppressedFailures[] = [];
    for (const [source, window] of this.#windows) {
      if (now - window.start < AUTH_FAILURE_WINDOW_MS || summaries.length >= MAX_SUMMARIES_PER_FAILURE) break;
      const summary = summaryOf(source, window);
      if (summary) summaries.push(summary);
      this.#windows.delete(source);
    }
    return summaries;
  }
}
