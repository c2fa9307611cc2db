/**
 * The bridge between a 2025 upstream's questions and a 2026-07-28 client, isolate side.
 * A 2025 upstream asks the client mid-call (sampling, elicitation, roots) on the call's
 * stream and waits; a 2026 client can only be asked by an `input_required` answer, and
 * retries later with a new request that may reach any isolate. So a call that may ask
 * (the client declared one of those capabilities, the gateway declared it upstream) runs
 * in a Durable Object (`BRIDGED_CALLS`, class `BridgedCall`), which holds the
 * upstream stream between the client's requests (bridged-exchange.ts, held by
 * bridged-calls.ts). Here, in place of relay/forward.ts's direct exchange, the isolate starts that object or hands it a
 * retry's `inputResponses`, and turns what it reports into the client's answer: the
 * final response (which then goes through the pipeline's output side like any answer)
 * or an input_required result whose `requestState` names the object and the round, and
 * is sealed by multi-round-trip.ts like any upstream's state.
 *
 * The choice and its limits: a Durable Object is the only place a fetch stream can
 * outlive the request that opened it and be reached from any isolate; the upstream's own
 * resumption (Last-Event-ID) does not help, since the call itself waits for the answer.
 * A principal's calls are held by a few objects of its own (reused: creating an object
 * per call cost more than the call), filled in order, and each call runs in an upstream
 * session of its object's (bridge-sessions.ts: questions a server sends on the session's
 * GET stream rather than the call's are the call's); see bridge-protocol.ts for the retry deadline (60 s),
 * the number of questions (16), the calls per object and the notifications held, and
 * bridged-exchange.ts for what a restart loses. Without the binding, nothing is bridged:
 * the upstream is not told the capabilities (front/modern/upstream-client.ts) and calls
 * go direct.
 */
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR, INVALID_PARAMS, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { pathSpan, withMessageId } from "../core/raw-json";
import { readUpstreamMessage } from "../core/validate-message";
import { traceparentOf } from "../core/traceparent";
import { Answer } from "../context/answer";
import { largeAnswerOf, type CallContext } from "../context/call-context";
import type { UpstreamConfig } from "../config/upstreams";
import { failureError } from "../upstream/failures";
import type { UpstreamTarget } from "../upstream/upstream-target";
import { redactSecretsInJson } from "../config/secrets";
import {
  BRIDGE_OBJECTS_PER_PRINCIPAL,
  BRIDGED_METHODS,
  MAX_BRIDGE_ROUNDS,
  MAX_CALLS_PER_OBJECT,
} from "./bridge-protocol";
import type { BridgedCallRpc, BridgeGone, BridgeOutcome, BridgeStart } from "../context/object-rpc";
import { MULTI_ROUND_TRIP_METHODS } from "./request-state";
import { progressTokenOf } from "./round-progress";

/** A bridged call's handle, the state sealed into the client's `requestState`. */
type Handle = { readonly object: string; readonly call: string; readonly round: number };

/** Turns an upstream message held by the object into what the client sees (ids of tasks on /mcp). */
export type ToClient = (wire: WireMessage) => Promise<string>;

/**
 * True when a request runs in a bridged call: a modern client's tools/call, prompts/get or
 * resources/read (not task-augmented), with a capability the upstream may ask for declared
 * upstream, the BRIDGED_CALLS binding present, and a target side that asks by requests on
 * the call's stream and may keep sessions. A 2026-07-28 side asks with input_required itself;
 * a stateless 2025 side (`sessionful` false) has no session to hold, and answers in the
 * client's shared session, where its questions on the call's own stream reach the client.
 *
 * @example
 * if (bridgeable(ctx, target, request.method, text)) return bridgedForward(ctx, target.upstream, text, id, toClientOf);
 */
export function bridgeable(
  ctx: CallContext,
  target: Pick<UpstreamTarget, "transport" | "sessionful">,
  method: unknown,
  text: string,
): boolean {
  if (ctx.services.bridgedCalls === undefined || typeof method !== "string" || !MULTI_ROUND_TRIP_METHODS.has(method))
    return false;
  if (target.transport.asks !== "server-requests" || target.sessionful === false) return false;
  if (ctx.identity.era !== "modern" || pathSpan(text, ["params", "task"]) !== undefined) return false;
  const declared = ctx.upstreamClient.clientCapabilities;
  return [...BRIDGED_METHODS.values()].some((capability) => declared[capability] !== undefined);
}

