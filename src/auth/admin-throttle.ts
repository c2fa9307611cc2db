/**
 * Slows down guesses at the admin token: after ADMIN_FAILURES_PER_SOURCE wrong tokens from
 * one source within ADMIN_THROTTLE_WINDOW_MS, that source is answered 429 with Retry-After
 * until the window ends, for the admin API and the console's sign-in alike, and its token
 * is not honoured meanwhile (a right guess while throttled gets the same 429, so throttled
 * guesses learn nothing).
 *
 * A source is where CF-Connecting-IP says the request comes from, keyed by source-key.ts:
 * an IPv4 address as itself, an IPv6 address by its /64 network (whoever holds a /64 is one
 * source, not 2^64), whatever form its text takes.
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
 * nothing.
 *
 * Memory is bounded: at most MAX_TRACKED_SOURCES sources. When full, the oldest source not
 * throttled is forgotten first, so a guesser cannot free a throttled source of its own by
 * sending from many fresh ones: each fresh one is a guess that only pushes out counts below
 * the limit. A throttled source is forgotten only when every tracked one is throttled (the
 * one throttled longest ago, whose window ends soonest): a guesser holding more than
 * MAX_TRACKED_SOURCES sources gets past this isolate's budget, which is why the binding and
 * the 32-character minimum of the token (admin-token.ts) are the defence that holds.
 */
import type { RateLimiter } from "../context/call-context";
import { sourceKey } from "./source-key";

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

/** By source key: those under the limit, and those throttled, each oldest first. */
const watching = new Map<string, Window>();
const throttled = new Map<string, Window>();

function ended(window: Window, now: number): boolean {
  return now - window.start >= ADMIN_THROTTLE_WINDOW_MS;
}

/** The live window of `key` at `now`, if any (an ended one is forgotten). */
function windowOf(key: string, now: number): Window | undefined {
  const window = watching.get(key) ?? throttled.get(key);
  if (window && ended(window, now)) {
    watching.delete(key);
    throttled.delete(key);
    return undefined;
  }
  return window;
}

function retryAfterS(window: Window, now: number): number {
  return Math.max(1, Math.ceil((window.start + ADMIN_THROTTLE_WINDOW_MS - now) / 1_000));
}

/** Forgets the ended windows at the front of `windows` (amortized constant time). */
function forgetEnded(windows: Map<string, Window>, now: number): void {
  for (const [key, window] of windows) {
    if (!ended(window, now)) return;
    windows.delete(key);
  }
}

/** Makes room for one more source: ended windows go first, then the oldest unthrottled, then the oldest throttled. */
function makeRoom(now: number): void {
  forgetEnded(watching, now);
  forgetEnded(throttled, now);
  if (watching.size + throttled.size < MAX_TRACKED_SOURCES) return;
  const from = watching.size > 0 ? watching : throttled;
  from.delete(from.keys().next().value!);
}

/** Notes one failure of `key` (or, with `exhausted`, that the binding says it is over); returns its window. */
function noteFailure(key: string, now: number, exhausted = false): Window {
  let window = windowOf(key, now);
  if (!window) {
    makeRoom(now);
    window = { start: now, failures: 0 };
    watching.set(key, window);
  }
  window.failures = exhausted ? Math.max(window.failures, ADMIN_FAILURES_PER_SOURCE) : window.failures + 1;
  if (window.failures >= ADMIN_FAILURES_PER_SOURCE && watching.delete(key)) throttled.set(key, window);
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
  const key = sourceKey(source);
  const window = windowOf(key, now);
  if (window && window.failures >= ADMIN_FAILURES_PER_SOURCE) {
    return { verdict: "throttled", retryAfterS: retryAfterS(window, now) };
  }
  if (right) return { verdict: "accepted" };
  noteFailure(key, now);
  if (limiter && !(await limiter.limit({ key: `admin-token:${key}` })).success) {
    // Over across isolates: throttled here too, from this failure on.
    return { verdict: "throttled", retryAfterS: retryAfterS(noteFailure(key, now, true), now) };
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
  const limits =
    typeof binding === "object" && binding !== null && typeof (binding as { limit?: unknown }).limit === "function";
  return limits ? (binding as RateLimiter) : undefined;
}
