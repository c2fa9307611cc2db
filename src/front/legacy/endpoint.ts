/**
 * The Streamable HTTP endpoint, framework-free: POST (requests, notifications,
 * responses), GET (the server stream) and DELETE (end the session) for one route.
 * The hono adapter in app.ts only picks the route and calls these.
 */
import { GatewayError } from "../../core/errors";
import {
  INVALID_REQUEST,
  kindOf,
  PARSE_ERROR,
  validateMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type WireMessage,
} from "../../core/jsonrpc";
import { elements, member, members, rootSpan } from "../../core/raw-json";
import { allowsBatches, checkGetHeaders, checkPostHeaders, checkVersionHeader } from "./protocol";
import { decodeServerRequestId, withMessageId } from "../../relay/server-requests";
import { toUpstreamTaskIds } from "../../relay/task-ids";
import { endSession, findSession, initializeSession, sessionError, type SessionEnv } from "./session";
import type { SessionState } from "./session-token";
import { poolRequest, type CallContext, type Identity, type Services } from "../../context/call-context";
import { newCallRecord } from "../../context/call-record";
import { pipelineFor } from "../../pipeline/index";
import { routeShapes } from "../../policy/listed-shapes";
import { failureError } from "../../upstream/failures";
import { sendToUpstream, upstreamMessages } from "../../upstream/pool";
import { relayNotification } from "../../relay/relay";
import { replyTo, type Emit } from "./reply-stream";
import { openServerStream } from "./server-stream";

/** Messages in one JSON-RPC batch: each may fan out to every upstream, so one POST is bounded. */
export const MAX_BATCH_MESSAGES = 100;

/** One route of the endpoint as the shell resolved it. */
export type EndpointRequest = SessionEnv & {
  readonly request: Request;
  readonly services: Services;
  readonly waitUntil: (promise: Promise<unknown>) => void;
};

/**
 * Refuses duplicate keys at the top of a message and of its params: JSON.parse keeps the
 * last, the relayed bytes hold both, and an upstream may read the first, so policy could
 * judge one tool while another runs.
 */
function checkDuplicateKeys(text: string): void {
  const root = rootSpan(text);
  const params = member(text, root, "params");
  for (const span of params && text.charCodeAt(params.start) === 0x7b ? [root, params] : [root]) {
    const keys = members(text, span).map((m) => m.key);
    if (new Set(keys).size !== keys.length) throw new GatewayError(400, INVALID_REQUEST, "Invalid Request: a key appears twice in the message or its params");
  }
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError(400, PARSE_ERROR, "Parse error: the body is not valid JSON");
  }
}

async function requireSession(where: EndpointRequest): Promise<SessionState> {
  const found = await findSession(where.request.headers.get("mcp-session-id"), where);
  if (!found.ok) throw sessionError(found);
  checkVersionHeader(where.request.headers.get("mcp-protocol-version"));
  return found.value;
}

/** Who is calling, as the sealed session says. */
function identityOf(session: SessionState): Identity {
  return {
    principal: session.principal,
    protocolVersion: session.protocolVersion,
    clientCapabilities: session.clientCapabilities,
    clientInfo: session.clientInfo,
    session: { id: session.sid, expiresAt: session.exp, ...(session.filterShapes ? { filterShapes: session.filterShapes } : {}) },
  };
}

/** The call context of a message in `session` (emit and record are per message). */
function contextOf(where: EndpointRequest, session: SessionState, signal: AbortSignal): Omit<CallContext, "emit" | "record"> {
  return {
    identity: identityOf(session),
    route: { name: where.route, aggregated: where.route === "", upstreams: where.upstreams, origin: new URL(where.request.url).origin },
    services: where.services,
    upstreamClient: session,
    signal,
    waitUntil: where.waitUntil,
  };
}

/** Routes the client's answer to a server-to-client request back to the upstream that asked. */
async function relayClientResponse(ctx: CallContext, wire: WireMessage<JsonRpcResponse>): Promise<void> {
  const id = wire.message.id;
  let upstream = ctx.route.upstreams[0];
  let text = wire.text;
  if (ctx.route.aggregated) {
    const origin = id === null ? undefined : decodeServerRequestId(id);
    upstream = origin && ctx.route.upstreams.find((u) => u.name === origin.upstream);
    if (!origin || !upstream) {
      throw new GatewayError(400, INVALID_REQUEST, `Bad Request: the response id ${JSON.stringify(id)} does not answer a request this gateway sent`);
    }
    // An answer to a task's elicitation names that task by the id the client knows.
    text = toUpstreamTaskIds(withMessageId(wire.text, origin.id), upstream.name);
  }
  const reply = await sendToUpstream(upstream!, text, poolRequest(ctx));
  if (!reply.ok) throw failureError(reply, ctx.services.env);
  for await (const item of upstreamMessages(reply.value, upstream!.name)) if (!item.ok) throw failureError(item, ctx.services.env);
}

