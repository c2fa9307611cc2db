/**
 * Slows down guesses at the admin token: after ADMIN_FAILURES_PER_SOURCE wrong tokens from
 * one source (its address, CF-Connecting-IP) within ADMIN_THROTTLE_WINDOW_MS, that source
 * is answered 429 with Retry-After until the window ends, for the admin API and the
 * console's sign-in alike, and its token is not honoured meanwhile (a right guess while
 * throttled gets the same 429, so throttled guesses learn nothing).
 *
 * Two layers, neither the only copy of anything that matters:
 * - a per-isolate budget (this module's memory): each isolate lets a source fail
 *   ADMIN_FAILURES_PER_SOURCE times a window. It is a slowdown, not a global bound: a
 *   guesser whose requests land on many isolates gets that many tries on each;
 * - the rate-limiting binding ADMIN_RATE_LIMIT when wrangler.toml declares it: every failure
 *   is counted there per source (per Cloudflare location, as the binding counts), and once
 *   it says the source is over, this isolate throttles the source for the window too.
 *
 * The verdict is taken after the token was compared and before anything else is awaited,
 * so concurrent guesses are judged one after the other: 200 sent at once get at most
 * ADMIN_FAILURES_PER_SOURCE answers that say whether they were right. A right token resets
 * nothing. Memory is bounded: at most MAX_TRACKED_SOURCES sources, the oldest forgotten first.
 */
import type { RateLimiter } from "../context/call-context";

/** Wrong admin tokens one source may send per window and isolate before it is throttled. */
export const ADMIN_FAILURES_PER_SOURCE = 5;
export const ADMIN_THROTTLE_WINDOW_MS = 60_000;
/** The rate-limiting binding that counts failures across isolates, when declared (wrangler.toml). */
export const ADMIN_RATE_LIMIT_BINDING = "ADMIN_RATE_LIMIT";
const MAX_TRACKED_SOURCES = 10_000;

/** What an attempt at the admin token gets: in, refused as wrong, or throttled for `retryAfterS`. */
export type AdminAttempt =
  | { readonly verdict: "accepted" }
  | { readonly verdict: "wrong" }
  | { readonly verdict: "throttled"; readonly retryAfterS: number };

type Window = { readonly start: number; failures: number };

/** By source, oldest window first. */
const windows = new Map<string, Window>();

/** The live window of `source` at `now`, if any (an ended one is forgotten). */
function windowOf(source: string, now: number): Window | undefined {
  const window = windows.get(source);
  if (window && now - window.start >= ADMIN_THROTTLE_WINDOW_MS) {
    windows.delete(source);
    return undefined;
  }
  return window;
}

function retryAfterS(window: Window, now: number): number {
  return Math.max(1, Math.ceil((window.start + ADMIN_THROTTLE_WINDOW_MS - now) / 1_000));
}

/** Notes one failure of `source` (or, with `exhausted`, that the binding says it is over); returns its window. */
function noteFailure(source: string, now: number, exhausted = false): Window {
  let window = windowOf(source, now);
  if (!window) {
    if (windows.size >= MAX_TRACKED_SOURCES) windows.delete(windows.keys().next().value!);
    windows.set(source, (window = { start: now, failures: 0 }));
  }
  window.failures = exhausted ? Math.max(window.failures, ADMIN_FAILURES_PER_SOURCE) : window.failures + 1;
  return window;
}

/**
 * Judges one attempt at the admin token from `source`, `right` when the token compared
 * equal. Call it right after the comparison.
 *
 * @example
 * const right = await sameSecret(given, token);
 * const attempt = await judgeAdminAttempt(requestSource(request), right, limiter);
 * if (attempt.verdict === "throttled") return tooManyGuesses(attempt.retryAfterS);
 */
export async function judgeAdminAttempt(
  source: string,
  right: boolean,
  limiter: RateLimiter | undefined,
  now = Date.now(),
): Promise<AdminAttempt> {
  const window = windowOf(source, now);
  if (window && window.failures >= ADMIN_FAILURES_PER_SOURCE) {
    return { verdict: "throttled", retryAfterS: retryAfterS(window, now) };
  }
  if (right) return { verdict: "accepted" };
  noteFailure(source, now);
  if (limiter && !(await limiter.limit({ key: `admin-token:${source}` })).success) {
    // Over across isolates: throttled here too, from this failure on.
    return { verdict: "throttled", retryAfterS: retryAfterS(noteFailure(source, now, true), now) };
  }
  return { verdict: "wrong" };
}

/**
 * The console's own calls to the admin API (made in-process with ADMIN_TOKEN for a user
 * already signed in): marked by object identity, which no client can forge, and never
 * throttled, so a signed-in operator behind an address someone else is guessing from keeps
 * the console.
 */
const consoleCalls = new WeakSet<Request>();

/** Marks `request` as the console's own call; returns it. */
export function asConsoleCall(request: Request): Request {
  consoleCalls.add(request);
  return request;
}

/** True for a request `asConsoleCall` marked. */
export function isConsoleCall(request: Request): boolean {
  return consoleCalls.has(request);
}

/** The answer's text for a throttled source. */
export function throttledMessage(retryAfterS: number): string {
  return `Too Many Requests: too many wrong admin tokens from this address; retry after ${retryAfterS} seconds`;
}

/** Reads the rate-limiting binding ADMIN_RATE_LIMIT from the Worker's bindings, when it is one. */
export function adminRateLimiter(env: Readonly<Record<string, unknown>>): RateLimiter | undefined {
  const binding = Object.hasOwn(env, ADMIN_RATE_LIMIT_BINDING) ? env[ADMIN_RATE_LIMIT_BINDING] : undefined;
  const limits = typeof binding === "object" && binding !== null &&
    typeof (binding as { limit?: unknown }).limit === "function";
  return limits ? (binding as RateLimiter) : undefined;
}
