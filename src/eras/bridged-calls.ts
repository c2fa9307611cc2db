/**
 * The calls one `BridgedCall` Durable Object holds (shell/bridged-call.ts is the object's
 * thin shell): 2025 upstream calls waiting while 2026-07-28 clients answer the upstreams'
 * questions with retries that may reach any isolate (call-bridge.ts explains the bridge;
 * bridged-exchange.ts runs one call). At most MAX_CALLS_PER_OBJECT at once, each in an
 * upstream session of its own (bridge-sessions.ts, reused by the object's next call).
 * Nothing is stored: the upstream streams live in memory, and the object's alarm cancels
 * every call whose question waited past BRIDGE_RETRY_DEADLINE_MS for the client's retry
 * (counted from when it was first asked: retries without the answer do not extend it, so a
 * call lives at most MAX_BRIDGE_ROUNDS × BRIDGE_RETRY_DEADLINE_MS plus the upstream's own time).
 */
import type { BridgeAnswer, BridgedCallRpc, BridgeOutcome, BridgeStart } from "../context/object-rpc";
import type { PoolRequest } from "../upstream/pool";
import { BRIDGE_RETRY_DEADLINE_MS, MAX_CALLS_PER_OBJECT } from "./bridge-protocol";
import { BridgedExchange } from "./bridged-exchange";
import { BridgeSessions } from "./bridge-sessions";

/** A call, the round of its pending question, and when that question's wait ends. */
type Held = { readonly exchange: BridgedExchange; round: number; deadline: number };

/** What the calls need of their object: how to reach upstreams, and its alarm. */
export type BridgedCallsHost = {
  /** The environment and KV a call's upstream exchanges use, read when a call starts. */
  readonly reach: () => Pick<PoolRequest, "env" | "kv">;
  /** Sets the object's alarm for `at` (milliseconds since the epoch), or clears it (undefined). */
  readonly setAlarm: (at: number | undefined) => Promise<void>;
};

/**
 * The held calls of one object, and the upstream sessions they run in.
 *
 * @example
 * const calls = new BridgedCalls({ reach: () => ({ env, kv }), setAlarm: (at) => (at === undefined ? storage.deleteAlarm() : storage.setAlarm(at)) });
 * const outcome = await calls.start(input);
 */
export class BridgedCalls implements BridgedCallRpc {
  readonly #calls = new Map<string, Held>();
  /** The upstream sessions its calls run in, one call at a time each (bridge-sessions.ts). */
  readonly #sessions = new BridgeSessions();

  constructor(private readonly host: BridgedCallsHost) {}

  /** Starts a call; refused when this object holds as many as it may. */
  async start(input: BridgeStart): Promise<BridgeOutcome> {
    if (this.#calls.has(input.call)) return { kind: "gone", reason: "busy" };
    if (this.#calls.size >= MAX_CALLS_PER_OBJECT) return { kind: "gone", reason: "full" };
    const held: Held = {
      exchange: new BridgedExchange(this.host.reach(), input, this.#sessions),
      round: 0,
      deadline: Infinity,
    };
    this.#calls.set(input.call, held);
    return this.#round(input.call, held, () => held.exchange.begin());
  }

  /** Takes a retry's input for a call's pending question. */
  async answer(input: BridgeAnswer): Promise<BridgeOutcome> {
    const held = this.#calls.get(input.call);
    if (!held || held.exchange.done) return { kind: "gone", reason: "unknown" };
    return this.#round(input.call, held, () => held.exchange.answer(input));
  }

  /** The client went away while a round ran: the upstream call is cancelled. */
  async cancel(input: { readonly call: string; readonly principal: string }): Promise<void> {
    const held = this.#calls.get(input.call);
    if (!held?.exchange.caller(input.principal)) return;
    this.#calls.delete(input.call);
    await held.exchange.cancel("the client closed its request");
  }

  /**
   * Cancels the calls whose question has waited past its deadline at `now` (a call whose
   * round is running is never cancelled here), then sets the alarm for the next deadline.
   */
  async expire(now = Date.now()): Promise<void> {
    const expired = [...this.#calls].filter(([, held]) => held.exchange.waiting && held.deadline <= now);
    for (const [call] of expired) this.#calls.delete(call);
    await Promise.all(
      expired.map(([, held]) =>
        held.exchange.cancel(`the client did not answer within ${BRIDGE_RETRY_DEADLINE_MS / 1000} s`).catch(() => {}),
      ),
    );
    await this.#schedule();
  }

  async #schedule(): Promise<void> {
    const next = Math.min(
      ...[...this.#calls.values()].filter((held) => held.exchange.waiting).map((held) => held.deadline),
    );
    await this.host.setAlarm(Number.isFinite(next) ? next : undefined);
  }

  /**
   * Runs a round of `call`. A round that throws (rather than reporting a failure) leaves the
   * call neither waiting nor done, where no alarm would ever free its slot: it is cancelled
   * and forgotten, and the error goes to the isolate.
   */
  async #round(call: string, held: Held, run: () => Promise<BridgeOutcome>): Promise<BridgeOutcome> {
    let outcome: BridgeOutcome;
    try {
      outcome = await run();
    } catch (error) {
      this.#calls.delete(call);
      await held.exchange.cancel("the gateway failed while running the call").catch(() => {});
      throw error;
    }
    return this.#settle(call, held, outcome);
  }

  /**
   * After a question the call waits for its retry until the deadline, set when the question
   * is first asked: a retry without the answer (asked again) does not extend it. Once over,
   * the call is forgotten.
   */
  async #settle(call: string, held: Held, outcome: BridgeOutcome): Promise<BridgeOutcome> {
    if (held.exchange.done) this.#calls.delete(call);
    else if (outcome.kind === "input" && outcome.round !== held.round) {
      held.round = outcome.round;
      held.deadline = Date.now() + BRIDGE_RETRY_DEADLINE_MS;
      await this.#schedule();
    }
    return outcome;
  }
}
