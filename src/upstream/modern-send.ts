/**
 * One request to a 2026-07-28 upstream: no session and no handshake. It goes with the
 * `_meta` envelope and the mirrored headers (modern-wire.ts). What is not sent at all
 * (notifications, answers, `ping`, `logging/setLevel`) is the transport's decision
 * (modern-transport.ts). What the upstream declared (`server/discover`) stands in for the
 * 2025 handshake, so an `initialize` from a 2025 client is answered from it
 * (`initializeResultOf`).
 *
 * `Mcp-Param-*` headers come from the tool's `x-mcp-header` annotations, read from the
 * upstream's `tools/list` once per isolate and read again when the upstream says the
 * headers do not match (-32020) — at most once per ANNOTATION_REFRESH_MS, one read shared
 * by every caller and run without any caller's signal, a failed read kept as no answer,
 * not as an empty one — or from a modern client's own headers when it sent them.
 */
import { fail, ok, type Result } from "../core/errors";
import { GATEWAY_INFO } from "../core/gateway-info";
import { isObject, type JsonObject, type JsonRpcRequest } from "../core/jsonrpc";
import { readUpstreamMessage } from "../core/validate-message";
import { loadLogLevel } from "../storage/client-log-levels";
import type { UpstreamConfig } from "../config/upstreams";
import { exchange, type UpstreamExchange, type UpstreamReply } from "./client";
import { downgradeFor2025, isModernVersion } from "./downgrade";
import type { UpstreamFailure } from "./failures";
import { mirroredHeaders, MODERN_UPSTREAM_VERSION, paramHeaders, withEnvelope, type ParamHeader } from "./modern-wire";
import type { PoolRequest, UpstreamSession } from "./upstream-session";
import { META_KEYS } from "../core/revisions";
import { methodFacts } from "../core/methods";
import { ByteWire } from "./byte-answer";

const SERVER_INFO_KEY = META_KEYS.serverInfo;
const HEADER_MISMATCH = -32020;
/** Codes a 2026-07-28 server answers HTTP 400 with: JSON-RPC's own and the revision's. */
const MODERN_400_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022]);
const ANNOTATION_CACHE_UPSTREAMS = 1_000;
const MAX_TOOL_PAGES = 20;
/** The least time between two reads of one upstream's tool annotations (a -32020 may ask for one on every call). */
export const ANNOTATION_REFRESH_MS = 10_000;

/** What a modern exchange needs of the pool's request. */
export type ModernSendRequest = PoolRequest;

/**
 * The session-shaped record of a modern upstream: no session id, the modern version, and
 * never `subscribe` (2026-07-28 removed resources/subscribe; its listen stands in for it).
 *
 * @example
 * modernSession({ capabilities: { tools: {} } }); // { sessionId: null, protocolVersion: STATELESS_REVISION, capabilities: ["tools"] }
 */
export function modernSession(discover: JsonObject): UpstreamSession {
  const capabilities = isObject(discover["capabilities"]) ? discover["capabilities"] : {};
  return { sessionId: null, protocolVersion: MODERN_UPSTREAM_VERSION, capabilities: Object.keys(capabilities) };
}

/** `capabilities` without `resources.subscribe`: a 2026-07-28 upstream answers resources/subscribe with -32601. */
function withoutSubscribe(capabilities: JsonObject): JsonObject {
  const resources = capabilities["resources"];
  if (!isObject(resources) || !("subscribe" in resources)) return capabilities;
  const { subscribe: _subscribe, ...rest } = resources;
  return { ...capabilities, resources: rest };
}

/**
 * What a 2025 client's `initialize` learns of a modern upstream: its discovered
 * capabilities (less resource subscriptions, which 2026-07-28 removed), server info (from
 * `_meta`) and instructions.
 *
 * @example
 * initializeResultOf("modern", { supportedVersions: [STATELESS_REVISION], capabilities: { tools: {} } });
 */
export function initializeResultOf(upstream: string, discover: JsonObject): JsonObject {
  const meta = discover["_meta"];
  const serverInfo =
    isObject(meta) && isObject(meta[SERVER_INFO_KEY]) ? meta[SERVER_INFO_KEY] : { name: upstream, version: "unknown" };
  return {
    protocolVersion: MODERN_UPSTREAM_VERSION,
    capabilities: isObject(discover["capabilities"]) ? withoutSubscribe(discover["capabilities"]) : {},
    serverInfo,
    ...(typeof discover["instructions"] === "string" ? { instructions: discover["instructions"] } : {}),
  };
}

