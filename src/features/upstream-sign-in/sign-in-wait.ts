/**
 * Where a call waiting for its user's sign-in meets the sign-in's callback: a round of
 * the `INPUT_RENDEZVOUS` Durable Object (shell/input-rendezvous.ts) named after the sign-in
 * link's nonce (its elicitation id). The callback, on whatever isolate it lands, leaves
 * "signed in" there; the waiting call wakes and runs again. Nothing polls.
 */

import type { InputRendezvousRpc, ObjectNamespace } from "../../context/object-rpc";

const ROUND_PREFIX = "upstream-sign-in:";
const SIGNED_IN_KEY = "signed-in";
const SIGNED_IN = '{"jsonrpc":"2.0","id":0,"result":{}}';

function meeting(namespace: ObjectNamespace<InputRendezvousRpc>, nonce: string): InputRendezvousRpc {
  return namespace.get(namespace.idFromName(ROUND_PREFIX + nonce));
}

/** Tells a call waiting on the sign-in of link `nonce` that it completed. */
export async function signalSignIn(namespace: ObjectNamespace<InputRendezvousRpc>, nonce: string): Promise<void> {
  await meeting(namespace, nonce).answer(SIGNED_IN_KEY, SIGNED_IN);
}

/**
 * Waits until the sign-in of link `nonce` completes (true), `timeoutMs` passes or `signal`
 * aborts (false: the client went away).
 */
export async function awaitSignIn(
  namespace: ObjectNamespace<InputRendezvousRpc>,
  nonce: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const round = meeting(namespace, nonce);
  const aborted = new Promise<undefined>((resolve) =>
    signal.addEventListener("abort", () => resolve(undefined), { once: true }),
  );
  try {
    const answers = await Promise.race([round.wait([SIGNED_IN_KEY], timeoutMs), aborted]);
    return answers?.[SIGNED_IN_KEY] !== undefined;
  } finally {
    await round.finish().catch(() => {});
  }
}
