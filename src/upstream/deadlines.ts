/**
 * Deadlines on an upstream's answer after its headers: an upstream that sends headers
 * and then nothing must not hold a client request (or a whole aggregated answer) forever.
 *
 * Two clocks guard a body. The answer deadline runs from the request to the answer's
 * last byte (a JSON body; a stream answering initialize or a list). The idle deadline
 * restarts with every chunk and fires when the upstream has been silent too long (a
 * stream answering a long tool call). Either one cancels the body and errors it with an
 * `UpstreamBreak` carrying a `timeout` failure.
 */
import { byteReader, readableOf } from "../core/byte-reads";
import type { UpstreamFailure } from "./failures";

/** An upstream broke off its answer or broke the protocol mid-answer; carries the failure. */
export class UpstreamBreak extends Error {
  override readonly name = "UpstreamBreak";
  constructor(readonly failure: UpstreamFailure) {
    super(`upstream "${failure.upstream}" broke off its answer (${failure.reason})`);
  }
}

/** One timer for a whole answer, armed when the request is sent. */
export class AnswerDeadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private fire: () => void = () => {};
  /** Resolves when the deadline passes; never, once disarmed. */
  readonly expired: Promise<void>;
  fired = false;

  /** `onExpire` runs when the deadline passes (it aborts the fetch). */
  constructor(
    readonly timeoutMs: number,
    onExpire: () => void,
  ) {
    this.expired = new Promise<void>((resolve) => (this.fire = resolve));
    this.timer = setTimeout(() => {
      this.fired = true;
      this.fire();
      onExpire();
    }, timeoutMs);
  }

  /** Still running: neither passed nor disarmed. */
  get armed(): boolean {
    return this.timer !== undefined && !this.fired;
  }

  /** The answer is complete, or is no longer bound by this deadline. */
  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export type BodyGuard = {
  readonly upstream: string;
  /** The whole body must arrive before this deadline (when given). */
  readonly deadline?: AnswerDeadline;
  /** The upstream may be silent this long between chunks (when given). */
  readonly idleMs?: number;
  /** Set to the failure when a deadline ends the body, for readers that see another error. */
  readonly broke: { failure?: UpstreamFailure };
  /** Counts the body's bytes as they are read. */
  readonly received: { bytes: number };
};

/** What a guarded read resolved with is a deadline's failure (a read's result has no `reason`). */
function isFailure(result: unknown): result is UpstreamFailure {
  return typeof result === "object" && result !== null && "reason" in result;
}

/**
 * The body, read only when its reader asks (nothing is read ahead), failing with an
 * `UpstreamBreak` when a deadline passes first. It is a byte stream: a reader that brings
 * its own buffer gets the body's bytes copied into it from one buffer kept for the whole
 * body, so reading allocates nothing per chunk (core/byte-reads.ts); any other reader gets
 * chunks of its own. `byteReader` of it (the SSE and JSON readers) reads the guarded body
 * itself, into the reader's own buffer, with no read of this stream per chunk.
 */
export function guardBody(body: ReadableStream<Uint8Array>, guard: BodyGuard): ReadableStream<Uint8Array> {
  const reader = byteReader(body);
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    if (idleTimer !== undefined) clearTimeout(idleTimer);
    guard.deadline?.disarm();
  };
  const breakOff = (failure: UpstreamFailure): never => {
    stop();
    guard.broke.failure = failure;
    reader.cancel(new UpstreamBreak(failure)).catch(() => {});
    throw new UpstreamBreak(failure);
  };
  const answerLate = (): UpstreamFailure => ({
    reason: "timeout",
    upstream: guard.upstream,
    timeoutMs: guard.deadline!.timeoutMs,
    waited: "answer",
  });
  // The answer deadline is subscribed to once, for the whole body: it settles the promises of
  // the reads waiting then. Raced itself on every read, the deadline's promise (which lives as
  // long as the body) would keep one reaction per read, as many as the upstream makes chunks.
  const lateReads = new Set<(failure: UpstreamFailure) => void>();
  void guard.deadline?.expired.then(() => {
    for (const late of lateReads) late(answerLate());
  });
  /** `read` raced against the deadlines; `length` is the bytes it read (0 at the end). */
  const guarded = async <T>(read: Promise<T>, length: (result: T) => number): Promise<T> => {
    const timers: Promise<UpstreamFailure>[] = [];
    let lateRead: ((failure: UpstreamFailure) => void) | undefined;
    if (guard.deadline?.fired) timers.push(Promise.resolve(answerLate()));
    else if (guard.deadline?.armed) {
      timers.push(
        new Promise((resolve) => {
          lateRead = resolve;
          lateReads.add(resolve);
        }),
      );
    }
    if (guard.idleMs !== undefined) {
      const idleMs = guard.idleMs;
      timers.push(
        new Promise(
          (resolve) =>
            (idleTimer = setTimeout(
              () => resolve({ reason: "timeout", upstream: guard.upstream, timeoutMs: idleMs, waited: "silence" }),
              idleMs,
            )),
        ),
      );
    }
    let result: T | UpstreamFailure;
    try {
      result = await Promise.race([read, ...timers]);
    } catch (error) {
      // The fetch was aborted by the answer deadline: report that, not the abort.
      if (guard.deadline?.fired) return breakOff(answerLate());
      stop();
      throw error;
    } finally {
      if (lateRead !== undefined) lateReads.delete(lateRead);
      if (idleTimer !== undefined) clearTimeout(idleTimer);
    }
    if (isFailure(result)) return breakOff(result);
    const bytes = length(result);
    if (bytes === 0) stop();
    guard.received.bytes += bytes;
    return result;
  };
  return readableOf({
    // With an idle deadline, one read per chunk: it measures silence, and a read that waits
    // for `atLeast` bytes would time the upstream's pace instead (an answer still trickling in).
    readInto: (into, atLeast) =>
      guarded(reader.readInto(into, guard.idleMs === undefined ? atLeast : undefined), (next) =>
        next.done ? 0 : (next.value?.byteLength ?? 0),
      ),
    fill: (into) => guarded(reader.fill(into), (length) => length),
    read: () => guarded(reader.read(), (next) => (next.done ? 0 : next.value.byteLength)),
    cancel(reason) {
      stop();
      return reader.cancel(reason);
    },
    releaseLock: () => reader.releaseLock(),
  });
}
