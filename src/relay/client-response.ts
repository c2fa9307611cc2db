/**
 * The client's answer to a request an upstream sent it (sampling, elicitation, roots):
 * routed back to the upstream that asked. On /mcp the id says which upstream that is
 * (relay/server-requests.ts); on /mcp/<upstream> there is only one.
 */
import { GatewayError } from "../core/errors";
import { INVALID_REQUEST, type JsonRpcResponse, type WireMessage } from "../core/jsonrpc";
import { poolRequest, type CallContext } from "../context/call-context";
import { failureError } from "../upstream/failures";
import { sendToUpstream, upstreamMessages } from "../upstream/pool";
import { decodeServerRequestId } from "./server-requests";
import { withMessageId } from "../core/raw-json";
import type { RelayTasks } from "./plugs";
import { deliverInput, isInputRequestId } from "../eras/input-bridge";

/** Sends the client's answer to the upstream that asked; refuses an id the gateway never sent. */
export async function relayClientResponse(
  ctx: CallContext,
  wire: WireMessage<JsonRpcResponse>,
  tasks: RelayTasks,
): Promise<void> {
  const id = wire.message.id;
  // An answer to what a 2026-07-28 upstream asked through the gateway: left where its call waits.
  if (isInputRequestId(id)) return deliverInput(ctx, wire);
  let upstream = ctx.route.kind === "upstream" ? ctx.route.upstream : undefined;
  let text = wire.text;
  if (ctx.route.kind === "aggregated") {
    const origin = id === null ? undefined : decodeServerRequestId(id);
    upstream = origin && ctx.route.upstreams.find((u) => u.name === origin.upstream);
    if (!origin || !upstream) {
      throw new GatewayError(
        400,
        INVALID_REQUEST,
        `Bad Request: the response id ${JSON.stringify(id)} does not answer a request this gateway sent`,
      );
    }
    text = withMessageId(wire.text, origin.id);
  }
  // An answer to a task's elicitation names that task by the id the client knows (the gateway's, on both routes).
  text = await tasks.toUpstream(ctx, text, upstream!.name);
  ctx.record.upstream = upstream!.name;
  const reply = await sendToUpstream(upstream!, text, poolRequest(ctx));
  if (!reply.ok) throw failureError(reply, ctx.services.env);
  ctx.record.upstreamStatus = reply.value.status;
  for await (const item of upstreamMessages(reply.value, upstream!.name))
    if (!item.ok) throw failureError(item, ctx.services.env);
}