type ToolHeaders = ReadonlyMap<string, readonly ParamHeader[]>;
/** One read of a tool list's annotations: undefined when it failed. */
type AnnotationRead = { readonly headers: Promise<ToolHeaders | undefined>; readonly at: number };
/** Per upstream (name and address): each tool's mirrored parameters (a cache of its tools/list). */
const annotations = new Map<string, AnnotationRead>();
const NO_HEADERS: ToolHeaders = new Map();

async function readAnnotations(upstream: UpstreamConfig, request: ModernSendRequest): Promise<ToolHeaders | undefined> {
  const found = new Map<string, readonly ParamHeader[]>();
  let cursor: unknown;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: "gw-annotations",
      method: "tools/list",
      ...(typeof cursor === "string" ? { params: { cursor } } : {}),
    });
    const reply = await post(
      upstream,
      withEnvelope(text, envelopeClient(request)),
      { "mcp-method": "tools/list" },
      request,
    );
    if (!reply.ok) return page === 0 ? undefined : found;
    let result: unknown;
    for await (const wire of reply.value.messages) if ("result" in wire.message) result = wire.message.result;
    const tools = isObject(result) && Array.isArray(result["tools"]) ? result["tools"] : [];
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool["name"] !== "string") continue;
      const headers = paramHeaders(tool["inputSchema"]);
      if (headers.length > 0) found.set(tool["name"], headers);
    }
    cursor = isObject(result) ? result["nextCursor"] : undefined;
    if (typeof cursor !== "string") break;
  }
  return found;
}

/**
 * The tools' annotations: cached, or read now when none were read (or the last read
 * failed) or `fresh` is asked, and the last read is older than ANNOTATION_REFRESH_MS.
 * `read` tells whether this call read them.
 */
async function toolAnnotations(
  upstream: UpstreamConfig,
  request: ModernSendRequest,
  fresh: boolean,
): Promise<{ headers: ToolHeaders; read: boolean }> {
  const key = `${upstream.name}\u0000${upstream.service ?? ""}\u0000${upstream.url}`;
  const cached = annotations.get(key);
  const now = Date.now();
  if (cached && now - cached.at < ANNOTATION_REFRESH_MS)
    return { headers: (await cached.headers) ?? NO_HEADERS, read: false };
  const known = cached ? await cached.headers : undefined;
  if (cached && known && !fresh) return { headers: known, read: false };
  // Shared by every caller of this isolate: no caller's going away cuts it short.
  const { signal: _signal, ...unbound } = request;
  // A read that fails keeps what was known: callers go on mirroring the last annotations read.
  const headers = readAnnotations(upstream, unbound).then(
    (read) => read ?? known,
    () => known,
  );
  if (annotations.size >= ANNOTATION_CACHE_UPSTREAMS) annotations.clear();
  annotations.set(key, { headers, at: now });
  return { headers: (await headers) ?? known ?? NO_HEADERS, read: true };
}

function envelopeClient(request: ModernSendRequest): { clientCapabilities: JsonObject; clientInfo: JsonObject } {
  const info = request.session.clientInfo;
  return {
    clientCapabilities: request.session.clientCapabilities,
    clientInfo: isObject(info) && typeof info["name"] === "string" ? info : GATEWAY_INFO,
  };
}

type Options = Pick<UpstreamExchange, "large" | "notifications" | "answerWithinTimeout" | "traceparent">;

function post(
  upstream: UpstreamConfig,
  body: string,
  headers: Record<string, string>,
  request: ModernSendRequest,
  options: Options = { answerWithinTimeout: true },
): Promise<Result<UpstreamReply, UpstreamFailure>> {
  return exchange({
    upstream,
    env: request.env,
    ...(request.identity ? { identity: request.identity } : {}),
    method: "POST",
    body,
    ...(request.signal ? { signal: request.signal } : {}),
    extraHeaders: { "mcp-protocol-version": MODERN_UPSTREAM_VERSION, ...headers },
    rpcErrorsInBody: true,
    ...options,
  });
}

