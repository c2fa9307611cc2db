/**
 * The issuer's signing keys (its JWKS), fetched and kept per isolate by the gateway
 * itself. jose's remote key set cannot share a pending fetch inside a Worker (it starts
 * one per request there) and has no cooldown after a failed fetch, so callers with
 * made-up `kid`s, or an issuer answering garbage, drove one fetch each. Unauthenticated
 * callers must not be able to drive the identity provider, so here:
 *
 * - one fetch in flight per key set and isolate: concurrent callers wait for it (each
 *   for at most JWKS_FETCH_TIMEOUT_MS). workerd runs each waiter's continuation in its
 *   own request (compatibility date 2024-10-14 on), and a fetch whose request was
 *   cancelled never settles: the timeout frees its waiters, and a fetch older than it
 *   no longer counts as in flight;
 * - after every fetch, good or failed, none for JWKS_REFETCH_COOLDOWN_MS;
 * - a key set is used for JWKS_MAX_AGE_MS, then refetched when next needed; a refetch
 *   that fails keeps the last good set in use;
 * - a token naming an unknown `kid` refetches only outside the cooldown;
 * - the body is read up to MAX_JWKS_BYTES and at most MAX_JWKS_KEYS keys are taken.
 *
 * Tokens are verified with jose's local key set over the fetched document.
 */
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { JWKSNoMatchingKey } from "jose/errors";
import { readTextUpTo } from "../core/bounded-text";
import { fail, ok, type Result } from "../core/errors";
import { isObject } from "../core/jsonrpc";

/** How long a fetched key set is used before it is fetched again. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** After a fetch (good or failed), the next waits at least this long. */
export const JWKS_REFETCH_COOLDOWN_MS = 30_000;
const JWKS_FETCH_TIMEOUT_MS = 5_000;
/** An issuer's JWKS is a few KB; this bounds what an isolate reads and parses. */
export const MAX_JWKS_BYTES = 64 * 1024;
/** Keys taken from one JWKS (issuers publish a handful, rotation included). */
export const MAX_JWKS_KEYS = 100;
/** Key sets (JWKS URLs) kept per isolate. */
const MAX_KEY_SETS = 8;
const MAX_CONTENT_TYPE_CHARS = 100;

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

type KeySetState = {
  /** The last key set fetched well, and when. */
  good?: { readonly keys: LocalKeySet; readonly at: number };
  /** When the last fetch ended, and whether it was good. */
  last?: { readonly endedAt: number; readonly ok: boolean };
  inFlight?: { readonly done: Promise<void>; readonly startedAt: number };
};

/** Thrown by the key lookup jose calls when there is no key set to verify with: the issuer's fault, not the token's. */
export class KeySetUnavailable extends Error {
  override readonly name = "KeySetUnavailable";
  /** @param retryAfterS seconds until the next fetch may be tried */
  constructor(readonly retryAfterS: number) {
    super("the identity provider's keys (JWKS) are unavailable");
  }
}

const states = new Map<string, KeySetState>();

function stateOf(url: string): KeySetState {
  let state = states.get(url);
  if (!state) {
    if (states.size >= MAX_KEY_SETS) states.clear();
    state = {};
    states.set(url, state);
  }
  return state;
}

