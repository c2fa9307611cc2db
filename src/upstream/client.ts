/**
 * One HTTP exchange with an upstream MCP server: raw JSON-RPC text out, the upstream's
 * messages back as they arrive (a JSON body or an SSE stream), failures as tagged values.
 *
 * Only headers the gateway chooses go upstream: the client's own headers (its
 * Authorization above all) never leave the gateway.
 */
import type { CallerCredentials } from "./upstream-session";
import { fail, ok, type Result } from "../core/errors";
import type { JsonRpcId, WireMessage } from "../core/jsonrpc";
import { readUpstreamMessage } from "../core/validate-message";
import type { UpstreamConfig } from "../config/upstreams";
import type { UpstreamAuth } from "../config/upstream-auth";
import { redactSecretsInJson } from "../config/secrets";
import { parseChallenge } from "./oauth/discovery";
import { AnswerDeadline, guardBody, type BodyGuard } from "./deadlines";
import type { UpstreamFailure } from "./failures";
import { isSmallAnswer, smallAnswerMessages } from "./small-answer";
import {
  deadlineAware,
  declaredLength,
  errorBodyStart,
  MAX_ERROR_ANSWER_BYTES,
  jsonMessages,
  logUpstreamText,
  sseMessages,
  type LargeAnswerConsumer,
  type LargeAnswerTaker,
  type LogContext,
  type NotificationPass,
  type ResumePoint,
} from "./reply-body";

export type { LargeAnswerConsumer, LargeAnswerTaker, NotificationPass, ResumePoint, UpstreamFailure };

/** Reasons for the statuses an upstream commonly refuses with; the body itself only goes to the log. */
const STATUS_REASONS: Readonly<Record<number, string>> = {
  400: "bad request",
  401: "unauthorized: check the upstream's credential",
  403: "forbidden: check the upstream's credential",
  404: "not found: check the upstream's URL",
  405: "method not allowed: check the upstream's URL",
  406: "not acceptable",
  408: "request timeout",
  413: "request too large",
  415: "unsupported media type",
  429: "too many requests",
  500: "internal server error",
  502: "bad gateway",
  503: "service unavailable",
  504: "gateway timeout",
};

export type UpstreamReply = {
  /** "json" for one JSON body, "sse" for a stream, "accepted" for 202. */
  readonly mode: "json" | "sse" | "accepted";
  /** The session id the upstream assigned (initialize only). */
  readonly sessionId: string | null;
  /** The upstream's messages in arrival order. Ends when the upstream's body ends. */
  readonly messages: AsyncIterable<WireMessage>;
  /** Updated while `messages` is read; lets a cut stream be resumed with Last-Event-ID. */
  readonly resume: ResumePoint;
  /** The HTTP status of the upstream's answer. */
  readonly status: number;
  /** Bytes of the body read so far (updated while `messages` is read). */
  readonly received: { readonly bytes: number };
};

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
  /**
   * No layer reads the answer to request `flowId` (context/answer.ts, `Answer.ofFlow`): a
   * large plain success response to it flows to the client as it arrives (core/response-flow.ts).
   */
  readonly flowId?: JsonRpcId;
  /** Notifications of an SSE answer offered as the upstream's bytes (reply-body.ts). */
  readonly notifications?: NotificationPass;
  /**
   * The whole answer, even a stream, must arrive within the upstream's `timeoutMs`
   * (initialize, lists: answers never long in coming). Otherwise only a JSON body has to;
   * a stream answering a request may run as long as it is never silent for `idleTimeoutMs`.
   */
  readonly answerWithinTimeout?: boolean;
  /** The W3C traceparent of the gateway's span for this call (sent as the `traceparent` header). */
  readonly traceparent?: string;
  /** Mints the identity assertion for an upstream that opted in (upstream/identity-assertion.ts); absent where no caller is at hand. */
  readonly identity?: CallerCredentials;
  /**
   * A stream that may rightly be silent for hours (a 2026-07-28 `subscriptions/listen`,
   * like the 2025 GET stream): no idle deadline. Its caller bounds the wait for its start.
   */
  readonly quiet?: boolean;
  /** More headers for this exchange (the 2026-07-28 `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). */
  readonly extraHeaders?: Readonly<Record<string, string>>;
  /**
   * A 2026-07-28 upstream answers protocol errors with HTTP 400 or 404 and a JSON-RPC
   * error body: with this set, such a body is the answer (a JSON reply), not a failure.
   */
  readonly rpcErrorsInBody?: boolean;
};

