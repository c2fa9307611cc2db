/**
 * Sign-in access tokens this isolate checked, kept so a client's next calls cost what an
 * API key's do (a SHA-256 and a lookup) instead of the library's KV read of the token's
 * record and its decryption of the grant (measured: 14 ms a call under `npm start`, of which
 * the KV read was about 8). Only tokens that passed the library's check are kept.
 *
 * - Keyed by the SHA-256 of the token: the token itself is never kept (nor its secret part).
 * - At most MAX_CACHED_SIGN_IN_TOKENS entries; the oldest is dropped to make room.
 * - An entry is used until the document cache TTL (FILTER_CACHE_TTL_MS, 30 s by default)
 *   has passed since the check, and never at or past the token's own expiry.
 * - A grant revoked on this isolate (by its user, an operator, the client's RFC 7009
 *   request, or a new grant replacing it) drops its entries at once, and a check under way
 *   then is not stored; other isolates keep theirs for at most the TTL.
 */
import { bytesToBase64Url } from "../../core/base64url";
import type { SignedInUser } from "./authorization-server";

/** The most checked tokens one isolate keeps (a few hundred bytes each). */
export const MAX_CACHED_SIGN_IN_TOKENS = 1_000;

/** What a check found: the user, the grant's ids, the resource it opened, and the token's expiry (ms). */
export type CheckedToken = {
  readonly user: SignedInUser;
  readonly userId: string;
  readonly grantId: string;
  readonly resource: string;
  readonly expiresAtMs: number;
};

type Entry = CheckedToken & { readonly untilMs: number };

/** A bounded per-isolate map from a token's digest to what its check found. */
export class SignInTokenCache {
  readonly #entries = new Map<string, Entry>();
  #generation = 0;

  constructor(readonly max: number = MAX_CACHED_SIGN_IN_TOKENS) {}

  /** How many tokens are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** Marks the start of a check: `store` keeps its result only if no grant was revoked since. */
  begin(): number {
    return this.#generation;
  }

  /** What the check of the token of `digest` found, while still usable at `nowMs`. */
  get(digest: string, nowMs: number): CheckedToken | undefined {
    const entry = this.#entries.get(digest);
    if (entry === undefined) return undefined;
    if (nowMs < entry.untilMs && nowMs < entry.expiresAtMs) return entry;
    this.#entries.delete(digest);
    return undefined;
  }

  /** Keeps a check's result for `ttlMs` (never past the token's expiry), unless a revocation came since `begun`. */
  store(digest: string, checked: CheckedToken, ttlMs: number, nowMs: number, begun: number): void {
    if (begun !== this.#generation || ttlMs <= 0 || nowMs >= checked.expiresAtMs) return;
    this.#entries.delete(digest);
    if (this.#entries.size >= this.max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(digest, { ...checked, untilMs: nowMs + ttlMs });
  }

  /** Drops the tokens of the user's grant (of all the user's grants without `grantId`); linear in the entries. */
  forget(userId: string, grantId?: string): void {
    this.#generation++;
    for (const [digest, entry] of this.#entries) {
      if (entry.userId === userId && (grantId === undefined || entry.grantId === grantId)) this.#entries.delete(digest);
    }
  }
}

/** This isolate's cache. */
export const signInTokens = new SignInTokenCache();

/** The cache's key of a token: its SHA-256, base64url (the token is not kept). */
export async function tokenDigest(token: string): Promise<string> {
  return bytesToBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token))));
}

/** Drops the cached tokens of a grant revoked on this isolate (of every grant of the user without `grantId`). */
export function forgetSignInTokens(userId: string, grantId?: string): void {
  signInTokens.forget(userId, grantId);
}
