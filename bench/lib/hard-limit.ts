/**
 * Every bench stops by itself: after `ms`, whatever it is doing, it says so, runs its
 * clean-up (stopping the processes it started) and exits with 1.
 */

/**
 * Arms the limit; the returned function disarms it (call it when the bench is done).
 *
 * @example
 * const disarm = hardLimit("bench:auth", 10 * 60_000, stopAll);
 * try { await run(); } finally { disarm(); await stopAll(); }
 */
export function hardLimit(label: string, ms: number, cleanUp: () => Promise<unknown> = async () => {}): () => void {
  const timer = setTimeout(() => {
    console.error(`[${label}] still running after ${ms / 60_000} minutes; stopping`);
    void cleanUp().finally(() => process.exit(1));
  }, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
