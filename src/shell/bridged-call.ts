/**
 * `BridgedCall`, the Durable Object (binding BRIDGED_CALLS) that holds 2025 upstream
 * calls while 2026-07-28 clients answer the upstreams' questions with retries that may
 * reach any isolate (relay/bridge.ts explains the bridge; relay/bridged-exchange.ts runs
 * one call). A principal's calls go to BRIDGE_OBJECTS_PER_PRINCIPAL objects named after
 * it, at most MAX_CALLS_PER_OBJECT each, each call in an upstream session of its own
 * (reused by the object's next call). Nothing is stored: the upstream streams live in
 * memory, and an alarm cancels every call whose question waited past
 * BRIDGE_RETRY_DEADLINE_MS for the client's retry (counted from when it was first asked:
 * retries without the answer do not extend it, so a call lives at most
 * MAX_BRIDGE_ROUNDS × BRIDGE_RETRY_DEADLINE_MS plus the upstream's own time).
 */
import { DurableObject } from "cloudflare:workers";
import { BRIDGE_RETRY_DEADLINE_MS, MAX_CALLS_PER_OBJECT } from "../relay/bridge-protocol";
import type { BridgeAnswer, BridgedCallRpc, BridgeOutcome, BridgeStart } from "../context/object-rpc";
import { BridgedExchange } from "../relay/bridged-exchange";
import { BridgeSessions } from "../relay/bridge-sessions";
import { servicesFor } from "./services";

/** A call, the round of its pending question, and when that question's wait ends. */
type Held = { readonly exchange: BridgedExchange; round: number; deadline: number };

/**
 * The Durable Object class the Worker exports for BRIDGED_CALLS.
 *
 * @example
 * const outcome = await env.BRIDGED_CALLS.get(env.BRIDGED_CALLS.idFromName(`${principal}\n0`)).start(input);
 */
export class BridgedCall extends DurableObject<Record<string, unknown>> implements BridgedCallRpc {
  readonly #calls = new Map<string, Held>();
  /** The upstream sessions its calls run in, one call at a time each (relay/bridge-sessions.ts). */
  readonly #sessions = new BridgeSessions();

  /** Starts a call; refused when this object holds as many as it may. */
  async start(input: BridgeStart): Promise<BridgeOutcome> {
    if (this.#calls.has(input.call)) return { kind: "gone", reason: "busy" };
    if (this.#calls.size >= MAX_CALLS_PER_OBJECT) return { kind: "gone", reason: "full" };
    const held: Held = { exchange: new BridgedExchange({ env: this.env, kv: servicesFor(this.env).kv }, input, this.#sessions), round: 0, deadline: Infinity };
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
    if (!held || !held.exchange.caller(input.principal)) return;
    this.#calls.delete(input.call);
    await held.exchange.cancel("the client closed its request");
  }

  /** Runs when the earliest deadline passes. */
  override async alarm(): Promise<void> {
    await this.expire();
  }

  /**
   * Cancels the calls whose question has waited past its deadline at `now` (a call whose
   * round is running is never cancelled here), then sets the alarm for the next deadline.
   */
  async expire(now = Date.now()): Promise<void> {
    const expired = [...this.#calls].filter(([, held]) => held.exchange.waiting && held.deadline <= now);
    for (const [call] of expired) this.#calls.delete(call);
    await Promise.all(expired.map(([, held]) => held.exchange.cancel(`the client did not answer within ${BRIDGE_RETRY_DEADLINE_MS / 1000} s`).catch(() => {})));
    await this.#schedule();
  }

  async #schedule(): Promise<void> {
    const next = Math.min(...[...this.#calls.values()].filter((held) => held.exchange.waiting).map((held) => held.deadline));
    if (Number.isFinite(next)) await this.ctx.storage.setAlarm(next);
    else await this.ctx.storage.deleteAlarm();
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
