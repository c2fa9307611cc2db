/**
 * The Durable Object holding one call that waits for a person's approval (binding
 * APPROVALS, exported from src/index.ts), named by the call's digest (digest.ts). A thin
 * class: what it does is held-calls.ts, loaded on demand, so the main module carries only this.
 */
import { DurableObject } from "cloudflare:workers";
import type {
  ApprovalAsk,
  ApprovalDecision,
  CallApprovalRpc,
  DecisionOutcome,
  HeldCall,
} from "../../context/object-rpc";
import type { HeldCallObject } from "./held-calls";
import { loadApprovals } from "./load";

export class CallApproval extends DurableObject implements CallApprovalRpc {
  private readonly held: HeldCallObject = { storage: this.ctx.storage, wakers: new Set() };

  async ask(call: Parameters<CallApprovalRpc["ask"]>[0]): Promise<ApprovalAsk> {
    return (await loadApprovals()).askCall(this.held, call);
  }

  async decide(decision: ApprovalDecision): Promise<DecisionOutcome> {
    return (await loadApprovals()).decideCall(this.held, decision);
  }

  async read(): Promise<HeldCall | undefined> {
    return (await loadApprovals()).readCall(this.held);
  }

  async wait(timeoutMs: number): Promise<HeldCall | undefined> {
    return (await loadApprovals()).waitForDecision(this.held, timeoutMs);
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
