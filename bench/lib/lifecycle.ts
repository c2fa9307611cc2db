/**
 * What a bench that starts processes does around its work: every process it started is
 * stopped exactly once, in reverse order, when the work ends, on SIGINT or SIGTERM, and
 * past the bench's hard limit (lib/hard-limit.ts).
 */
import { hardLimit } from "./hard-limit.ts";

/** Where a bench puts the stop of each process it starts, as soon as it has started it. */
export type Stops = (() => Promise<unknown>)[];

/**
 * Runs `work` with a list to push stops to; stops them all afterwards, whatever happened.
 *
 * @example
 * await withProcesses("bench:lists", 10 * 60_000, async (stops) => {
 *   const upstream = await startUpstream("lists");
 *   stops.push(upstream.stop);
 * });
 */
export async function withProcesses<T>(label: string, limitMs: number, work: (stops: Stops) => Promise<T>): Promise<T> {
  const stops: Stops = [];
  let stopped: Promise<void> | undefined;
  const stopAll = () =>
    (stopped ??= (async () => {
      for (const stop of stops.reverse())
        await stop().catch((error: unknown) => console.error(`[${label}] while stopping: ${String(error)}`));
    })());
  const interrupted = (why: string, code: number) => () => {
    console.error(`[${label}] ${why}; stopping everything`);
    void stopAll().then(() => process.exit(code));
  };
  process.once("SIGINT", interrupted("interrupted", 130));
  process.once("SIGTERM", interrupted("terminated", 143));
  const disarm = hardLimit(label, limitMs, stopAll);
  try {
    return await work(stops);
  } finally {
    disarm();
    await stopAll();
  }
}
