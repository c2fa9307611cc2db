/**
 * The 2026-07-28 front: a modern POST, stateless, framework-free. Each request is
 * checked (envelope and headers), refused here when the revision removed the method or
 * the gateway does not bridge it, and otherwise run through the same pipeline as a 2025
 * client's (`server/discover` included: the relay describes the route, discover.ts shapes the answer), with an identity taken from its `_meta` and the upstream
 * sessions the gateway keeps for its principal, route and capabilities
 * (upstream-client.ts). Results gain `resultType` and caching hints (caching.ts).
 *
 * A 2025 upstream's requests to the client (sampling, elicitation, roots) during a
 * modern call become input_required answers in the relay (eras/call-bridge.ts) when the
 * BRIDGED_CALLS binding is present; one that still reaches this front (no binding, or a
 * call the bridge does not cover) is told the client cannot answer, and the client gets
 * -32021 (capability not declared) or -32603 naming the limitation. `subscriptions/listen`
 * runs through the pipeline like any request (relay/subscriptions.ts answers it as a
 * stream); closing any response stream cancels the request at the upstream (`cancelsOnClose`).
 */
import { GatewayError } from "../../core/errors";
import { GatewayFailure } from "../../core/failures";
import { members, parseSpan, rootSpan, type Span } from "../../core/raw-json";
import type { Answer } from "../../context/answer";
import {
  INTERNAL_ERROR,
  INVALID_REQUEST,
  isObject,
  kindOf,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcNotification,
  type JsonRpcResponse,
  type NotificationBytes,
  type OutgoingMessage,
  type WireMessage,
} from "../../core/jsonrpc";
import { readUpstreamMessage, validateClientMessage } from "../../core/validate-message";
import type { CallContext, Identity } from "../../context/call-context";
import { routeFor } from "../../context/route";
import { newCallRecord } from "../../context/call-record";
import { requestOrigin, type EndpointRequest } from "../http/endpoint-request";
import { replyTo, type Emit } from "../http/reply-stream";
import { checkDuplicateKeys } from "../http/request-checks";
import type { ModernBody } from "./classify";
import { COMPLETE_MEMBER, completeResult } from "./caching";
import { discoverAnswer } from "./discover";
import { checkEnvelope, envelopeError, type Envelope } from "./envelope";
import { CACHEABLE_METHODS, MISSING_REQUIRED_CLIENT_CAPABILITY, REMOVED_METHODS, UNBRIDGED_METHODS } from "./protocol";
import { modernUpstreamClient } from "./upstream-client";
import { withoutEnvelope } from "./upstream-request";
import { atLeast, isLogLevel } from "../../storage/client-log-levels";

/** The client capability each server-to-client request of a 2025 upstream needs. */
const CAPABILITY_OF_SERVER_REQUEST: ReadonlyMap<string, string> = new Map([
  ["sampling/createMessage", "sampling"],
  ["elicitation/create", "elicitation"],
  ["roots/list", "roots"],
]);

/** Name, version and title only: clientInfo is self-reported and goes to upstreams. */
function clientIdentity(info: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ["name", "version", "title"]) if (typeof info[key] === "string") out[key] = info[key];
  return out;
}

/** The client's own `Mcp-Param-*` headers: 2026-07-28 upstreams get them as they came (intermediaries forward them). */
function paramHeadersOf(headers: Headers): { paramHeaders?: Record<string, string> } {
  const found: Record<string, string> = {};
  for (const [name, value] of headers) if (name.startsWith("mcp-param-")) found[name] = value;
  return Object.keys(found).length > 0 ? { paramHeaders: found } : {};
}

