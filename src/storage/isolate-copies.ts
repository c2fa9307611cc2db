/**
 * An isolate's copies of values read from KV (documents, pins), each kept while younger
 * than a TTL. No request ever awaits a read another request began: workerd cancels a
 * request whose only pending work belongs to another request's context as hung, and a
 * read shared at each expiry did that to most of the calls waiting on it under load
 * (bench:relay bursts with FILTER_CACHE_TTL_MS=5: 4,172 of 6,000). So: past its TTL, one
 * request reads a key again while the others keep the copy (a refresh abandoned for
 * REFRESH_GIVE_UP_MS lets another try); with no copy yet, each request reads; with a TTL
 * of 0 every load reads; a read begun before `forget` never stores what it read.
 */

/** A refresh not done after this long (its request went away) no longer holds others to the stale copy. */
const REFRESH_GIVE_UP_MS = 5_000;
/**
 * Keys whose copies one kind keeps at most: past it the oldest copy is dropped. Most keys are
 * the operator's documents, but some are named by a request (a named server's, from its URL),
 * and a copy is kept of a document that is absent too: without a bound, requests for made-up
 * names would grow the isolate's memory without end.
 */
export const MAX_COPIES = 4_096;

type Copy<T> = { readonly at: number; readonly value: T };

/**
 * Copies per key of one kind of value.
 *
 * @example
 * const plans = new IsolateCopies<Stored<Plan>>();
 * const plan = await plans.load("plan", 30_000, () => readPlan(kv));
 */
export class IsolateCopies<T> {
  private readonly copies = new Map<string, Copy<T>>();
  /** Keys whose stale copy one request is reading again, since when (ms). */
  private readonly refreshing = new Map<string, number>();
  /** Bumped by `forget`: a read begun before it never stores what it read. */
  private readonly generations = new Map<string, number>();

  /** This isolate's copy of `key` while younger than `ttlMs`, else what `read` gives (a failed read is not remembered). */
  async load(key: string, ttlMs: number, read: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const copy = this.copies.get(key);
    if (copy && now - copy.at < ttlMs) return copy.value;
    const refresher = copy !== undefined && ttlMs > 0;
    if (refresher) {
      const since = this.refreshing.get(key);
      if (since !== undefined && now - since < REFRESH_GIVE_UP_MS) return copy.value;
      this.refreshing.set(key, now);
    }
    const generation = this.generations.get(key) ?? 0;
    try {
      const value = await read();
      if ((this.generations.get(key) ?? 0) === generation) this.keep(key, value);
      return value;
    } finally {
      if (refresher && this.refreshing.get(key) === now) this.refreshing.delete(key);
    }
  }

  /** Keeps `value` as the copy of `key` (this isolate wrote it); a read under way does not replace it. */
  remember(key: string, value: T): void {
    this.forget(key);
    this.keep(key, value);
  }

  /** Stores the copy of `key`, dropping the oldest key's when MAX_COPIES are kept. */
  private keep(key: string, value: T): void {
    if (!this.copies.has(key) && this.copies.size >= MAX_COPIES) {
      const oldest = this.copies.keys().next();
      if (!oldest.done) {
        this.copies.delete(oldest.value);
        this.refreshing.delete(oldest.value);
      }
    }
    this.copies.set(key, { at: Date.now(), value });
  }

  /** Drops the copy of `key` (after a write through the admin API); a read under way does not bring it back. */
  forget(key: string): void {
    this.copies.delete(key);
    this.refreshing.delete(key);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }
}
