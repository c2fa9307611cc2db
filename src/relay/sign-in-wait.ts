/**
 * Where a call waiting for its user's sign-in meets the sign-in's callback: a round of
 * the `INPUT_RENDEZVOUS` Durable Object (shell/input-rendezvous.ts) named after the sign-in
 * link's nonce (its elicitation id). The callback, on whatever isolate it lands, leaves
 * "signed in" there; the waiting call wakes and runs again. Nothing polls.
 */

const ROUND_PREFIX = "upstream-sign-in:";
const SIGNED_IN_KEY = "signed-in";
const SIGNED_IN = '{"jsonrpc":"2.0","id":0,"result":{}}';

type Meeting = {
  answer(key: string, text: string): Promise<void>;
  wait(keys: readonly string[], timeoutMs: number): Promise<Record<string, string> | undefined>;
  finish(): Promise<void>;
};

function meeting(namespace: DurableObjectNamespace, nonce: string): Meeting {
  return namespace.get(namespace.idFromName(ROUND_PREFIX + nonce)) as unknown as Meeting;
}

/** Tells a call waiting on the sign-in of link `nonce` that it completed. */
export async function signalSignIn(namespace: DurableObjectNamespace, nonce: string): Promise<void> {
  await meeting(namespace, nonce).answer(SIGNED_IN_KEY, SIGNED_IN);
}

/**
 * Waits until the sign-in of link `nonce` completes (true), `timeoutMs` passes or `signal`
 * aborts (false: the client went away).
 */
export async function awaitSignIn(namespace: DurableObjectNamespace, nonce: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const round = meeting(namespace, nonce);
  const aborted = new Promise<undefined>((resolve) => signal.addEventListener("abort", () => resolve(undefined), { once: true }));
  try {
    const answers = await Promise.race([round.wait([SIGNED_IN_KEY], timeoutMs), aborted]);
    return answers?.[SIGNED_IN_KEY] !== undefined;
  } finally {
    await round.finish().catch(() => {});
  }
}
