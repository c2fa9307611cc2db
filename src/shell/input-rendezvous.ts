/**
 * The Durable Object where a 2025 client's answers meet the call that asked for them.
 * When a 2026-07-28 upstream answers a 2025 client's call with `input_required`, the
 * gateway sends the client server requests on the call's stream and waits here; the
 * client's answers arrive as separate POSTs, on any isolate, and are stored here. One
 * object per round (named by a random round id): `wait` returns once every key of the
 * round is answered (or at its deadline), `answer` stores one answer and wakes the
 * waiter. Answers live in the object's storage, so an answer that comes before the
 * waiter, or to another instance of the Worker, is not lost; an alarm clears the round.
 * The logic of the bridge is in eras/input-bridge.ts; this is only the meeting point.
 */
import { DurableObject } from "cloudflare:workers";
import type { InputRendezvousRpc } from "../context/object-rpc";

/** The longest a waiter is held in one call, whatever it asks (a round's own deadline is shorter). */
export const MAX_RENDEZVOUS_WAIT_MS = 15 * 60_000;
/** How long a round's answers are kept after the last one came. */
export const RENDEZVOUS_RETENTION_MS = 20 * 60_000;
const ANSWER_PREFIX = "answer/";

/** Where the key of a round's first error answer is kept. */
const FAILED_KEY = "failed";

/** Whether a client's answer is a JSON-RPC error (a refusal, or the gateway's note of an answer it could not carry). */
function isErrorAnswer(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && "error" in parsed;
  } catch {
    return true;
  }
}

export class InputRendezvous extends DurableObject implements InputRendezvousRpc {
  private readonly wakers = new Set<() => void>();

  /** Stores the client's answer (a JSON-RPC response text) to the round's request `key`. */
  async answer(key: string, text: string): Promise<void> {
    await this.ctx.storage.put(ANSWER_PREFIX + key, text);
    // An error answer ends the round: the waiting call fails on it, whatever else is still unanswered.
    if (isErrorAnswer(text)) await this.ctx.storage.put(FAILED_KEY, key);
    await this.ctx.storage.setAlarm(Date.now() + RENDEZVOUS_RETENTION_MS);
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  /**
   * The answers to `keys` once all are in, or as soon as one of them is an error (then
   * only those in so far), by key; undefined when `timeoutMs` passed first.
   */
  async wait(keys: readonly string[], timeoutMs: number): Promise<Record<string, string> | undefined> {
    const deadline = Date.now() + Math.min(timeoutMs, MAX_RENDEZVOUS_WAIT_MS);
    for (;;) {
      const stored = await this.ctx.storage.get<string>([...keys.map((key) => ANSWER_PREFIX + key), FAILED_KEY]);
      const present = keys.filter((key) => stored.has(ANSWER_PREFIX + key));
      if (present.length === keys.length || stored.has(FAILED_KEY))
        return Object.fromEntries(present.map((key) => [key, stored.get(ANSWER_PREFIX + key)!]));
      const remaining = deadline - Date.now();
      if (remaining <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.wakers.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The round is over: its answers go. */
  async finish(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
