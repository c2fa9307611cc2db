/**
 * What the isolate serving a modern client and the Durable Object holding a bridged
 * call (relay/bridged-exchange.ts, run by shell/bridged-call.ts `BridgedCall`) say to
 * each other over Workers RPC, and the bounds of a bridged call. Plain data only: it is
 * structured-cloned between isolates.
 */
import type { JsonObject, JsonRpcId } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import type { UpstreamFailure } from "../upstream/failures";
import type { LargeAnswerConsumer } from "../upstream/client";
import type { UpstreamClient } from "../upstream/upstream-session";

/**
 * How long the Durable Object waits for the client's retry after a question is first asked
 * (retries without the answer do not extend it), then cancels the upstream call. Below the 70 s an idle Durable Object is kept in memory
 * (the upstream stream lives only there), and long enough for a person to answer a form.
 */
export const BRIDGE_RETRY_DEADLINE_MS = 60_000;
/**
 * Objects per principal that hold its bridged calls (each call goes to the first that is
 * not full): reusing objects spares each call an object's creation (see
 * `npm run bench:bridge`) and, filled in order, a handshake (an object keeps the upstream
 * sessions its calls ran in); several hold one principal's concurrent calls. With MAX_CALLS_PER_OBJECT,
 * 96 calls at once per principal (without authentication, every caller is one principal).
 */
export const BRIDGE_OBJECTS_PER_PRINCIPAL = 16;
/**
 * What one object may hold in memory, in bytes: below the 128 MB of a Durable Object's
 * isolate, with room for the runtime. A reset drops every call of the object.
 */
export const BRIDGE_OBJECT_MEMORY_BUDGET_BYTES = 100 * 1024 * 1024;
/**
 * Calls one object holds at once; a full object sends the call to the principal's next.
 * Each may hold, while its round runs, a message up to MAX_HELD_MESSAGE_BYTES (16 MiB) and
 * MAX_HELD_NOTIFICATION_CHARS of notifications (2 bytes a character): 6 such calls stay
 * within BRIDGE_OBJECT_MEMORY_BUDGET_BYTES.
 */
export const MAX_CALLS_PER_OBJECT = 6;
/** Questions one bridged call may ask before the gateway cancels it (a loop of questions is a bug upstream). */
export const MAX_BRIDGE_ROUNDS = 16;
/** Notifications (progress, logs) held per round for the client, in UTF-16 code units of their text; later ones are dropped. */
export const MAX_HELD_NOTIFICATION_CHARS = 256 * 1024;

/** The server-to-client requests of a 2025 upstream that become input requests. */
export const BRIDGED_METHODS: ReadonlyMap<string, string> = new Map([
  ["sampling/createMessage", "sampling"],
  ["elicitation/create", "elicitation"],
  ["roots/list", "roots"],
]);

/** Who the call is for: the principal (checked on every retry) and what identity assertions say. */
export type BridgeCaller = { readonly principal: string; readonly email?: string; readonly roles: readonly string[]; readonly persona?: string };

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
  readonly large?: LargeAnswerConsumer;
};

/** A retry's input for the call's pending question. */
export type BridgeAnswer = { readonly call: string; readonly principal: string; readonly round: number; readonly responses: unknown; readonly large?: LargeAnswerConsumer };

/** One entry of `inputRequests`. */
export type InputRequest = { readonly method: string; readonly params?: JsonObject };

/** Why a bridged call cannot take a retry. */
export type BridgeGone = "unknown" | "other-principal" | "stale-round" | "busy" | "too-many-rounds" | "full";

export type BridgeOutcome =
  /** The upstream answered: its response text (id of the first request) and what it said on the way. */
  | { readonly kind: "complete"; readonly text: string; readonly notifications: readonly string[]; readonly status: number; readonly bytesFromUpstream: number }
  /** The upstream asked the client something: the question under `key`, for round `round`. */
  | { readonly kind: "input"; readonly round: number; readonly key: string; readonly request: InputRequest; readonly notifications: readonly string[] }
  | { readonly kind: "failed"; readonly failure: UpstreamFailure }
  | { readonly kind: "gone"; readonly reason: BridgeGone };

/** The RPC surface of `BridgedCall`. */
export interface BridgedCallRpc {
  start(input: BridgeStart): Promise<BridgeOutcome>;
  answer(input: BridgeAnswer): Promise<BridgeOutcome>;
  /** The client went away mid-round: the upstream call is cancelled. */
  cancel(input: { readonly call: string; readonly principal: string }): Promise<void>;
}