function rpc(ctx: CallContext, object: DurableObjectId): BridgedCallRpc {
  return ctx.services.bridgedCalls!.get(object);
}

/** Runs one round of call `id` in the object; a client that goes away meanwhile cancels the upstream call. */
async function round(
  ctx: CallContext,
  call: BridgedCallRpc,
  id: string,
  run: (call: BridgedCallRpc) => Promise<BridgeOutcome>,
): Promise<BridgeOutcome> {
  const cancel = () => void call.cancel({ call: id, principal: ctx.identity.principal }).catch(() => {});
  ctx.signal.addEventListener("abort", cancel, { once: true });
  try {
    return await run(call);
  } finally {
    ctx.signal.removeEventListener("abort", cancel);
  }
}

function gone(reason: BridgeGone, id: JsonRpcId): GatewayError {
  // Not about the client's state: the call could not be held, or the upstream asked too much.
  if (reason === "full")
    return new GatewayError(
      200,
      INTERNAL_ERROR,
      `The gateway holds as many bridged calls for this caller as it may (${BRIDGE_OBJECTS_PER_PRINCIPAL} × ${MAX_CALLS_PER_OBJECT}); try again when some have completed`,
      { reason },
      id,
    );
  if (reason === "too-many-rounds")
    return new GatewayError(
      200,
      INTERNAL_ERROR,
      `The upstream asked more than ${MAX_BRIDGE_ROUNDS} questions in one call; the gateway cancelled the call`,
      { reason },
      id,
    );
  const why = {
    unknown: "the upstream call it continues is no longer held (it ended, or the gateway restarted it)",
    "other-principal": "it continues another caller's call",
    "stale-round": "it answers a question the call has moved past (a requestState is used once)",
    busy: "the same question is being answered by another request",
  }[reason];
  return new GatewayError(
    400,
    INVALID_PARAMS,
    `Invalid params: requestState cannot be used: ${why}; send the original request again without requestState`,
    { reason },
    id,
  );
}

/**
 * The client's answer for an outcome of the object. Only the object's question carries the
 * object (`bridgedCall`), so that multi-round-trip.ts seals that answer's state as a bridge
 * handle; any other answer is the upstream's own (on /mcp, a read may try a bridged upstream
 * before the one that asks, whose own state must not be taken for a handle).
 */
async function answerOf(
  ctx: CallContext,
  upstream: UpstreamConfig,
  where: Omit<Handle, "round">,
  outcome: BridgeOutcome,
  id: JsonRpcId,
  toClient: ToClient,
): Promise<Answer> {
  const { record } = ctx;
  record.upstream = upstream.name;
  switch (outcome.kind) {
    case "failed":
      throw failureError(outcome.failure, ctx.services.env).withId(id);
    case "gone":
      throw gone(outcome.reason, id);
    case "complete":
    case "input": {
      for (const text of outcome.notifications) {
        const wire = readUpstreamMessage(text);
        if (wire) await ctx.emit(await toClient(wire));
      }
      if (outcome.kind === "complete") {
        record.upstreamStatus = outcome.status;
        record.bytesFromUpstream = (record.bytesFromUpstream ?? 0) + outcome.bytesFromUpstream;
        // An error is the upstream's own words, which may quote the credential it was sent.
        const text =
          pathSpan(outcome.text, ["error"]) !== undefined
            ? redactSecretsInJson(outcome.text, ctx.services.env)
            : outcome.text;
        return Answer.ofText(withMessageId(text, id), { upstream: upstream.name });
      }
      const handle: Handle = { ...where, round: outcome.round };
      const question = JSON.stringify({
        jsonrpc: "2.0",
        id,
        result: {
          resultType: "input_required",
          inputRequests: { [outcome.key]: outcome.request },
          requestState: JSON.stringify(handle),
        },
      });
      return Answer.ofText(question, { upstream: upstream.name, bridgedCall: where.object });
    }
    default: {
      const never: never = outcome;
      return never;
    }
  }
}

