/**
 * One HTTP exchange with an upstream MCP server: raw JSON-RPC text out, the upstream's
 * messages back as they arrive (a JSON body or an SSE stream), failures as tagged values.
 *
 * Only headers the gateway chooses go upstream: the client's own headers (its
 * Authorization above all) never leave the gateway.
 */
import { fail, ok, type Result } from "../core/errors";
import { readUpstreamMessage, type WireMessage } from "../core/jsonrpc";
import { readSse } from "../core/sse";
import type { UpstreamConfig } from "./config";

const MAX_ERROR_BODY_CHARS = 300;

export type UpstreamFailure =
  | { reason: "unreachable"; upstream: string; detail: string }
  | { reason: "timeout"; upstream: string; timeoutMs: number }
  | { reason: "http-status"; upstream: string; status: number; detail: string }
  | { reason: "session-expired"; upstream: string }
  | { reason: "bad-response"; upstream: string; detail: string }
  | { reason: "missing-binding"; upstream: string; detail: string };

/** Where an SSE stream can be resumed from: its last event id and the retry delay it asked for. */
export type ResumePoint = { lastEventId?: string; retryMs?: number };

export type UpstreamReply = {
  /** "json" for one JSON body, "sse" for a stream, "accepted" for 202. */
  readonly mode: "json" | "sse" | "accepted";
  /** The session id the upstream assigned (initialize only). */
  readonly sessionId: string | null;
  /** The upstream's messages in arrival order. Ends when the upstream's body ends. */
  readonly messages: AsyncIterable<WireMessage>;
  /** Updated while `messages` is read; lets a cut stream be resumed with Last-Event-ID. */
  readonly resume: ResumePoint;
};

/**
 * Takes a message of at least `minBytes` as a byte stream instead of holding it, and
 * returns the text of the message that stands for it (offload's compact answer).
 */
export type LargeAnswerConsumer = { readonly minBytes: number; readonly take: (body: ReadableStream<Uint8Array>) => Promise<string> };

export type UpstreamExchange = {
  readonly upstream: UpstreamConfig;
  readonly env: Readonly<Record<string, unknown>>;
  readonly method: "POST" | "GET" | "DELETE";
  readonly body?: string;
  readonly sessionId?: string | null;
  /** Omitted on initialize, where the version is being negotiated. */
  readonly protocolVersion?: string;
  /** Aborts the exchange (the client went away, or a fan-out gave up). */
  readonly signal?: AbortSignal;
  /** With GET: resume a cut stream after this event. */
  readonly lastEventId?: string;
  /** Messages longer than `large.minBytes` are not read into memory but handed to `large`. */
  readonly large?: LargeAnswerConsumer;
};

type Fetcher = { fetch: (input: Request | string, init?: RequestInit) => Promise<Response> };

function isFetcher(value: unknown): value is Fetcher {
  return typeof value === "object" && value !== null && typeof (value as Fetcher).fetch === "function";
}

function headersFor(exchange: UpstreamExchange): Result<Headers, UpstreamFailure> {
  const { upstream, env } = exchange;
  const headers = new Headers(upstream.headers);
  if (exchange.method === "POST") {
    headers.set("content-type", "application/json");
    headers.set("accept", "application/json, text/event-stream");
  } else if (exchange.method === "GET") {
    headers.set("accept", "text/event-stream");
  }
  if (exchange.sessionId) headers.set("mcp-session-id", exchange.sessionId);
  if (exchange.protocolVersion) headers.set("mcp-protocol-version", exchange.protocolVersion);
  if (exchange.lastEventId !== undefined) headers.set("last-event-id", exchange.lastEventId);
  if (upstream.credential) {
    const secret = env[upstream.credential.secret];
    if (typeof secret !== "string" || secret === "") {
      return fail({ reason: "missing-binding", upstream: upstream.name, detail: `secret ${upstream.credential.secret} is not set (wrangler secret put ${upstream.credential.secret})` });
    }
    headers.set(upstream.credential.header, upstream.credential.scheme ? `${upstream.credential.scheme} ${secret}` : secret);
  }
  return ok(headers);
}

/**
 * Reads a body up to `limit` bytes. Past the limit, returns a stream of the whole body
 * (what was read, then the rest) instead of holding it.
 */
async function readBounded(body: ReadableStream<Uint8Array>, limit: number): Promise<{ text: string } | { stream: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.length;
    if (length > limit) {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks.splice(0)) controller.enqueue(chunk);
        },
        async pull(controller) {
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      });
      return { stream };
    }
  }
  const all = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return { text: new TextDecoder().decode(all) };
}