/** POST: initialize, or any message of an existing session. */
export async function handlePost(where: EndpointRequest): Promise<Response> {
  const { request } = where;
  checkPostHeaders(request.headers.get("accept"), request.headers.get("content-type"));
  const raw = await request.text();
  const body = parseBody(raw);

  const single = Array.isArray(body) ? undefined : validateMessage(body);
  if (single && kindOf(single) === "request" && (single as JsonRpcRequest).method === "initialize") {
    const filterShapes = await routeShapes(where.env, where.route, where.upstreams.map((upstream) => upstream.name));
    const { text, token } = await initializeSession(single as JsonRpcRequest, where, filterShapes);
    return new Response(text, { headers: { "content-type": "application/json", "mcp-session-id": token } });
  }

  const session = await requireSession(where);
  let wires: WireMessage[];
  if (Array.isArray(body)) {
    if (!allowsBatches(session.protocolVersion)) {
      throw new GatewayError(400, INVALID_REQUEST, `Invalid Request: JSON-RPC batches are not supported in protocol version ${session.protocolVersion}; send one message per POST`);
    }
    if (body.length === 0) throw new GatewayError(400, INVALID_REQUEST, "Invalid Request: an empty batch");
    if (body.length > MAX_BATCH_MESSAGES) {
      throw new GatewayError(400, INVALID_REQUEST, `Invalid Request: a batch of ${body.length} messages; the gateway takes at most ${MAX_BATCH_MESSAGES} per POST`);
    }
    // Each message keeps the client's own bytes (arguments may hold numbers JSON.parse would round).
    const texts = elements(raw, rootSpan(raw)).map((span) => raw.slice(span.start, span.end));
    wires = body.map((value: unknown, index) => ({ text: texts[index]!, message: validateMessage(value) }));
  } else wires = [{ text: raw, message: single! }];
  for (const wire of wires) checkDuplicateKeys(wire.text);
  if (wires.some((w) => "method" in w.message && w.message.method === "initialize")) {
    throw new GatewayError(400, INVALID_REQUEST, "Invalid Request: initialize must be sent alone, and only once per session");
  }

  const abort = new AbortController();
  where.signal?.addEventListener("abort", () => abort.abort(), { once: true });
  const ctx = contextOf(where, session, abort.signal);
  const handle = pipelineFor(where.services.config);
  const requests: WireMessage<JsonRpcRequest>[] = [];
  const relayed = new Set<string>();
  for (const wire of wires) {
    const kind = kindOf(wire.message);
    if (kind === "request") requests.push(wire as WireMessage<JsonRpcRequest>);
    else if (kind === "response") await relayClientResponse({ ...ctx, emit: () => {}, record: newCallRecord() }, wire as WireMessage<JsonRpcResponse>);
    else if ((!("method" in wire.message) || wire.message.method !== "notifications/initialized") && !relayed.has(wire.text)) {
      // The gateway initialized each upstream itself; other notifications go on, each distinct one once per batch.
      relayed.add(wire.text);
      where.waitUntil(relayNotification({ ...ctx, emit: () => {}, record: newCallRecord() }, wire.text));
    }
  }
  if (requests.length === 0) return new Response(null, { status: 202 });
  // On /mcp/<upstream> the answer keeps the framing the upstream chose; /mcp merges, so the gateway chooses.
  const jobs = requests.map((wire) => ({
    id: wire.message.id,
    run: (emit: Emit, streamed: () => void) => handle({ ...ctx, emit, record: newCallRecord(), ...(ctx.route.aggregated ? {} : { streamed }) }, wire),
  }));
  return replyTo(jobs, Array.isArray(body), () => abort.abort());
}

/** GET: the server-to-client stream. */
export async function handleGet(where: EndpointRequest): Promise<Response> {
  checkGetHeaders(where.request.headers.get("accept"));
  const session = await requireSession(where);
  return openServerStream({ env: where.env, session, upstreams: where.upstreams, aggregated: where.route === "" });
}

/** DELETE: ends the session here and at every upstream. */
export async function handleDelete(where: EndpointRequest): Promise<Response> {
  const session = await requireSession(where);
  await endSession(session, where);
  return new Response(null, { status: 200 });
}
