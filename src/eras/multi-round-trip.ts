/**
 * Multi-round-trip requests (2026-07-28 basic/patterns/mrtr) toward modern clients, in
 * one place every route passes through (relay/relay.ts `relayRequest`, /mcp and /mcp/<upstream>
 * alike): an `input_required` answer leaves with its `requestState` sealed by the gateway
 * (request-state.ts), and a retry is opened, checked and sent to the upstream that asked
 * with that upstream's own state restored. A retry whose state is a bridged call's handle
 * (a 2025 upstream's question, call-bridge.ts) continues that call in its Durable Object
 * instead of reaching the upstream afresh.
 *
 * Only stateless (2026-07-28) clients are concerned: a 2025 client never sees
 * input_required, and a `requestState` or `inputResponses` in its requests is removed
 * before any upstream sees it (relay/forward.ts, `withoutRetryFields`).
 */
import { GatewayError } from "../core/errors";
import { INVALID_PARAMS, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import type { CallContext } from "../context/call-context";
import type { Answer } from "../context/answer";
import type { UpstreamConfig } from "../config/upstreams";
import { continueBridgedCall } from "./call-bridge";
import { BRIDGE_RETRY_DEADLINE_MS } from "./bridge-protocol";
import {
  isInputRequired,
  MULTI_ROUND_TRIP_METHODS,
  openRequestState,
  requestDigest,
  restoreRequestState,
  wrapRequestState,
} from "./request-state";

/** Routes a request to its upstream; `pinned` is the upstream a retry must reach. */
export type RouteRequest = (
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  pinned?: UpstreamConfig,
) => Promise<Answer>;

/** Turns a message from `upstream` into the text the client gets (relay/forward.ts `toClient`: ids the route gives them). */
export type UpstreamToClient = (ctx: CallContext, upstream: string, wire: WireMessage) => Promise<string>;

/** The retry as the upstream must see it: its own state back (or none), every other byte as the client sent it. */
function restored(request: WireMessage<JsonRpcRequest>, state: string | null): WireMessage<JsonRpcRequest> {
  const { requestState: _sealed, ...params } = request.message.params ?? {};
  return {
    text: restoreRequestState(request.text, state),
    message: {
      ...request.message,
      params: state === null ? params : { ...params, requestState: JSON.parse(state) as unknown },
    },
  };
}

/**
 * Runs `route` for a request, sealing the state of an `input_required` answer and
 * opening the state of a retry; a bridged call's messages reach the client through `toClient`.
 *
 * @example
 * export const relayRequest: MethodHandler = (ctx, request) => multiRoundTrip(ctx, request, routeRequest, toClient);
 */
export async function multiRoundTrip(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  route: RouteRequest,
  toClient: UpstreamToClient,
): Promise<Answer> {
  const { method, params, id } = request.message;
  if (ctx.identity.era !== "modern" || !MULTI_ROUND_TRIP_METHODS.has(method)) return route(ctx, request);
  const binding = { secret: ctx.services.sessionSecret, principal: ctx.identity.principal, route: ctx.route.name };
  let answer: Answer;
  if (params?.["requestState"] !== undefined) {
    const wrapped = await openRequestState(request.message, binding);
    const upstream = ctx.route.upstreams.find((u) => u.name === wrapped.upstream);
    if (!upstream)
      throw new GatewayError(
        400,
        INVALID_PARAMS,
        `Invalid params: requestState names upstream "${wrapped.upstream}", which this route no longer serves; send the original request again without requestState`,
        undefined,
        id,
      );
    answer = wrapped.bridged
      ? await continueBridgedCall(ctx, upstream, request, wrapped.state, (wire) => toClient(ctx, upstream.name, wire))
      : await route(ctx, restored(request, wrapped.state), upstream);
  } else {
    answer = await route(ctx, request);
  }
  // An answer kept as the upstream's bytes has no resultType (core/response-bytes.ts): it asks for nothing.
  if (answer.unread || !isInputRequired(answer.text)) return answer;
  const upstream = answer.from.upstream ?? (ctx.route.kind === "upstream" ? ctx.route.upstream.name : undefined);
  // Only a forwarded answer asks for input, and a forwarded answer says its upstream.
  if (upstream === undefined) throw new Error("unreachable: an input_required answer with no upstream");
  const bridged = answer.from.bridgedCall !== undefined;
  const sealed = await wrapRequestState(answer.text, binding.secret, binding.principal, {
    digest: await requestDigest(binding.route, request.message),
    upstream,
    id,
    ...(bridged ? { bridged: true as const, ttlMs: BRIDGE_RETRY_DEADLINE_MS } : {}),
  });
  return answer.withText(sealed);
}
