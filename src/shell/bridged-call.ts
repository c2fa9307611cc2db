/**
 * `BridgedCall`, the Durable Object (binding BRIDGED_CALLS) that holds 2025 upstream
 * calls while 2026-07-28 clients answer the upstreams' questions with retries that may
 * reach any isolate. A thin shell: the calls it holds, their deadlines and sessions are
 * eras/bridged-calls.ts (eras/call-bridge.ts explains the bridge); here are only the
 * Durable Object's class, its bindings and its alarm. A principal's calls go to
 * BRIDGE_OBJECTS_PER_PRINCIPAL objects named after it.
 */
import { DurableObject } from "cloudflare:workers";
import type { BridgeAnswer, BridgedCallRpc, BridgeOutcome, BridgeStart } from "../context/object-rpc";
import { BridgedCalls } from "../eras/bridged-calls";
import { servicesFor } from "./services";

/**
 * The Durable Object class the Worker exports for BRIDGED_CALLS.
 *
 * @example
 * const outcome = await env.BRIDGED_CALLS.get(env.BRIDGED_CALLS.idFromName(`${principal}\n0`)).start(input);
 */
export class BridgedCall extends DurableObject<Record<string, unknown>> implements BridgedCallRpc {
  readonly #calls = new BridgedCalls({
    reach: () => ({ env: this.env, kv: servicesFor(this.env).kv }),
    setAlarm: (at) => (at === undefined ? this.ctx.storage.deleteAlarm() : this.ctx.storage.setAlarm(at)),
  });

  /** Starts a call; refused when this object holds as many as it may. */
  start(input: BridgeStart): Promise<BridgeOutcome> {
    return this.#calls.start(input);
  }

  /** Takes a retry's input for a call's pending question. */
  answer(input: BridgeAnswer): Promise<BridgeOutcome> {
    return this.#calls.answer(input);
  }

  /** The client went away while a round ran: the upstream call is cancelled. */
  cancel(input: { readonly call: string; readonly principal: string }): Promise<void> {
    return this.#calls.cancel(input);
  }

  /** Runs when the earliest deadline passes. */
  override async alarm(): Promise<void> {
    await this.expire();
  }

  /** Cancels the calls whose question has waited past its deadline at `now`, then sets the alarm for the next (eras/bridged-calls.ts). */
  expire(now = Date.now()): Promise<void> {
    return this.#calls.expire(now);
  }
}