/**
 * An upstream the caller signs in to refused the caller's token: 401 (the token is
 * forgotten, the caller asked to sign in again) or 403 `insufficient_scope` (asked to sign
 * in with the wider scope the challenge names: step-up). Another 403 is an ordinary refusal.
 * `unsigned` (why the caller has no token) when the request went without one: a 401 then
 * is the upstream's first challenge, whose `resource_metadata` and `scope` the sign-in uses.
 */
async function refusedToken(
  upstream: UpstreamConfig,
  response: Response,
  identity: CallerCredentials | undefined,
  unsigned: string | undefined,
): Promise<Result<never, UpstreamFailure> | undefined> {
  if (upstream.auth?.type === "tokenExchange") {
    if (response.status !== 401) return undefined;
    // An exchanged token refused: forgotten; the next call exchanges afresh. No sign-in helps.
    await response.body?.cancel();
    await identity?.rejected?.(upstream);
    const detail = `the upstream refused the exchanged token (HTTP ${response.status})`;
    return fail({ reason: "credential-unavailable", upstream: upstream.name, detail });
  }
  const challenge = await parseChallenge(response.headers.get("www-authenticate"));
  if (response.status === 403 && challenge.error !== "insufficient_scope" && unsigned === undefined) return undefined;
  await response.body?.cancel();
  if (response.status === 401 && unsigned === undefined) await identity?.rejected?.(upstream);
  const wider = `the upstream needs a wider scope${challenge.scope ? ` (${challenge.scope})` : ""}`;
  const detail = unsigned ?? (response.status === 401 ? "the upstream refused the token" : wider);
  return fail({ reason: "sign-in-required", upstream: upstream.name, detail, challenge });
}

/** The header carrying a caller's own credential: a pasted key where `userKey` names it, else a bearer token. */
function userCredentialHeader(auth: UpstreamAuth, credential: string): [string, string] {
  if (auth.type !== "userKey") return ["authorization", `Bearer ${credential}`];
  return [auth.header, auth.scheme === "" ? credential : `${auth.scheme} ${credential}`];
}

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
  if (exchange.traceparent !== undefined) headers.set("traceparent", exchange.traceparent);
  for (const [name, value] of Object.entries(exchange.extraHeaders ?? {})) headers.set(name, value);
  if (upstream.credential) {
    const secret = upstream.credential.value ?? env[upstream.credential.secret];
    if (typeof secret !== "string" || secret === "") {
      return fail({
        reason: "missing-binding",
        upstream: upstream.name,
        detail: `secret ${upstream.credential.secret} is not set (wrangler secret put ${upstream.credential.secret})`,
      });
    }
    headers.set(
      upstream.credential.header,
      upstream.credential.scheme ? `${upstream.credential.scheme} ${secret}` : secret,
    );
  }
  return ok(headers);
}

/** An upstream's JSON-RPC error, read whole from a refusal's body, as the exchange's answer. */
function errorReply(sessionId: string | null, wire: WireMessage, status: number): UpstreamReply {
  const messages = (async function* (): AsyncGenerator<WireMessage> {
    yield wire;
  })();
  return { mode: "json", sessionId, messages, resume: {}, status, received: { bytes: wire.text.length } };
}

/**
 * `text` (a refusal's body) when it is a JSON-RPC error response to the request `sent`:
 * one with that request's id. An error without an id (`null`) is about no request in
 * particular, as a refused session's is.
 */
function errorAnswering(sent: string | undefined, text: string): WireMessage | undefined {
  const wire = readUpstreamMessage(text);
  if (!wire || !("error" in wire.message) || sent === undefined) return undefined;
  const request = readUpstreamMessage(sent);
  if (!request || !("method" in request.message) || !("id" in request.message)) return undefined;
  return wire.message.id === request.message.id ? wire : undefined;
}

