/**
 * Forwarding one request to one upstream and streaming back what it says on the way:
 * progress, log messages and server-to-client requests reach the client as they
 * arrive; the upstream's answer is returned as its exact text.
 */
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR, kindOf, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { parseSpan, pathSpan, splice, withMessageId } from "../core/raw-json";
import { ByteWire, FlowWire } from "../upstream/byte-answer";
import { FlowBreak, type ResponseFlow } from "../core/response-flow";
import { UpstreamBreak } from "../upstream/deadlines";
import { breakFailure } from "../upstream/handshake";
import { answering } from "../upstream/reply-body";
import { encodeServerRequestId } from "./server-requests";
import type { RelayTasks } from "./plugs";
import { bridgeable, bridgedForward } from "../eras/call-bridge";
import { withTraceMeta } from "./trace-meta";
import { cancelWhenClientGoes } from "./cancel-upstream";
import { traceparentOf } from "../core/traceparent";
import { answerMayFlow, largeAnswerOf, poolRequest, type CallContext } from "../context/call-context";
import { Answer } from "../context/answer";
import type { RouteEndpoint } from "../context/route";
import type { UpstreamConfig } from "../config/upstreams";
import { failureError } from "../upstream/failures";
import { redactSecretsInJson } from "../config/secrets";
import { resumeFromUpstream, sendToUpstream, upstreamMessages, type SendOptions } from "../upstream/pool";
import type { NotificationPass } from "../upstream/client";
import { upstreamTarget, withSessionsKnown, type UpstreamTarget } from "../upstream/upstream-target";
import { bridgeInput, inputRequired } from "../eras/input-bridge";
import { withoutRetryFields } from "../eras/request-state";
import { randomHexId } from "../core/ids";
import { MAX_RESUMPTIONS, resumeDelay } from "../upstream/stream-resumption";

/** Ids the gateway gives a stateless client's requests upstream (see `forward`). */
const UPSTREAM_ID_PREFIX = "gw-req-";
/** How much of a stray response's id goes to the log. */
const MAX_LOGGED_ID_CHARS = 80;
/**
 * Methods whose answer is never long in coming: it must arrive whole within the upstream's
 * `timeoutMs` even as a stream (a stalled upstream must not hold a merged list). Tool
 * calls, reads and prompts may take long; their streams only have to keep talking.
 */
const QUICK_METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/subscribe",
  "resources/unsubscribe",
  "logging/setLevel",
  "completion/complete",
  "tasks/get",
  "tasks/list",
  "tasks/cancel",
]);

/** The notifications `toClient` may rewrite whatever `_meta` they carry (ids: `withIdsToClient`; task ids: the tasks feature). */
const REWRITTEN_NOTIFICATIONS: ReadonlySet<string> = new Set(["notifications/cancelled", "notifications/tasks/status"]);

/**
 * Notifications of a call's stream that reach the client as the upstream's bytes, never
 * decoded: those `toClient` passes unchanged (not one it rewrites, no `_meta` that may name
 * a task). Any other goes through `toClient` as a message.
 */
function unchangedToClient(ctx: CallContext): NotificationPass {
  return async (bytes, head) => {
    if (head.meta || REWRITTEN_NOTIFICATIONS.has(head.method)) return false;
    await ctx.emit({ bytes, method: head.method, ...(head.level !== undefined ? { level: head.level } : {}) }); // at the client's pace
    return true;
  };
}

/** A message from an upstream as the client of `ctx` must see it. */
export function toClient(
  ctx: Pick<CallContext, "route" | "services" | "identity">,
  upstream: string,
  wire: WireMessage,
  tasks: RelayTasks,
): Promise<string> {
  const text = withIdsToClient(ctx.route, upstream, wire);
  // Task ids (a status notification, a task's related-task `_meta`) are the gateway's, on both routes (plugs.ts).
  return tasks.toClient(ctx, text, upstream);
}