/**
 * Sends `text` (the request as the upstream gets it) through a new bridged call: the
 * upstream's answer, or an input_required result for its first question.
 *
 * @example
 * return bridgedForward(ctx, upstream, text, id, (wire) => toClient(ctx, upstream.name, wire));
 */
export async function bridgedForward(
  ctx: CallContext,
  upstream: UpstreamConfig,
  text: string,
  id: JsonRpcId,
  toClient: ToClient,
): Promise<Answer> {
  const namespace = ctx.services.bridgedCalls!;
  const { principal, email, roles } = ctx.identity;
  const traceparent = ctx.trace && traceparentOf(ctx.trace);
  const large = largeAnswerOf(ctx);
  const call = crypto.randomUUID();
  const start: BridgeStart = {
    call,
    upstream,
    client: ctx.upstreamClient,
    caller: {
      principal,
      ...(email !== undefined ? { email } : {}),
      roles: [...roles],
      ...(ctx.record.persona !== undefined ? { persona: ctx.record.persona } : {}),
    },
    text,
    id,
    ...(traceparent ? { traceparent } : {}),
    ...(large ? { large } : {}),
  };
  // The principal's first object that is not full: one after another, its calls find the
  // upstream sessions the object keeps (bridge-sessions.ts) instead of paying a handshake each.
  let outcome: BridgeOutcome = { kind: "gone", reason: "full" };
  let object = namespace.idFromName(`${principal}\n0`);
  for (
    let tried = 0;
    tried < BRIDGE_OBJECTS_PER_PRINCIPAL && outcome.kind === "gone" && outcome.reason === "full";
    tried++
  ) {
    object = namespace.idFromName(`${principal}\n${tried}`);
    outcome = await round(ctx, rpc(ctx, object), call, (stub) => stub.start(start));
  }
  return answerOf(ctx, upstream, { object: object.toString(), call }, outcome, id, toClient);
}

function handleOf(state: string | null): Handle | undefined {
  try {
    const value: unknown = state === null ? undefined : JSON.parse(JSON.parse(state) as string);
    const handle = value as Handle;
    if (
      typeof value === "object" &&
      value !== null &&
      typeof handle.object === "string" &&
      typeof handle.call === "string" &&
      typeof handle.round === "number"
    )
      return handle;
  } catch {
    // a sealed handle always parses; anything else is refused below
  }
  return undefined;
}

/**
 * Hands a retry's `inputResponses` to the bridged call its sealed state names: the
 * upstream's answer, or an input_required result for its next question.
 *
 * @example
 * answer = await continueBridgedCall(ctx, upstream, request, wrapped.state, toClientOf);
 */
export async function continueBridgedCall(
  ctx: CallContext,
  upstream: UpstreamConfig,
  request: WireMessage<JsonRpcRequest>,
  state: string | null,
  toClient: ToClient,
): Promise<Answer> {
  const { id, params } = request.message;
  const progressToken = progressTokenOf(request.text);
  const large = largeAnswerOf(ctx);
  const handle = handleOf(state);
  const namespace = ctx.services.bridgedCalls;
  if (!handle) throw gone("unknown", id);
  if (!namespace)
    throw new GatewayError(
      503,
      INVALID_PARAMS,
      "Invalid params: requestState names a bridged call, but this gateway has no BRIDGED_CALLS binding; send the original request again",
      undefined,
      id,
    );
  let object: DurableObjectId;
  try {
    object = namespace.idFromString(handle.object);
  } catch {
    throw gone("unknown", id);
  }
  const outcome = await round(ctx, rpc(ctx, object), handle.call, (call) =>
    call.answer({
      call: handle.call,
      principal: ctx.identity.principal,
      round: handle.round,
      responses: params?.["inputResponses"],
      ...(progressToken !== undefined ? { progressToken } : {}),
      ...(large ? { large } : {}),
    }),
  );
  return answerOf(ctx, upstream, { object: handle.object, call: handle.call }, outcome, id, toClient);
}
