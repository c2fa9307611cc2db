/**
 * The benchmark's load patterns: interleaved sequential calls for latency, a fixed
 * number of calls with several in flight for throughput, bursts of calls all in flight
 * at once for tail latency, and a batch of calls to one target alone for CPU accounting.
 */
import { performance } from "node:perf_hooks";
import type { Target } from "./target.ts";

/**
 * `iterations` rounds in which every target gets one call, one at a time; each round
 * starts at the next target, so drift and ordering effects hit all targets alike.
 * The first `warmup` rounds are not recorded. Returns each target's latencies (ms).
 */
export async function interleavedLatency(
  targets: readonly Target[],
  iterations: number,
  warmup: number,
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < warmup + iterations; round++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(round + k) % targets.length]!;
      const start = performance.now();
      await target.call();
      const elapsed = performance.now() - start;
      if (round >= warmup) samples.get(target.name)!.push(elapsed);
    }
  }
  return samples;
}

export type Throughput = {
  readonly requests: number;
  readonly inFlight: number;
  readonly seconds: number;
  readonly perSecond: number;
};

/** Sends exactly `requests` calls to `target` with `inFlight` of them outstanding at a time. */
export async function concurrentCalls(target: Target, requests: number, inFlight: number): Promise<Throughput> {
  let started = 0;
  const worker = async () => {
    while (started < requests) {
      started++;
      await target.call();
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, requests) }, worker));
  const seconds = (performance.now() - start) / 1000;
  return { requests, inFlight, seconds, perSecond: requests / seconds };
}

/**
 * `size` calls to `target` sent at once (all of them in flight together); each answered
 * call's latency (ms) from the moment the burst starts to its answer, and the calls that
 * failed (an error answer, a refused connection), with the first failure's message.
 */
export async function burstLatency(
  target: Target,
  size: number,
): Promise<{ samples: number[]; failed: number; firstFailure?: string }> {
  const samples: number[] = [];
  let failed = 0;
  let firstFailure: string | undefined;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: size }, async () => {
      try {
        await target.call();
        samples.push(performance.now() - start);
      } catch (error) {
        failed++;
        firstFailure ??= String(error instanceof Error ? error.message : error).split("\n")[0];
      }
    }),
  );
  return { samples, failed, ...(firstFailure === undefined ? {} : { firstFailure }) };
}

/** `count` calls to `target`, one after another. */
export async function sequentialCalls(target: Target, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await target.call();
}