async function contextOf(
  where: EndpointRequest,
  envelope: Envelope,
  signal: AbortSignal,
): Promise<Omit<CallContext, "emit" | "record">> {
  const clientInfo = clientIdentity(envelope.clientInfo);
  const { caller } = where;
  const identity: Identity = {
    principal: caller.principal,
    ...(caller.email !== undefined ? { email: caller.email } : {}),
    roles: caller.roles,
    authMethod: caller.method,
    ...(caller.token !== undefined ? { token: caller.token } : {}),
    protocolVersion: envelope.protocolVersion,
    era: "modern",
    clientCapabilities: envelope.clientCapabilities,
    clientInfo,
    ...(isLogLevel(envelope.logLevel) ? { logLevel: envelope.logLevel } : {}),
  };
  return {
    identity,
    grant: where.grants.once(where.services.kv, caller.roles, where.services.config.documentCacheTtlMs),
    route: routeFor(where.route, where.upstreams, requestOrigin(where.request.url), where.catalog, where.server),
    services: where.services,
    upstreamClient: await modernUpstreamClient({
      principal: caller.principal,
      route: where.route,
      clientCapabilities: envelope.clientCapabilities,
      clientInfo,
      bridging: where.services.bridgedCalls !== undefined,
    }),
    ...paramHeadersOf(where.request.headers),
    signal,
    // Closing the response stream is this revision's cancellation (basic/patterns/cancellation).
    cancelsOnClose: true,
    waitUntil: where.waitUntil,
  };
}

/** The error a modern client gets when an upstream asked it something mid-call. */
function unbridgedServerRequest(method: string, capabilities: JsonObject): GatewayError {
  const capability = CAPABILITY_OF_SERVER_REQUEST.get(method);
  if (capability && !isObject(capabilities[capability])) {
    return new GatewayError(
      400,
      MISSING_REQUIRED_CLIENT_CAPABILITY,
      `Missing required client capability: the upstream sent ${method}, which needs "${capability}"`,
      {
        requiredCapabilities: { [capability]: {} },
      },
    );
  }
  return new GatewayError(
    200,
    INTERNAL_ERROR,
    `The upstream sent ${method} during this call, which the gateway could not bridge to a 2026-07-28 client (it bridges them only for tools/call, prompts/get and resources/read, with the BRIDGED_CALLS Durable Object binding configured), so the call was ended`,
  );
}

/**
 * The HTTP status 2026-07-28 gives an upstream's error answer: 404 for "method not found",
 * 400 for a missing client capability (basic/index); undefined for every other answer.
 */
const ERROR_STATUSES: ReadonlyMap<number, number> = new Map([
  [METHOD_NOT_FOUND, 404],
  [MISSING_REQUIRED_CLIENT_CAPABILITY, 400],
]);

/** The error answer at `error` (the answer's `error` member) with its HTTP status, by its code; or undefined. */
function statusedError(text: string, error: Span, id: JsonRpcRequest["id"]): GatewayError | undefined {
  const detail = parseSpan(text, error);
  if (!isObject(detail) || typeof detail["code"] !== "number" || typeof detail["message"] !== "string")
    return undefined;
  const status = ERROR_STATUSES.get(detail["code"]);
  return status === undefined
    ? undefined
    : new GatewayError(status, detail["code"], detail["message"], detail["data"], id);
}

/**
 * A multi-round-trip retry: a request carrying the `requestState` of an earlier answer
 * (basic/patterns/mrtr). `inputResponses` alone, with no state, answer nothing the server
 * asked (they are ignored), so such a request is a first one.
 */
function isRetry(message: JsonRpcRequest): boolean {
  return message.params?.["requestState"] !== undefined;
}

/** What was read of a notification the relay passes on as bytes: its method and level, as the text would have them. */
function headOf(notification: NotificationBytes): JsonRpcNotification {
  return {
    jsonrpc: "2.0",
    method: notification.method,
    ...(notification.level !== undefined ? { params: { level: notification.level } } : {}),
  };
}

