/**
 * The 2025 front (protocol revisions 2025-03-26 to 2025-11-25): the Streamable HTTP
 * endpoint, framework-free. POST carries requests (initialize included), notifications
 * and the client's answers to server requests; GET opens the stream of server messages;
 * DELETE ends the session. The front turns each into client messages for the pipeline,
 * with an identity taken from the sealed session, and turns what comes back into HTTP:
 * JSON or SSE, and the `Mcp-Session-Id` it seals. The hono adapter in shell/app.ts only
 * picks the route and calls these.
 */
import { asGatewayError, GatewayError } from "../../core/errors";
import { validateClientMessage } from "../../core/validate-message";
import {
  INVALID_REQUEST,
  kindOf,
  PARSE_ERROR,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type WireMessage,
} from "../../core/jsonrpc";
import { elements, rootSpan } from "../../core/raw-json";
import type { CallContext, Caller, ClientMessage, Identity } from "../../context/call-context";
import { routeFor } from "../../context/route";
import { newCallRecord } from "../../context/call-record";
import type { UpstreamSession } from "../../upstream/upstream-session";
import { allowsBatches, checkVersionHeader } from "./protocol";
import { requestOrigin, type EndpointRequest } from "../http/endpoint-request";
import { replyTo, type Emit } from "../http/reply-stream";
import { checkDuplicateKeys, checkGetHeaders, type CheckedBody } from "../http/request-checks";
import { streamToClient } from "./server-stream";
import { beginSession, endSession, findSession, sessionError } from "./session";
import { sealSession, type SessionState } from "./session-token";

/** Messages in one JSON-RPC batch: each may fan out to every upstream, so one POST is bounded. */
export const MAX_BATCH_MESSAGES = 100;

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

/** Who is calling: the session's principal (which `findSession` matched to this request's), with this request's roles. */
function identityOf(session: SessionState, caller: Caller): Identity {
  // The optional members last (shell/app.ts, `endpoint`).
  return {
    principal: session.principal,
    roles: caller.roles,
    authMethod: caller.method,
    protocolVersion: session.protocolVersion,
    era: "legacy",
    clientCapabilities: session.clientCapabilities,
    clientInfo: session.clientInfo,
    session: {
      id: session.sid,
      expiresAt: session.exp,
      ...(session.filterShapes ? { filterShapes: session.filterShapes } : {}),
    },
    ...(caller.email !== undefined ? { email: caller.email } : {}),
    ...(caller.token !== undefined ? { token: caller.token } : {}),
  };
}

/** The client's W3C trace context header, passed to the pipeline (which continues the trace). */
function traceHeader(request: Request): { incomingTraceparent?: string } {
  const header = request.headers.get("traceparent");
  return header === null ? {} : { incomingTraceparent: header };
}

/** The call context of a message in `session`, less what each message brings (emit, record). */
type SessionContext = Omit<CallContext, "emit" | "record">;

function contextOf(where: EndpointRequest, session: SessionState, signal: AbortSignal | undefined): SessionContext {
  return {
    identity: identityOf(session, where.caller),
    grant: where.grants.once(where.services.kv, where.caller.roles, where.services.config.documentCacheTtlMs),
    route: routeFor(where.route, where.upstreams, requestOrigin(where.request.url), where.catalog, where.server),
    services: where.services,
    upstreamClient: session,
    signal: signal ?? new AbortController().signal,
    waitUntil: where.waitUntil,
    ...traceHeader(where.request),
  };
}

/** Runs one message that answers nothing (a notification, the client's answer) through the pipeline. */
async function runQuietly(where: EndpointRequest, ctx: SessionContext, message: ClientMessage): Promise<void> {
  await where.pipeline({ ...ctx, emit: () => {}, record: newCallRecord() }, message);
}

/** initialize: a new session, the upstreams initialized through the pipeline, then sealed. */
async function initialize(where: EndpointRequest, request: WireMessage<JsonRpcRequest>): Promise<Response> {
  const secret = where.services.sessionSecret;
  const filterShapes = await where.sessionShapes(
    where.services,
    where.route,
    where.upstreams.map((upstream) => upstream.name),
  );
  let state = beginSession(request.message, where, filterShapes);
  const opened = (upstreams: Readonly<Record<string, UpstreamSession>>) => {
    state = { ...state, upstreams };
  };
  const { text } = (await where.pipeline(
    { ...contextOf(where, state, where.signal), emit: () => {}, record: newCallRecord(), opened },
    { kind: "request", wire: request },
  ))!;
  const token = await sealSession(state, secret);
  return new Response(text, { headers: { "content-type": "application/json", "mcp-session-id": token } });
}

/**
 * POST: initialize, or any message of an existing session; `checked` is the body the shell
 * read, its headers and nesting checked (checkPostHeaders, checkNesting).
 */