async function* jsonMessages(response: Response, upstream: string, large?: LargeAnswerConsumer): AsyncGenerator<WireMessage> {
  let text: string;
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  // A body that says it is small is read the plain way; one that is (or may be) large, chunk by chunk.
  if (large && response.body && !(declared <= large.minBytes)) {
    const read = await readBounded(response.body, large.minBytes);
    text = "stream" in read ? await large.take(read.stream) : read.text;
  } else text = await response.text();
  const message = readUpstreamMessage(text);
  if (message) {
    yield message;
    return;
  }
  // A JSON array answers a batch (2025-03-26); relay each element.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamProtocolError(upstream, `answered with a body that is not JSON: ${text.slice(0, MAX_ERROR_BODY_CHARS)}`);
  }
  if (!Array.isArray(parsed)) throw new UpstreamProtocolError(upstream, "answered with JSON that is not a JSON-RPC message");
  for (const element of parsed) {
    const wire = readUpstreamMessage(JSON.stringify(element));
    if (wire) yield wire;
  }
}

async function* sseMessages(response: Response, upstream: string, resume: ResumePoint, large?: LargeAnswerConsumer): AsyncGenerator<WireMessage> {
  if (!response.body) return;
  for await (const event of readSse(response.body, large?.minBytes)) {
    if (event.id !== undefined) resume.lastEventId = event.id;
    if (event.retry !== undefined) resume.retryMs = event.retry;
    // Priming events (an id and a retry delay, no data) only mark a resume point.
    if (event.event !== "message" || (event.data === "" && !event.large)) continue;
    const message = readUpstreamMessage(event.large ? await large!.take(event.large) : event.data);
    if (!message) throw new UpstreamProtocolError(upstream, `sent an SSE event that is not a JSON-RPC message: ${event.data.slice(0, MAX_ERROR_BODY_CHARS)}`);
    yield message;
  }
}

/** An upstream broke the protocol mid-stream; surfaces as a `bad-response` failure. */
export class UpstreamProtocolError extends Error {
  override readonly name = "UpstreamProtocolError";
  constructor(
    readonly upstream: string,
    detail: string,
  ) {
    super(`upstream "${upstream}" ${detail}`);
  }
}

/** Sends one message (or opens the GET stream, or ends the session) at an upstream. */
export async function exchange(request: UpstreamExchange): Promise<Result<UpstreamReply, UpstreamFailure>> {
  const { upstream } = request;
  const headers = headersFor(request);
  if (!headers.ok) return headers;
  let fetcher: Fetcher | undefined;
  if (upstream.service) {
    const binding = request.env[upstream.service];
    if (!isFetcher(binding)) return fail({ reason: "missing-binding", upstream: upstream.name, detail: `service binding ${upstream.service} is not configured in wrangler.toml` });
    fetcher = binding;
  }

  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), upstream.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
  // Redirects are not followed: they would carry credentials and the body to another host.
  const init: RequestInit = { method: request.method, headers: headers.value, signal, redirect: "manual" };
  if (request.body !== undefined) init.body = request.body;
  let response: Response;
  try {
    response = await (fetcher ? fetcher.fetch(upstream.url, init) : fetch(upstream.url, init));
  } catch (error) {
    if (timeout.signal.aborted) return fail({ reason: "timeout", upstream: upstream.name, timeoutMs: upstream.timeoutMs });
    return fail({ reason: "unreachable", upstream: upstream.name, detail: error instanceof Error ? error.message : String(error) });
  } finally {
    clearTimeout(timer);
  }

  const sessionId = response.headers.get("mcp-session-id");
  if (response.status === 404 && request.sessionId) {
    await response.body?.cancel();
    return fail({ reason: "session-expired", upstream: upstream.name });
  }
  if (response.status === 202 || (response.ok && request.method === "DELETE")) {
    await response.body?.cancel();
    return ok({ mode: "accepted", sessionId, messages: (async function* () {})(), resume: {} });
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    return fail({ reason: "http-status", upstream: upstream.name, status: response.status, detail: `redirects to ${response.headers.get("location") ?? "elsewhere"}; configure the final URL` });
  }
  if (!response.ok) {
    const detail = (await response.text().catch(() => "")).slice(0, MAX_ERROR_BODY_CHARS);
    return fail({ reason: "http-status", upstream: upstream.name, status: response.status, detail });
  }
  const contentType = response.headers.get("content-type") ?? "";
  const resume: ResumePoint = {};
  if (contentType.includes("text/event-stream")) return ok({ mode: "sse", sessionId, messages: sseMessages(response, upstream.name, resume, request.large), resume });
  if (contentType.includes("json")) return ok({ mode: "json", sessionId, messages: jsonMessages(response, upstream.name, request.large), resume });
  await response.body?.cancel();
  return fail({ reason: "bad-response", upstream: upstream.name, detail: `answered with content-type "${contentType}", expected JSON or an SSE stream` });
}