function withIdsToClient(route: RouteEndpoint, upstream: string, wire: WireMessage): string {
  // Server-to-client requests get ids that say where the answer goes (aggregated only:
  // on /mcp/<upstream> there is one place it can go, and ids pass unchanged).
  if (route.kind === "aggregated" && kindOf(wire.message) === "request") {
    return withMessageId(wire.text, encodeServerRequestId(upstream, (wire.message as JsonRpcRequest).id));
  }
  // An upstream cancelling one of its own requests names it by the id the client knows.
  const requestId =
    "method" in wire.message && wire.message.method === "notifications/cancelled"
      ? wire.message.params?.["requestId"]
      : undefined;
  if (route.kind === "aggregated" && (typeof requestId === "string" || typeof requestId === "number")) {
    const span = pathSpan(wire.text, ["params", "requestId"]);
    if (span) return splice(wire.text, [{ span, raw: JSON.stringify(encodeServerRequestId(upstream, requestId)) }]);
  }
  return wire.text;
}

/**
 * Whether a call's answer may flow: nothing reads it (`answerMayFlow`), its client and the
 * upstream's side speak 2025 (no id or member to splice, nothing to downgrade), and it is a
 * plain tools/call (a task-augmented one is answered with a task the tasks layer reads).
 */
function flows(ctx: CallContext, target: UpstreamTarget, text: string): boolean {
  return (
    answerMayFlow(ctx) &&
    ctx.identity.era !== "modern" &&
    target.side === "legacy" &&
    methodOf(text) === "tools/call" &&
    pathSpan(text, ["params", "task"]) === undefined
  );
}

/**
 * The answer made of `flow`: its failures become the call's (the upstream's own, or a
 * `bad-response` for bytes that break it off), counted when it ended, when the upstream's
 * messages are closed. A client that goes away stops it.
 */
function flowAnswer(
  ctx: CallContext,
  flow: ResponseFlow,
  upstream: string,
  id: JsonRpcId,
  reply: { readonly mode: string; readonly received: { readonly bytes: number } },
  items: AsyncGenerator<unknown>,
): Answer {
  flow.mapErrors((error) => {
    if (error instanceof GatewayError || (error instanceof FlowBreak && error.byClient)) return error;
    const failure =
      error instanceof FlowBreak
        ? { reason: "bad-response" as const, upstream, detail: error.message }
        : error instanceof UpstreamBreak
          ? error.failure
          : breakFailure(error, upstream);
    return failureError(failure, ctx.services.env).withId(id);
  });
  const stop = () => flow.cancel(new FlowBreak("the client went away", true));
  if (ctx.signal.aborted) stop();
  else ctx.signal.addEventListener("abort", stop, { once: true });
  void flow.ended.then(async () => {
    ctx.signal.removeEventListener("abort", stop);
    ctx.record.bytesFromUpstream = (ctx.record.bytesFromUpstream ?? 0) + reply.received.bytes;
    await items.return(undefined);
  });
  return Answer.ofFlow(flow, { upstream, sse: reply.mode === "sse" });
}

function sameId(a: JsonRpcId | null, b: JsonRpcId): boolean {
  return a === b;
}

function methodOf(text: string): unknown {
  const span = pathSpan(text, ["method"]);
  return span ? parseSpan(text, span) : undefined;
}

/**
 * Sends `text` (a request with id `id`) to `upstream` and returns the text of its
 * response. Failures become a `GatewayError` answering `id`. Only the response with
 * that id completes the call: a response to anything else is dropped (and logged).
 *
 * A 2026-07-28 upstream may answer `input_required` (multi-round-trip requests). A 2025
 * client cannot read that: the gateway asks it in its own era and retries for it
 * (eras/input-bridge.ts); the client's own `requestState`/`inputResponses` are never sent on.
 * A 2026-07-28 client gets the result back, its `requestState` sealed on the way out by
 * eras/multi-round-trip.ts, which also opens the state of its retry before it comes here.
 */