/**
 * Reads an HTTP 400 answer: a -32020 (the upstream's mirrored headers disagree with ours),
 * a refusal of the modern request itself (a 2025 server's own error, such as "no
 * session": not a JSON-RPC or 2026-07-28 code), or an answer to relay.
 */
async function readRefusal(
  reply: UpstreamReply,
): Promise<{ verdict: "mismatch" | "refused" | "answer"; replay: UpstreamReply }> {
  if (reply.mode !== "json" || reply.status !== 400) return { verdict: "answer", replay: reply };
  const held = [];
  for await (const wire of reply.messages) held.push(wire);
  const first = held[0]?.message;
  const code = first !== undefined && "error" in first ? first.error.code : undefined;
  const verdict =
    code === HEADER_MISMATCH ? "mismatch" : code !== undefined && !MODERN_400_CODES.has(code) ? "refused" : "answer";
  return {
    verdict,
    replay: {
      ...reply,
      messages: (async function* () {
        yield* held;
      })(),
    },
  };
}

/** A reply whose response messages a 2025 client can read (downgrade.ts), everything else as it came. */
function forClient(reply: UpstreamReply, method: string, request: ModernSendRequest): UpstreamReply {
  if (request.clientVersion === undefined || isModernVersion(request.clientVersion)) return reply;
  const source = reply.messages;
  const messages = (async function* () {
    for await (const wire of source) {
      // A tool result kept as bytes (byte-answer.ts) needs nothing taken out unless its structuredContent is no object.
      if (
        wire instanceof ByteWire &&
        !(methodFacts(method).downgraded === "tool list" || wire.bytes.structuredNotObject)
      ) {
        yield wire;
        continue;
      }
      if (!("id" in wire.message) || "method" in wire.message) {
        yield wire;
        continue;
      }
      const text = downgradeFor2025(wire.text, method);
      yield text === wire.text ? wire : (readUpstreamMessage(text) ?? wire);
    }
  })();
  return { ...reply, messages };
}

/**
 * Sends one request (`text`, read as `message`) to a modern upstream, as the revision wants it.
 *
 * @example
 * const reply = await sendModern(upstream, text, message, request); // message: the request `text` holds
 */
export async function sendModern(
  upstream: UpstreamConfig,
  text: string,
  message: JsonRpcRequest,
  request: ModernSendRequest,
  options: Options = { answerWithinTimeout: true },
): Promise<Result<UpstreamReply, UpstreamFailure>> {
  const { method, params } = message;
  // A 2025 client's level (kept for its session by the client-logging middleware) goes in each request's envelope.
  const { kv } = request;
  const legacyClient = request.clientVersion !== undefined && !isModernVersion(request.clientVersion);
  const logLevel = legacyClient
    ? kv
      ? await loadLogLevel(kv, request.session.sid)
      : null
    : (request.logLevel ?? null);
  const body = withEnvelope(text, { ...envelopeClient(request), ...(logLevel ? { logLevel } : {}) });
  const own = request.paramHeaders ?? {};
  // A tool's input schema may annotate arguments to mirror as headers.
  const named =
    methodFacts(method).invokes === "tool" && typeof params?.["name"] === "string" ? params["name"] : undefined;
  let annotated: readonly ParamHeader[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    if (named !== undefined && Object.keys(own).length === 0)
      annotated = (await toolAnnotations(upstream, request, false)).headers.get(named) ?? [];
    const reply = await post(upstream, body, mirroredHeaders(method, params, annotated, own), request, options);
    if (!reply.ok) return reply;
    const checked = await readRefusal(reply.value);
    if (checked.verdict === "refused")
      return fail({
        reason: "http-status",
        upstream: upstream.name,
        status: 400,
        detail: "refused a 2026-07-28 request",
      });
    // The tool's schema may have changed since it was read: read it again (unless it was read just now), and retry once.
    if (
      checked.verdict === "mismatch" &&
      named !== undefined &&
      attempt === 0 &&
      Object.keys(own).length === 0 &&
      (await toolAnnotations(upstream, request, true)).read
    )
      continue;
    return ok(forClient(checked.replay, method, request));
  }
  return fail({ reason: "bad-response", upstream: upstream.name, detail: "unreachable" });
}
