/**
 * `BridgedCall`, the Durable Object (binding BRIDGED_CALLS) that holds one 2025 upstream
 * call while a 2026-07-28 client answers the upstream's questions with retries that may
 * reach any isolate (relay/bridge.ts explains the bridge; relay/bridged-exchange.ts runs
 * the call). One object per call, from `newUniqueId`: nothing is stored, the upstream
 * stream lives in memory, and an alarm cancels the call when the client's retry does not
 * come within BRIDGE_RETRY_DEADLINE_MS.
 */
import { DurableObject } from "cloudflare:workers";
import { BRIDGE_RETRY_DEADLINE_MS, type BridgeAnswer, type BridgedCallRpc, type BridgeOutcome, type BridgeStart } from "../relay/bridge-protocol";
import { BridgedExchange } from "../relay/bridged-exchange";

/**
 * The Durable Object class the Worker exports for BRIDGED_CALLS.
 *
 * @example
 * const outcome = await (env.BRIDGED_CALLS.get(env.BRIDGED_CALLS.newUniqueId()) as BridgedCallRpc).start(input);
 */
export class BridgedCall extends DurableObject<Record<string, unknown>> implements BridgedCallRpc {
  #exchange: BridgedExchange | undefined;

  /** Starts the call (once per object). */
  async start(input: BridgeStart): Promise<BridgeOutcome> {
    if (this.#exchange) return { kind: "gone", reason: "busy" };
    this.#exchange = new BridgedExchange(this.env, input);
    return this.#settle(await this.#exchange.begin());
  }

  /** Takes a retry's input for the pending question. */
  async answer(input: BridgeAnswer): Promise<BridgeOutcome> {
    const exchange = this.#exchange;
    if (!exchange || exchange.done) return { kind: "gone", reason: "unknown" };
    await this.ctx.storage.deleteAlarm();
    return this.#settle(await exchange.answer(input));
  }

  /** The client went away while a round ran: the upstream call is cancelled. */
  async cancel(input: { readonly principal: string }): Promise<void> {
    const exchange = this.#exchange;
    if (!exchange || !exchange.caller(input.principal)) return;
    this.#exchange = undefined;
    await exchange.cancel("the client closed its request");
  }

  /** The retry did not come in time: the upstream call is cancelled. */
  override async alarm(): Promise<void> {
    const exchange = this.#exchange;
    this.#exchange = undefined;
    await exchange?.cancel(`the client did not answer within ${BRIDGE_RETRY_DEADLINE_MS / 1000} s`);
  }

  /** After a question, the call waits for the retry until the deadline; after anything else it is over. */
  async #settle(outcome: BridgeOutcome): Promise<BridgeOutcome> {
    if (outcome.kind === "input") await this.ctx.storage.setAlarm(Date.now() + BRIDGE_RETRY_DEADLINE_MS);
    else if (this.#exchange?.done) this.#exchange = undefined;
    return outcome;
  }
}
