/**
 * What the relay needs of tasks, stated here in the skeleton and supplied by the tasks
 * feature (features/tasks/tasks.ts `relayTasks`), which src/chain.ts hands to
 * `createRelay`: the relay never imports the feature. Task ids a client sees are the
 * gateway's, bound to the caller; the feature maps them to and from the upstreams' own.
 */
import type { JsonRpcId, JsonRpcRequest, WireMessage } from "../core/jsonrpc";
import type { CallContext } from "../context/call-context";
import type { Answer } from "../context/answer";
import type { UpstreamConfig } from "../config/upstreams";

/** Sends a request's text to one upstream and gives its answer (relay/forward.ts `forward`, already plugged). */
export type SendToUpstream = (
  ctx: CallContext,
  upstream: UpstreamConfig,
  text: string,
  id: JsonRpcId,
) => Promise<Answer>;

/** The caller's own tasks (their tags), read at most once however often it is called. */
export type OwnedTasks = () => Promise<ReadonlySet<string>>;

export type RelayTasks = {
  /** The methods that name one task by `params.taskId`. */
  readonly methods: ReadonlySet<string>;
  /** Answers a task method at the upstream its id names, through `send`. */
  route(ctx: CallContext, request: WireMessage<JsonRpcRequest>, send: SendToUpstream): Promise<Answer>;
  /** A task-augmented request's answer from `upstream`: the task recorded as the caller's, its id the caller's. */
  created(ctx: CallContext, upstream: string, created: Answer, method: string): Promise<Answer>;
  /** The caller's own tasks, for one list request. */
  ownedBy(ctx: CallContext): OwnedTasks;
  /** One upstream's `tasks/list` answer with only the caller's own tasks, their ids the caller's. */
  ownList(ctx: CallContext, upstream: string, answer: string, owned: OwnedTasks): Promise<string>;
  /** A message from `upstream` with its task ids in the caller's form. */
  toClient(ctx: Pick<CallContext, "services" | "identity">, text: string, upstream: string): Promise<string>;
  /** A client's message bound for `upstream` with its related-task ids in the upstream's form. */
  toUpstream(ctx: Pick<CallContext, "services" | "identity">, text: string, upstream: string): Promise<string>;
};
