/**
 * The bounds of resuming an upstream stream that ended before its answer (Streamable HTTP
 * resumability: GET with Last-Event-ID), shared by the direct exchange (relay/forward.ts) and a
 * bridged call's (eras/bridged-exchange.ts), so that an upstream that polls (closes its stream
 * after each event) is followed the same way on both paths.
 */

/** How often in a row a cut stream may be resumed with nothing new on it. */
export const MAX_RESUMPTIONS = 10;
/** The longest wait before a resumption, whatever the upstream's `retry` asked for. */
export const MAX_RESUME_DELAY_MS = 5_000;
/** The wait before a resumption when the upstream's stream gave no `retry`. */
export const DEFAULT_RESUME_DELAY_MS = 100;

/**
 * Waits as long as the upstream asked (`retry`, bounded) before resuming its stream.
 *
 * @example
 * await resumeDelay(reply.value.resume.retryMs);
 */
export function resumeDelay(retryMs: number | undefined): Promise<void> {
  return new Promise((resolve) =>
    setTimeout(resolve, Math.min(retryMs ?? DEFAULT_RESUME_DELAY_MS, MAX_RESUME_DELAY_MS)),
  );
}
