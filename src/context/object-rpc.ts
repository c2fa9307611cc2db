/**
 * The RPC surfaces of the Durable Objects a call may use, typed where the call's services
 * are (`Services.bridgedCalls`, `Services.inputRendezvous`): the relay calls them, the
 * shell's classes (shell/bridged-call.ts, shell/input-rendezvous.ts) implement them, and
 * a namespace of those classes is assignable to `ObjectNamespace` of these interfaces
 * without a cast. Plain data only: it is structured-cloned between isolates.
 */
import type { JsonObject, JsonRpcId } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import type { UpstreamFailure } from "../upstream/failures";
import type { LargeAnswerTaker } from "../upstream/client";
import type { UpstreamClient } from "../upstream/upstream-session";

/** A Durable Object namespace as a call uses it: objects by name, each speaking `Stub`. */
export type ObjectNamespace<Stub> = {
  idFromName(name: string): DurableObjectId;
  idFromString(id: string): DurableObjectId;
  get(id: DurableObjectId): Stub;
};

/** Who the call is for: the principal (checked on every retry) and what identity assertions say. */
export type BridgeCaller = {
  readonly principal: string;
  readonly email?: string;
  readonly roles: readonly string[];
  readonly persona?: string;
};

/** Starts a bridged call: the upstream request the isolate would have sent itself. */
export type BridgeStart = {
  /** The call's id within its object (random, chosen by the isolate). */
  readonly call: string;
  readonly upstream: UpstreamConfig;
  readonly client: UpstreamClient;
  readonly caller: BridgeCaller;
  /** The request text as the upstream gets it (names already routed), and its id. */
  readonly text: string;
  readonly id: JsonRpcId;
  readonly traceparent?: string;
  /**
   * The isolate's consumer of answers too large to hold (offload), called back over RPC
   * with the body as a stream while the round runs; without one, such an answer fails the call.
   */
  readonly large?: LargeAnswerTaker;
};

/** A retry's input for the call's pending question, and the retry's own progress token (its `_meta.progressToken`). */
export type BridgeAnswer = {
  readonly call: string;
  readonly principal: string;
  readonly round: number;
  readonly responses: unknown;
  readonly progressToken?: JsonRpcId;
  readonly large?: LargeAnswerTaker;
};

/** One entry of `inputRequests`. */
export type InputRequest = { readonly method: string; readonly params?: JsonObject };

/** Why a bridged call cannot take a retry. */
export type BridgeGone = "unknown" | "other-principal" | "stale-round" | "busy" | "too-many-rounds" | "full";

export type BridgeOutcome =
  /** The upstream answered: its response text (id of the first request) and what it said on the way. */
  | {
      readonly kind: "complete";
      readonly text: string;
      readonly notifications: readonly string[];
      readonly status: number;
      readonly bytesFromUpstream: number;
    }
  /** The upstream asked the client something: the question under `key`, for round `round`. */
  | {
      readonly kind: "input";
      readonly round: number;
      readonly key: string;
      readonly request: InputRequest;
      readonly notifications: readonly string[];
    }
  | { readonly kind: "failed"; readonly failure: UpstreamFailure }
  | { readonly kind: "gone"; readonly reason: BridgeGone };

/** The RPC surface of `BridgedCall`. */
export interface BridgedCallRpc {
  start(input: BridgeStart): Promise<BridgeOutcome>;
  answer(input: BridgeAnswer): Promise<BridgeOutcome>;
  /** The client went away mid-round: the upstream call is cancelled. */
  cancel(input: { readonly call: string; readonly principal: string }): Promise<void>;
}

/** The RPC surface of `InputRendezvous`: where a 2025 client's answers meet a 2026-07-28 upstream's call. */
export interface InputRendezvousRpc {
  /** Stores the client's answer (a JSON-RPC response text) to the round's request `key`. */
  answer(key: string, text: string): Promise<void>;
  /** The answers to `keys` once all are in (or one is an error), by key; undefined when `timeoutMs` passed first. */
  wait(keys: readonly string[], timeoutMs: number): Promise<Record<string, string> | undefined>;
  /** Clears the round. */
  finish(): Promise<void>;
}

/** A call held for a person's approval, as its object keeps it (features/approvals/). */
export type HeldCall = {
  /** The digest of (caller, upstream, tool, canonical arguments): the object's name, and the approval's id. */
  readonly id: string;
  readonly caller: string;
  readonly upstream: string;
  readonly tool: string;
  /** The guardrail that asked, the roles that may approve, how long an approval holds. */
  readonly rule: string;
  readonly roles: readonly string[];
  readonly holdSeconds: number;
  /** The arguments as approvers see them: guardrails' findings and secrets' values replaced. */
  readonly arguments: unknown;
  readonly requestedAt: number;
  readonly state: "pending" | "approved" | "denied";
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  /** Until when an approval lets the call run (epoch ms); it runs at most once. */
  readonly approvedUntil?: number;
};

/** What a call learns from its object: wait (new or not), run (the approval is used up), or why not. */
export type ApprovalAsk = {
  readonly kind: "pending" | "created" | "run" | "denied" | "expired";
  readonly call: HeldCall;
};

/** A decision; `operator` when made with the admin token (any role, never the caller). */
export type ApprovalDecision = {
  readonly approver: string;
  readonly roles: readonly string[];
  readonly operator: boolean;
  readonly approve: boolean;
};

export type DecisionOutcome =
  | { readonly kind: "decided"; readonly call: HeldCall }
  | { readonly kind: "unknown" }
  | { readonly kind: "own-call" | "not-an-approver" | "already-decided"; readonly call: HeldCall };

/** The RPC surface of `CallApproval`, one object per held call. */
export interface CallApprovalRpc {
  ask(call: Omit<HeldCall, "state" | "decidedBy" | "decidedAt" | "approvedUntil">): Promise<ApprovalAsk>;
  decide(decision: ApprovalDecision): Promise<DecisionOutcome>;
  read(): Promise<HeldCall | undefined>;
  /** The call once decided (or gone), or as it stands when `timeoutMs` passed. */
  wait(timeoutMs: number): Promise<HeldCall | undefined>;
}