export async function forward(
  ctx: CallContext,
  upstream: UpstreamConfig,
  request: string,
  id: JsonRpcId,
  tasks: RelayTasks,
): Promise<Answer> {
  // Where the call goes upstream and as whom, resolved once for all its exchanges.
  const target = await upstreamTarget(upstream, poolRequest(ctx));
  if (!target.ok) {
    ctx.record.upstream = upstream.name; // the call was this upstream's, though it never left
    throw failureError(target, ctx.services.env).withId(id);
  }
  const once: SendOnce = (text, sentId) => forwardOnce(ctx, target.value, text, sentId, tasks);
  if (ctx.identity.era !== "modern") return forwardAs(ctx, upstream.name, withoutRetryFields(request), id, once);
  // Stateless clients share upstream sessions (front/modern/upstream-client.ts), and each
  // numbers its requests from its own start: two of them may send the same id at once.
  // The upstream sees an id of the gateway's, unique per request; the client gets its own back.
  const upstreamId = `${UPSTREAM_ID_PREFIX}${randomHexId()}`;
  try {
    // An answer taken while it streams (offload, a withheld one) answers `upstreamId`, checked like any other.
    const answer = await forwardAs(ctx, upstream.name, withMessageId(request, upstreamId), upstreamId, once);
    // An answer kept as the upstream's bytes gets the client's id in its bytes (upstream/byte-answer.ts).
    if (answer.held) return Answer.ofBytes(answer.held.withId(id), answer.from);
    return answer.withText(withMessageId(answer.text, id));
  } catch (error) {
    throw error instanceof GatewayError && error.id === upstreamId ? error.withId(id) : error;
  }
}

/** One exchange of a request's text (answering `id`) with the upstream a call resolved. */
type SendOnce = (request: string, id: JsonRpcId) => Promise<Answer>;

async function forwardAs(
  ctx: CallContext,
  upstream: string,
  request: string,
  id: JsonRpcId,
  once: SendOnce,
): Promise<Answer> {
  const answer = await once(request, id);
  // An answer kept as bytes has no resultType (core/response-bytes.ts): it asks for nothing.
  if (ctx.identity.era === "modern" || answer.unread || !inputRequired(answer.text)) return answer;
  const bridged = await bridgeInput(ctx, upstream, request, id, answer.text, async (text, retryId) => {
    return (await once(text, retryId)).text;
  });
  return answer.withText(bridged);
}

async function forwardOnce(
  ctx: CallContext,
  target: UpstreamTarget,
  request: string,
  id: JsonRpcId,
  tasks: RelayTasks,
): Promise<Answer> {
  const traceparent = ctx.trace && traceparentOf(ctx.trace);
  const text = traceparent ? withTraceMeta(request, traceparent) : request;
  const large = largeAnswerOf(ctx);
  const options: SendOptions = {
    ...(traceparent ? { traceparent } : {}),
    // With a consumer for answers too large to hold (offload), JSON bodies past the bound are streamed to it; its
    // stand-in answers the id the upstream got (for a 2026-07-28 client, the gateway's own).
    ...(large ? { large: answering(large, id) } : {}),
    // Nothing reads this call's answer: a large one may flow to the client as it comes (core/response-flow.ts).
    ...(flows(ctx, target, text) ? { flowId: id } : {}),
    notifications: unchangedToClient(ctx),
    answerWithinTimeout: QUICK_METHODS.has(methodOf(text) as string),
  };
  const { upstream } = target;
  // A modern client's call that the upstream may interrupt with a question on its stream runs where it can wait for the
  // retry: only on a side that asks by requests and keeps sessions (eras/call-bridge.ts), known before it is sent.
  if (bridgeable(ctx, target, methodOf(text), text)) {
    const known = await withSessionsKnown(target);
    if (!known.ok) throw failureError(known, ctx.services.env).withId(id);
    if (bridgeable(ctx, known.value, methodOf(text), text))
      return bridgedForward(ctx, upstream, text, id, (wire) => toClient(ctx, upstream.name, wire, tasks));
  }
  const { record } = ctx;
  record.upstream = upstream.name;
  const stopWatching = cancelWhenClientGoes(ctx, upstream, id);
  try {
    return await exchangeWith(ctx, target, text, id, options, tasks);
  } finally {
    stopWatching();
  }
}