/** Sends one message (or opens the GET stream, or ends the session) at an upstream. */
export async function exchange(request: UpstreamExchange): Promise<Result<UpstreamReply, UpstreamFailure>> {
  const { upstream } = request;
  const headers = headersFor(request);
  if (!headers.ok) return headers;
  /** Why the caller has no token for an upstream it signs in to, when the request goes without one. */
  let unsigned: string | undefined;
  if (upstream.identity && request.identity) {
    try {
      headers.value.set(upstream.identity.header, await request.identity.assertion(upstream.name));
    } catch (error) {
      return fail({ reason: "missing-binding", upstream: upstream.name, detail: (error as Error).message });
    }
  }
  if (upstream.auth) {
    // Only the caller's own credential, never another's, never the client's (upstream/oauth/,
    // features/user-credentials/).
    const token = request.identity?.userToken ? await request.identity.userToken(upstream) : undefined;
    if (!token) {
      const detail = "no caller to sign in";
      return fail({ reason: "sign-in-required", upstream: upstream.name, detail, challenge: {} });
    }
    if (!token.ok && token.reason === "credential-unavailable")
      return fail({ reason: "credential-unavailable", upstream: upstream.name, detail: token.detail });
    // Without a key there is nothing to send: the user is asked for one.
    if (!token.ok && upstream.auth.type === "userKey")
      return fail({ reason: "sign-in-required", upstream: upstream.name, detail: token.detail, challenge: {} });
    // A caller without a token sends the request as any MCP client does first: the upstream's
    // 401 names its metadata and the scope to ask for (its WWW-Authenticate), read below.
    if (token.ok) headers.value.set(...userCredentialHeader(upstream.auth, token.value));
    else unsigned = token.detail;
  }
  let fetcher: Fetcher | undefined;
  if (upstream.service) {
    const binding = request.env[upstream.service];
    if (!isFetcher(binding))
      return fail({
        reason: "missing-binding",
        upstream: upstream.name,
        detail: `service binding ${upstream.service} is not configured in wrangler.toml`,
      });
    fetcher = binding;
  }

  const timeout = new AbortController();
  const deadline = new AnswerDeadline(upstream.timeoutMs, () => timeout.abort());
  const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
  // Redirects are not followed: they would carry credentials and the body to another host.
  const init: RequestInit = { method: request.method, headers: headers.value, signal, redirect: "manual" };
  if (request.body !== undefined) init.body = request.body;
  let response: Response;
  try {
    response = await (fetcher ? fetcher.fetch(upstream.url, init) : fetch(upstream.url, init));
  } catch (error) {
    deadline.disarm();
    if (deadline.fired)
      return fail({ reason: "timeout", upstream: upstream.name, timeoutMs: upstream.timeoutMs, waited: "headers" });
    return fail({
      reason: "unreachable",
      upstream: upstream.name,
      detail: error instanceof Error ? error.message : String(error),
    });
  }

  const where: LogContext = { upstream: upstream.name, env: request.env };
  if (upstream.auth && (response.status === 401 || response.status === 403)) {
    const refused = await refusedToken(upstream, response, request.identity, unsigned);
    if (refused) {
      deadline.disarm();
      return refused;
    }
  }
  const sessionId = response.headers.get("mcp-session-id");
  const contentType = response.headers.get("content-type") ?? "";
  const stream = response.ok && contentType.includes("text/event-stream");
  // The answer deadline stays on a JSON body (and on every answer that must come whole);
  // a stream answering a request gets the idle deadline instead. The GET stream of
  // server messages may be quiet for hours: it has neither.
  // A quiet exchange (a listen) may be answered as newline-delimited JSON that stays open just the same.
  if ((stream || request.quiet) && !request.answerWithinTimeout) deadline.disarm();
  // The optional member last (shell/app.ts, `endpoint`).
  const guard: BodyGuard = {
    upstream: upstream.name,
    deadline,
    broke: {},
    received: { bytes: 0 },
    ...((request.method === "GET" && request.lastEventId === undefined) || request.quiet
      ? {}
      : { idleMs: upstream.idleTimeoutMs }),
  };
  const { status } = response;
  const resume: ResumePoint = {};
  if (
    response.body &&
    response.ok &&
    status !== 202 &&
    request.method === "POST" &&
    !stream &&
    !request.quiet &&
    contentType.includes("json")
  ) {
    // A service binding's body is the other Worker's stream, not framed by any length it declares.
    const declared = upstream.service ? Number.NaN : declaredLength(response);
    if (
      isSmallAnswer({
        declared,
        largeMinBytes: request.large?.minBytes,
        timeoutMs: upstream.timeoutMs,
        idleMs: guard.idleMs,
      })
    ) {
      return ok({
        mode: "json",
        sessionId,
        messages: smallAnswerMessages(response, response.body, declared, guard, where, request.large, request.flowId),
        resume,
        status,
        received: guard.received,
      });
    }
  }
  const body = response.body ? guardBody(response.body, guard) : undefined;
  if (!body) deadline.disarm();
  const discard = async () => {
    deadline.disarm();
    await body?.cancel();
  };

  // A refused session id: 404 as the spec says, or 400 as some servers answer (server-everything).
  // A 400 whose body is a JSON-RPC error to the request sent is about the request, not the
  // session: it is the answer, and the session is kept.
  if ((response.status === 404 || response.status === 400) && request.sessionId) {
    if (response.status === 400 && body) {
      // The error is relayed: it may echo anything, a credential included.
      const text = redactSecretsInJson(await errorBodyStart(body, MAX_ERROR_ANSWER_BYTES), request.env);
      deadline.disarm();
      const refusal = errorAnswering(request.body, text);
      if (refusal) return ok(errorReply(sessionId, refusal, response.status));
      logUpstreamText(where, "answered HTTP 400 to a session id (taken as a forgotten session)", text);
    } else await discard();
    deadline.disarm();
    return fail({ reason: "session-expired", upstream: upstream.name, status: response.status });
  }
  if (response.status === 202 || (response.ok && request.method === "DELETE")) {
    await discard();
    return ok({
      mode: "accepted",
      sessionId,
      messages: (async function* () {})(),
      resume: {},
      status: response.status,
      received: guard.received,
    });
  }
  if (response.status >= 300 && response.status < 400) {
    await discard();
    return fail({
      reason: "http-status",
      upstream: upstream.name,
      status: response.status,
      detail: `redirects to ${response.headers.get("location") ?? "elsewhere"}; configure the final URL`,
    });
  }
  if (
    !response.ok &&
    request.rpcErrorsInBody &&
    (response.status === 400 || response.status === 404) &&
    contentType.includes("json") &&
    body
  ) {
    deadline.disarm();
    // The error is the answer, relayed: it may echo anything, a credential included.
    const text = redactSecretsInJson(await errorBodyStart(body, MAX_ERROR_ANSWER_BYTES), request.env);
    const wire = readUpstreamMessage(text);
    if (wire && "error" in wire.message) return ok(errorReply(sessionId, wire, response.status));
    logUpstreamText(where, `answered HTTP ${response.status}`, text);
    return fail({
      reason: "http-status",
      upstream: upstream.name,
      status: response.status,
      detail: `${STATUS_REASONS[response.status] ?? "client error"} (the gateway's log has the body)`,
    });
  }
  if (!response.ok) {
    // The body may echo anything, a credential included: the log gets it, the client a reason.
    if (body) logUpstreamText(where, `answered HTTP ${response.status}`, await errorBodyStart(body));
    deadline.disarm();
    const reason = STATUS_REASONS[response.status] ?? (response.status >= 500 ? "server error" : "client error");
    return fail({
      reason: "http-status",
      upstream: upstream.name,
      status: response.status,
      detail: `${reason} (the gateway's log has the body)`,
    });
  }
  const none = (async function* (): AsyncGenerator<WireMessage> {})();
  if (stream)
    return ok({
      mode: "sse",
      sessionId,
      messages: body
        ? deadlineAware(sseMessages(body, where, resume, request.large, request.notifications, request.flowId), guard)
        : none,
      resume,
      status,
      received: guard.received,
    });
  if (contentType.includes("json"))
    return ok({
      mode: "json",
      sessionId,
      messages: body
        ? deadlineAware(jsonMessages(response, body, guard, where, request.large, request.quiet, request.flowId), guard)
        : none,
      resume,
      status,
      received: guard.received,
    });
  await discard();
  return fail({
    reason: "bad-response",
    upstream: upstream.name,
    detail: `answered with content-type "${contentType}", expected JSON or an SSE stream`,
  });
}