export async function handlePost(where: EndpointRequest, checked: CheckedBody): Promise<Response> {
  const raw = checked.text;
  const body = parseBody(raw);

  const single = Array.isArray(body) ? undefined : validateClientMessage(body);
  // Every message kind, initialize and each element of a batch included, in one pass.
  checkDuplicateKeys(checked, single && "id" in single ? single.id : null);
  if (single && kindOf(single) === "request" && (single as JsonRpcRequest).method === "initialize") {
    return initialize(where, { text: raw, message: single as JsonRpcRequest });
  }

  const session = await requireSession(where);
  let wires: WireMessage[];
  if (Array.isArray(body)) {
    if (!allowsBatches(session.protocolVersion)) {
      throw new GatewayError(
        400,
        INVALID_REQUEST,
        `Invalid Request: JSON-RPC batches are not supported in protocol version ${session.protocolVersion}; send one message per POST`,
      );
    }
    if (body.length === 0) throw new GatewayError(400, INVALID_REQUEST, "Invalid Request: an empty batch");
    if (body.length > MAX_BATCH_MESSAGES) {
      throw new GatewayError(
        400,
        INVALID_REQUEST,
        `Invalid Request: a batch of ${body.length} messages; the gateway takes at most ${MAX_BATCH_MESSAGES} per POST`,
      );
    }
    // Each message keeps the client's own bytes (arguments may hold numbers JSON.parse would round).
    const texts = elements(raw, rootSpan(raw)).map((span) => raw.slice(span.start, span.end));
    wires = body.map((value: unknown, index) => ({ text: texts[index]!, message: validateClientMessage(value) }));
  } else wires = [{ text: raw, message: single! }];
  if (wires.some((w) => "method" in w.message && w.message.method === "initialize")) {
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      "Invalid Request: initialize must be sent alone, and only once per session",
    );
  }

  const abort = new AbortController();
  where.signal?.addEventListener("abort", () => abort.abort(), { once: true });
  const ctx = contextOf(where, session, abort.signal);
  const requests = wires.filter((wire): wire is WireMessage<JsonRpcRequest> => kindOf(wire.message) === "request");
  const relayed = new Set<string>();
  // Why a notification was not accepted (over the rate limit): the POST's answer when it has no request to answer.
  let refused: unknown;
  for (const wire of wires) {
    const message = wire.message;
    switch (kindOf(message)) {
      case "request":
        break;
      case "response":
        await runQuietly(where, ctx, { kind: "response", wire: wire as WireMessage<JsonRpcResponse> });
        break;
      case "notification":
        // Each distinct notification once per batch: a batch cannot multiply upstream POSTs.
        if (relayed.has(wire.text)) break;
        relayed.add(wire.text);
        // The pipeline returns once every layer accepted it (the relay delivers it later):
        // a refusal is this POST's status, which is all a notification can be told.
        try {
          await runQuietly(where, ctx, { kind: "notification", wire: wire as WireMessage<JsonRpcNotification> });
        } catch (error) {
          refused ??= error;
        }
        break;
    }
  }
  if (requests.length === 0) {
    if (refused !== undefined) throw refused;
    return new Response(null, { status: 202 });
  }
  // A batch with requests answers them: a refused notification in it is dropped (a bug is still logged).
  if (refused !== undefined) asGatewayError(refused);
  // On /mcp/<upstream> the answer keeps the framing the upstream chose; /mcp merges, so the gateway chooses.
  const jobs = requests.map((wire) => ({
    id: wire.message.id,
    run: async (emit: Emit, streamed: () => void) =>
      (await where.pipeline(
        {
          ...ctx,
          emit,
          record: newCallRecord(),
          ...(ctx.route.kind === "aggregated" ? {} : { streamed }),
          // One request's answer may flow to the client as it arrives (reply-stream.ts writes it); a batch's is joined.
          ...(Array.isArray(body) ? {} : { answerFlows: true }),
        },
        { kind: "request", wire },
      ))!.body,
  }));
  return replyTo(jobs, Array.isArray(body), () => abort.abort());
}

/** GET: the stream of server messages, from the upstreams through the pipeline. */
export async function handleGet(where: EndpointRequest): Promise<Response> {
  checkGetHeaders(where.request.headers.get("accept"));
  const session = await requireSession(where);
  const abort = new AbortController();
  const ctx = contextOf(where, session, abort.signal);
  return streamToClient(
    (emit, opened) => where.pipeline({ ...ctx, emit, streamed: opened, record: newCallRecord() }, { kind: "listen" }),
    () => abort.abort(),
  );
}

/** DELETE: ends the session here and at every upstream. */
export async function handleDelete(where: EndpointRequest): Promise<Response> {
  const session = await requireSession(where);
  // The end passes the pipeline (traced, recorded, audited) while the session is marked ended; the relay closes the upstreams' sessions.
  // No signal: a client that goes away mid-DELETE still ends its session.
  await Promise.all([
    runQuietly(where, contextOf(where, session, undefined), { kind: "end" }),
    endSession(session, where),
  ]);
  return new Response(null, { status: 200 });
}