async function exchangeWith(
  ctx: CallContext,
  { upstream, request }: UpstreamTarget,
  text: string,
  id: JsonRpcId,
  given: SendOptions,
  tasks: RelayTasks,
): Promise<Answer> {
  const { record } = ctx;
  // A notification handed on as bytes never reaches the loop below, but is something arriving all the same.
  let passed = false;
  const pass = given.notifications;
  const notifications: NotificationPass | undefined =
    pass &&
    (async (bytes, head) => {
      const handed = await pass(bytes, head);
      if (handed) passed = true;
      return handed;
    });
  const options: SendOptions = notifications ? { ...given, notifications } : given;
  let reply = await sendToUpstream(upstream, text, request, options);
  // Resumptions count only while nothing arrives: an upstream that polls (closing its
  // stream after each event) may take as long as the call does.
  for (let idle = 0; ; idle++) {
    if (!reply.ok) throw failureError(reply, ctx.services.env).withId(id);
    record.upstreamStatus = reply.value.status;
    if (reply.value.mode === "sse") ctx.streamed?.();
    const items = upstreamMessages(reply.value, upstream.name);
    /** A flow reads the body on after the answer is returned: the messages are closed when it ended. */
    let flowing: ResponseFlow | undefined;
    try {
      for (;;) {
        const next = await items.next();
        if (next.done) break;
        const item = next.value;
        if (!item.ok) throw failureError(item, ctx.services.env).withId(id);
        idle = 0;
        const wire = item.value;
        // A large success response kept as the upstream's bytes: passed on undecoded when it is this call's.
        if (wire instanceof ByteWire && sameId(wire.id, id))
          return Answer.ofBytes(wire.bytes, { upstream: upstream.name, sse: reply.value.mode === "sse" });
        if (wire instanceof FlowWire) {
          flowing = wire.flow;
          return flowAnswer(ctx, flowing, upstream.name, id, reply.value, items);
        }
        if (kindOf(wire.message) === "response") {
          const answered = "id" in wire.message ? wire.message.id : null;
          // An error is the upstream's own words, which may quote the credential it was sent.
          if (sameId(answered, id)) {
            const text = "error" in wire.message ? redactSecretsInJson(wire.text, ctx.services.env) : wire.text;
            return Answer.ofText(text, { upstream: upstream.name, sse: reply.value.mode === "sse" });
          }
          // Not this call's answer (another upstream's id, a stale one): never the client's to see.
          console.warn(
            `mcp-edge-gateway: upstream "${upstream.name}" sent a response to id ${JSON.stringify(answered)?.slice(0, MAX_LOGGED_ID_CHARS)} on the stream of request ${JSON.stringify(id).slice(0, MAX_LOGGED_ID_CHARS)}; dropped`,
          );
          continue;
        }
        await ctx.emit(await toClient(ctx, upstream.name, wire, tasks)); // at the client's pace
      }
    } finally {
      if (!flowing) {
        await items.return(undefined);
        record.bytesFromUpstream = (record.bytesFromUpstream ?? 0) + reply.value.received.bytes;
      }
    }
    if (passed) idle = 0;
    passed = false;
    // The stream ended before the answer: an upstream that gave event ids may be polled
    // for the rest (Streamable HTTP resumability), after the delay it asked for.
    const { lastEventId, retryMs } = reply.value.resume;
    if (lastEventId === undefined || idle >= MAX_RESUMPTIONS || ctx.signal.aborted) break;
    await resumeDelay(retryMs);
    reply = await resumeFromUpstream(upstream, lastEventId, request, options);
  }
  throw new GatewayError(
    200,
    INTERNAL_ERROR,
    `upstream "${upstream.name}" closed its stream without answering the request`,
    { upstream: upstream.name, reason: "no-response" },
    id,
  );
}