/** The URL as logs may show it: no query, no user info (either may hold a credential). */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** The JWKS at `url`, bounded, or why it could not be had (a sentence for the log). */
async function fetchKeySet(url: string): Promise<Result<LocalKeySet, { reason: "failed"; cause: string }>> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const message = error instanceof Error ? error.message.replaceAll(url, shownUrl(url)) : String(error);
    return fail({
      reason: "failed",
      cause: timedOut ? `no answer within ${JWKS_FETCH_TIMEOUT_MS / 1000} s` : `unreachable (${message})`,
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    return fail({ reason: "failed", cause: `HTTP ${response.status}` });
  }
  let text: string | undefined;
  try {
    text = await readTextUpTo(response.body, MAX_JWKS_BYTES);
  } catch {
    return fail({ reason: "failed", cause: `the body did not arrive within ${JWKS_FETCH_TIMEOUT_MS / 1000} s` });
  }
  if (text === undefined)
    return fail({ reason: "failed", cause: `the body is larger than ${MAX_JWKS_BYTES / 1024} KiB` });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail({
      reason: "failed",
      cause: `the body is not JSON (content-type ${(response.headers.get("content-type") ?? "none").slice(0, MAX_CONTENT_TYPE_CHARS)})`,
    });
  }
  if (!isObject(value) || !Array.isArray(value["keys"]))
    return fail({ reason: "failed", cause: 'the body is not a JWK Set (no "keys" list)' });
  if (value["keys"].length > MAX_JWKS_KEYS)
    return fail({
      reason: "failed",
      cause: `the JWK Set has ${value["keys"].length} keys; at most ${MAX_JWKS_KEYS} are accepted`,
    });
  try {
    // createLocalJWKSet checks the shape of each key (an object); importing one happens when a token names it.
    return ok(createLocalJWKSet(value as unknown as JSONWebKeySet));
  } catch (error) {
    return fail({
      reason: "failed",
      cause: `the JWK Set is invalid (${error instanceof Error ? error.message : String(error)})`,
    });
  }
}

/** Resolves when `done` settles, or after `ms`, whichever is first. */
async function waitAtMost(done: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Fetches the key set unless a fetch is in flight (then waits for it) or the cooldown holds (then does nothing). */
async function refresh(url: string, state: KeySetState): Promise<void> {
  const now = Date.now();
  // A fetch older than its own timeout was begun by a request that is gone: it no longer counts.
  if (state.inFlight && now - state.inFlight.startedAt <= JWKS_FETCH_TIMEOUT_MS)
    return waitAtMost(state.inFlight.done, JWKS_FETCH_TIMEOUT_MS);
  if (state.last && now - state.last.endedAt < JWKS_REFETCH_COOLDOWN_MS) return;
  const inFlight = {
    startedAt: now,
    done: fetchKeySet(url).then((fetched) => {
      const endedAt = Date.now();
      state.last = { endedAt, ok: fetched.ok };
      if (fetched.ok) state.good = { keys: fetched.value, at: endedAt };
      else {
        const kept = state.good
          ? `the key set fetched ${Math.round((endedAt - state.good.at) / 1000)} s ago stays in use`
          : "there is no key set yet: tokens are answered 503";
        console.error(
          `mcp-edge-gateway: auth: the identity provider's JWKS (${shownUrl(url)}) could not be fetched: ${fetched.cause}; ${kept}; the next fetch is in ${JWKS_REFETCH_COOLDOWN_MS / 1000} s at the earliest`,
        );
      }
      if (state.inFlight === inFlight) delete state.inFlight;
    }),
  };
  state.inFlight = inFlight;
  return waitAtMost(inFlight.done, JWKS_FETCH_TIMEOUT_MS);
}

function unavailable(state: KeySetState): KeySetUnavailable {
  const endsAt = (state.last?.endedAt ?? Date.now()) + JWKS_REFETCH_COOLDOWN_MS;
  return new KeySetUnavailable(Math.max(1, Math.ceil((endsAt - Date.now()) / 1000)));
}

/**
 * The key lookup `jwtVerify` calls for the issuer whose JWKS is at `url`. It throws
 * `KeySetUnavailable` when no key set could be had, or when a token names a key the kept
 * set lacks and the last refetch failed (a rotated key cannot be told from a made-up one);
 * jose's `JWKSNoMatchingKey` when the issuer, asked within the cooldown, does not publish it.
 *
 * @example
 * const { payload } = await jwtVerify(token, issuerKeys(config.jwksUrl), { issuer });
 */
export function issuerKeys(url: string): JWTVerifyGetKey {
  return async function issuerKey(header, token) {
    const state = stateOf(url);
    if (!state.good || Date.now() - state.good.at >= JWKS_MAX_AGE_MS) await refresh(url, state);
    const good = state.good;
    if (!good) throw unavailable(state);
    try {
      return await good.keys(header, token);
    } catch (error) {
      if (!(error instanceof JWKSNoMatchingKey)) throw error;
      await refresh(url, state);
      if (state.good && state.good !== good) return state.good.keys(header, token);
      if (state.last?.ok === false) throw unavailable(state);
      throw error;
    }
  };
}