/** Runs one modern request through the pipeline, answering at the client's pace (JSON, or SSE once something goes first). */
async function relayed(where: EndpointRequest, envelope: Envelope): Promise<Response> {
  const abort = new AbortController();
  where.signal?.addEventListener("abort", () => abort.abort(), { once: true });
  const ctx = await contextOf(where, envelope, abort.signal);
  const wire = withoutEnvelope(envelope.wire);
  return replyTo(
    [
      {
        id: wire.message.id,
        run: async (clientEmit: Emit) => {
          let asked: string | undefined;
          const emit = async (outgoing: OutgoingMessage): Promise<void> => {
            const message = typeof outgoing === "string" ? readUpstreamMessage(outgoing)?.message : headOf(outgoing);
            if (message && "method" in message && "id" in message) {
              asked ??= message.method;
              // Told at once, so the upstream ends the call instead of waiting for an answer no one will send.
              const answer = JSON.stringify({
                jsonrpc: "2.0",
                id: message.id,
                error: {
                  code: METHOD_NOT_FOUND,
                  message: `The gateway's client cannot answer ${message.method} (not bridged to 2026-07-28 clients)`,
                },
              });
              await where.pipeline(
                { ...ctx, emit: () => {}, record: newCallRecord() },
                { kind: "response", wire: { text: answer, message: JSON.parse(answer) as JsonRpcResponse } },
              );
              return;
            }
            // Log messages only for a request that asked for them, at or above its level (basic/index, logLevel).
            if (message && "method" in message && message.method === "notifications/message") {
              const level = message.params?.["level"];
              if (!isLogLevel(envelope.logLevel) || (isLogLevel(level) && !atLeast(level, envelope.logLevel))) return;
            }
            await clientEmit(outgoing);
          };
          let answer: Answer;
          try {
            answer = (await where.pipeline({ ...ctx, emit, record: newCallRecord() }, { kind: "request", wire }))!;
          } catch (error) {
            // A typed failure is written for this era (a method the gateway does not know: HTTP 404).
            throw error instanceof GatewayFailure ? error.inEra("modern") : error;
          }
          if (asked) throw unbridgedServerRequest(asked, envelope.clientCapabilities).withId(wire.message.id);
          // An answer no layer read (a success, complete or saying nothing: core/response-bytes.ts) is completed in its bytes.
          const completed =
            answer.held && !CACHEABLE_METHODS.has(wire.message.method)
              ? answer.held.complete
                ? answer.held
                : answer.held.withResultMember(COMPLETE_MEMBER)
              : undefined;
          if (completed) return completed;
          const text = answer.text;
          // One read of the answer's members serves both the error's status and the result's completion.
          const top = members(text, rootSpan(text));
          const error = top.findLast((m) => m.key === "error")?.value;
          const refused = error && statusedError(text, error, wire.message.id);
          if (refused) throw refused;
          // server/discover went through the pipeline like any request (overrides, authorization, audit); it is answered in the revision's own shape.
          const result = top.findLast((m) => m.key === "result")?.value;
          return wire.message.method === "server/discover"
            ? discoverAnswer(text, ctx.identity)
            : completeResult(text, wire.message.method, ctx.identity, isRetry(wire.message), result);
        },
      },
    ],
    false,
    () => abort.abort(),
  );
}

/**
 * A modern POST (see classify.ts): one request, or a notification (accepted and not
 * relayed: 2026-07-28 defines none a client sends over HTTP).
 *
 * @example
 * const modern = classifyPost(request.headers, checkNesting(text));
 * if (modern) return handleModernPost(where, modern);
 */
export async function handleModernPost(where: EndpointRequest, modern: ModernBody): Promise<Response> {
  if (modern.body === undefined) throw new GatewayError(400, PARSE_ERROR, "Parse error: the body is not valid JSON");
  if (Array.isArray(modern.body))
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      "Invalid Request: 2026-07-28 has no JSON-RPC batches; send one message per POST",
    );
  const message = validateClientMessage(modern.body);
  // Every message kind, before anything reads it (a notification is not relayed, but is refused the same).
  checkDuplicateKeys(modern, "id" in message ? message.id : null);
  const kind = kindOf(message);
  if (kind === "response")
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      "Invalid Request: a 2026-07-28 client sends no JSON-RPC responses (input goes in a retry's inputResponses)",
    );
  if (kind === "notification") return new Response(null, { status: 202 });
  const wire: WireMessage<JsonRpcRequest> = { text: modern.text, message: message as JsonRpcRequest };
  const { id, method } = wire.message;
  const envelope = checkEnvelope(where.request.headers, wire);
  if (!envelope.ok) throw envelopeError(envelope);
  const gone = REMOVED_METHODS.get(method) ?? UNBRIDGED_METHODS.get(method);
  if (gone) throw new GatewayError(404, METHOD_NOT_FOUND, `Method not found: ${method}: ${gone}`, undefined, id);
  return relayed(where, envelope.value);
}
