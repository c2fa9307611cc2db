/**
 * What every handler of the pipeline is given for one message, whatever the protocol
 * era it came in: who is calling (identity), which route serves it, typed services, the
 * upstream side of the client, and the call record that layers annotate with values.
 * A protocol front produces it; middleware and the relay only read it (and write the
 * record). Nothing here is a 2025 session: a session is one way a front fills it.
 */
import type {
  JsonObject,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  OutgoingMessage,
  WireMessage,
} from "../core/jsonrpc";
import { qualifyName, splitName } from "../core/names";
import type { GatewayConfig } from "../config/gateway-config";
import type { LargeAnswerTaker } from "../upstream/client";
import type { PoolRequest } from "../upstream/pool";
import type { UpstreamClient, UpstreamSession } from "../upstream/upstream-session";
import type { Answer } from "./answer";
import type { CallRecord } from "./call-record";
import type { Route, RouteEndpoint } from "./route";
import type { BridgedCallRpc, CallApprovalRpc, InputRendezvousRpc, ObjectNamespace } from "./object-rpc";
import type { TraceContext } from "../core/traceparent";
import type { Grant } from "./grant";
import type { CallTarget } from "./call-target";
import { callerCredentials } from "../upstream/caller-credentials";
import type { PayloadCaller, PayloadOwner } from "../storage/payload-store";

export type { LargeAnswerTaker };

/** A conversation the client's protocol era keeps across requests (2025 sessions). */
export type ClientSession = {
  /** The session's random id (never the sealed token the client holds). */
  readonly id: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
  /** Which tools the output filters reshaped when the session began (features/filters/listed-shapes.ts). */
  readonly filterShapes?: Readonly<Record<string, string>>;
};

/** The principal of every caller until authentication is configured. */
export const ANONYMOUS_PRINCIPAL = "anonymous";
/** How a caller proved who they are. */
export type AuthMethod = "api-key" | "jwt" | "sign-in" | "none";

/** The caller an HTTP request authenticated as (the shell's verifier decides; "anonymous" with AUTH off). */
export type Caller = {
  readonly principal: string;
  readonly email?: string;
  /** Roles select personas (authorization). */
  readonly roles: readonly string[];
  readonly method: AuthMethod;
  /** The request's own access token (jwt, sign-in), for token exchange only: never stored, logged or sent upstream. */
  readonly token?: string;
};

/**
 * A client's protocol era: `legacy` speaks a handshake revision (2025-03-26 to
 * 2025-11-25: sessions, the GET stream, server requests on the call's stream); `modern`
 * a stateless one (2026-07-28: the `_meta` envelope, `input_required`, `subscriptions/listen`).
 */
export type ClientEra = "legacy" | "modern";

/** Who is calling, as the front established it. */
export type Identity = {
  /** The authenticated caller ("anonymous" when authentication is off). */
  readonly principal: string;
  readonly email?: string;
  /** The caller's roles, from this request's credential (not from the session). */
  readonly roles: readonly string[];
  readonly authMethod: AuthMethod;
  /** This request's own access token (jwt, sign-in), for token exchange only: never stored, logged or sent upstream. */
  readonly token?: string;
  /** The protocol revision the client speaks. */
  readonly protocolVersion: string;
  /** The client's era, classified once by the front that took the request; nothing below re-derives it from the revision. */
  readonly era: ClientEra;
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: JsonObject;
  /** The level of log messages a modern client asked for in this request (`io.modelcontextprotocol/logLevel`); absent: none. */
  readonly logLevel?: string;
  /** Present when the client's era keeps a session. */
  readonly session?: ClientSession;
};

/** A rate-limiting binding (wrangler.toml `[[unsafe.bindings]]` of type ratelimit). */
export type RateLimiter = { limit: (options: { key: string }) => Promise<{ success: boolean }> };

/** The bindings and configuration a call may use, typed once at the shell. */
/** What tool search needs of a Workers AI binding: `run(model, {text})` answering `{data: number[][]}`. */
export type EmbeddingsBinding = { readonly run: (model: string, input: { text: string[] }) => Promise<unknown> };

export type Services = {
  /** Parsed configuration (vars). */
  readonly config: GatewayConfig;
  /** Filter sets, plans and session records. */
  readonly kv: KVNamespace | undefined;
  /** Offloaded payloads. */
  readonly payloads: R2Bucket | undefined;
  /** Seals sessions, signs cursors and payload URLs. */
  readonly sessionSecret: string;
  /** The Queue audit events are sent to (AUDIT_QUEUE). */
  readonly auditQueue: Queue | undefined;
  /** Where a 2025 client's answers meet a 2026-07-28 upstream's call (INPUT_RENDEZVOUS, shell/input-rendezvous.ts); absent when not bound. */
  readonly inputRendezvous?: ObjectNamespace<InputRendezvousRpc>;
  /** Durable Objects holding a 2025 upstream's call across a modern client's retries (BRIDGED_CALLS); absent: not bridged. */
  readonly bridgedCalls?: ObjectNamespace<BridgedCallRpc>;
  /** Calls held for approval (features/approvals/), one object per call. */
  readonly approvals?: ObjectNamespace<CallApprovalRpc>;
  /** A Workers AI binding (AI) that can embed texts, for tool search's semantic ranking (features/catalog/semantic-ranking.ts); absent when not bound. */
  readonly embeddings?: EmbeddingsBinding;
  /** The rate limiter bound under `name` (AUTH.rateLimits names them); undefined when no such binding is. */
  readonly rateLimiter: (name: string) => RateLimiter | undefined;
  /** The Worker's bindings, for what is named in configuration (upstream service bindings, credential secrets). */
  readonly env: Readonly<Record<string, unknown>>;
};

/** A sign-in link as a URL-mode elicitation, with the upstream it signs in to. */
export type SignInElicitation = {
  readonly upstream: string;
  readonly mode: "url";
  readonly message: string;
  readonly url: string;
  readonly elicitationId: string;
};

/** Everything a handler needs to serve one client message. */
export type CallContext = {
  readonly identity: Identity;
  readonly route: Route;
  readonly services: Services;
  /** On whose behalf upstream sessions are opened and kept. */
  readonly upstreamClient: UpstreamClient;
  /**
   * The caller's persona grant (undefined: no persona applies), looked up once for all the
   * layers that need it (authorization, rate limits, catalog modes); read only with AUTH on.
   */
  readonly grant: () => Promise<Grant | undefined>;
  /** What the request names (tool, prompt or resource), resolved once by the pipeline's classifier (pipeline/call-targets.ts); absent for other messages. */
  readonly target?: CallTarget;
  /** What happened to this call, as values: annotated on the way, read by audit. */
  readonly record: CallRecord;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /**
   * True when the client's era cancels a request by closing its stream (2026-07-28): the
   * relay then tells the upstream serving it (`notifications/cancelled` to a 2025 upstream).
   */
  readonly cancelsOnClose?: boolean;
  /**
   * Sends a message to the client ahead of the answer (progress, logs, server requests,
   * stream events): its text, or a notification the relay passes on as the upstream's
   * bytes (`NotificationBytes`, whose bytes are valid only until this resolves). Await it:
   * it resolves when the client's stream has taken the message, which is how a slow
   * client slows the upstream down.
   */
  readonly emit: (message: OutgoingMessage) => Promise<void> | void;
  /**
   * Told when an upstream answered with an SSE stream. On /mcp/<upstream> the client's
   * answer then comes as SSE too: the gateway keeps the framing the upstream chose.
   */
  readonly streamed?: () => void;
  /** What becomes of an upstream answer too large to hold, each layer saying its part (see {@link largeAnswerOf}). */
  readonly largeAnswers?: LargeAnswerPolicy;
  /**
   * Set by a front that can write an answer while it arrives (the 2025 front, for a POST of
   * one request): the relay may then pass on a large answer nobody reads as it flows
   * (context/answer.ts, `Answer.ofFlow`), when no layer set a large-answer policy. A layer
   * that reads a call's answer without setting one clears it first ({@link readingAnswer}).
   */
  readonly answerFlows?: boolean;
  /** Set by code mode for a program's tool call: offload keeps a result up to this many bytes whole. */
  readonly keepWholeBytes?: number;
  /** Set by code mode for a program's tool call: the run it belongs to (a program cannot wait for a person). */
  readonly codeRun?: string;
  /**
   * Set by code mode for a program's tool call, which cannot ask the user: a sign-in an
   * upstream needs (features/upstream-sign-in) is handed here, and the call fails saying so.
   */
  readonly signInNeeded?: (link: SignInElicitation) => void;
  /** A 2026-07-28 client's own `Mcp-Param-*` headers (lower-case names), forwarded to 2026-07-28 upstreams. */
  readonly paramHeaders?: Readonly<Record<string, string>>;
  /** The W3C `traceparent` header of the HTTP request that carried the message, when its transport has headers. */
  readonly incomingTraceparent?: string;
  /** The trace this message continues (set by the trace-context middleware); sent to upstreams. */
  readonly trace?: TraceContext;
  /** Keeps work running after the answer is sent (audit, cache fills). */
  readonly waitUntil: (promise: Promise<unknown>) => void;
  /**
   * Told of the upstream sessions a handshake opened (initialize): the front that keeps
   * sessions seals them for the client's later requests.
   */
  readonly opened?: (sessions: Readonly<Record<string, UpstreamSession>>) => void;
};

/**
 * The large-answer policy of a call: each layer that has a say sets its own part, never
 * another's, and {@link largeAnswerOf} applies them in one order. A consumer takes an
 * upstream answer too large to hold (as a byte stream) and returns the text that answers
 * the call instead, answering the id the relay names (`LargeAnswerTaker`).
 */
export type LargeAnswerPolicy = {
  /** Offload (features/offload/): stores the answer and answers with its compact envelope. */
  readonly offload?: LargeAnswerTaker;
  /** Output filters under enforce (features/filters/): too large to filter, the answer is withheld, never stored unfiltered. */
  readonly filter?: LargeAnswerTaker;
  /**
   * Guardrails (features/guardrails/large-results.ts): check the stream on its way to what the filters or offload
   * decided (`shapedLargeAnswer`), or withhold it; "none" leaves the relay's own bound.
   */
  readonly guard?: LargeAnswerTaker | "none";
};

/** What the filters or offload do with a large answer: the filters' part first (an enforced set is never bypassed). */
export function shapedLargeAnswer(policy: LargeAnswerPolicy | undefined): LargeAnswerTaker | undefined {
  return policy?.filter ?? policy?.offload;
}

/**
 * The consumer the relay hands a large answer to: the guardrails check first (they wrap what
 * the filters or offload decided), then the filters, then offload; none: the relay refuses an
 * answer past its own bound.
 */
export function largeAnswerOf(ctx: Pick<CallContext, "largeAnswers">): LargeAnswerTaker | undefined {
  const guard = ctx.largeAnswers?.guard;
  if (guard !== undefined) return guard === "none" ? undefined : guard;
  return shapedLargeAnswer(ctx.largeAnswers);
}

/** `ctx` for a layer that will read the answer's text: the relay holds the answer whole (see `answerFlows`). */
export function readingAnswer<T extends Pick<CallContext, "answerFlows">>(ctx: T): T {
  return ctx.answerFlows ? { ...ctx, answerFlows: false } : ctx;
}

/** True when the relay may pass the call's answer on as it flows: the front can write one, and no layer has a say in it. */
export function answerMayFlow(ctx: Pick<CallContext, "answerFlows" | "largeAnswers" | "codeRun">): boolean {
  const policy = ctx.largeAnswers;
  return (
    ctx.answerFlows === true &&
    ctx.codeRun === undefined &&
    policy?.offload === undefined &&
    policy?.filter === undefined &&
    policy?.guard === undefined
  );
}

/** `ctx` with `part` of its large-answer policy set (by the layer that owns that part). */
export function withLargeAnswers<T extends Pick<CallContext, "largeAnswers">>(ctx: T, part: LargeAnswerPolicy): T {
  return { ...ctx, largeAnswers: { ...ctx.largeAnswers, ...part } };
}

/**
 * A message from the client, of every kind the pipeline sees. Messages from upstreams
 * toward the client are the answers handlers return and what they `emit` (results,
 * notifications, server requests, stream events), so a middleware sees those by
 * wrapping `next` and `ctx.emit`.
 */
export type ClientMessage =
  /** A request, initialize included; answered with the text of its response. */
  | { readonly kind: "request"; readonly wire: WireMessage<JsonRpcRequest> }
  | { readonly kind: "notification"; readonly wire: WireMessage<JsonRpcNotification> }
  /** The client's answer to a request an upstream sent it. */
  | { readonly kind: "response"; readonly wire: WireMessage<JsonRpcResponse> }
  /** The client opened the stream of messages sent outside any request (the 2025 GET stream). */
  | { readonly kind: "listen" }
  /** The client ended its session (the 2025 DELETE): the upstream sessions held for it are closed. */
  | { readonly kind: "end" };

/** Handles one client message: the answer to a request (context/answer.ts), nothing for the other kinds. */
export type Handler = (ctx: CallContext, message: ClientMessage) => Promise<Answer | undefined>;

export type Middleware = (next: Handler) => Handler;

/** Answers one client request with its JSON-RPC response. */
export type MethodHandler = (ctx: CallContext, request: WireMessage<JsonRpcRequest>) => Promise<Answer>;

/**
 * A middleware that handles requests only: every other kind of message passes through
 * unchanged. `wrap` sees requests as `MethodHandler`s.
 *
 * @example
 * export const pingCounter = (): Middleware => onRequests((next) => async function pingCounter(ctx, request) { return next(ctx, request); });
 */
export function onRequests(wrap: (next: MethodHandler) => MethodHandler): Middleware {
  return (next) => {
    // Not an async function: one promise and one resumption less per layer and call. A throw is still a rejection.
    const handle = wrap((ctx, request) => {
      try {
        return next(ctx, { kind: "request", wire: request }) as Promise<Answer>;
      } catch (error) {
        return Promise.reject(error);
      }
    });
    return (ctx, message) => (message.kind === "request" ? handle(ctx, message.wire) : next(ctx, message));
  };
}

/**
 * The upstream and the `<upstream>___<tool>` key a tool is known by for policy (filters,
 * offload), the same whichever route the call came through; undefined for a name that
 * names no upstream.
 */
export function toolKey(route: RouteEndpoint, name: string): { upstream: string; key: string } | undefined {
  if (route.kind === "aggregated") {
    const split = splitName(name);
    return split && { upstream: split.upstream, key: name };
  }
  const upstream = route.upstream.name;
  return { upstream, key: qualifyName(upstream, name) };
}

/**
 * Who owns what a call offloads: the principal, so any of its sessions may read it back.
 * With authentication off every caller is "anonymous", so there the payload is scoped to the
 * client's session (a stateless client has none: its payload id is then its only secret).
 */
export function payloadOwner(ctx: Pick<CallContext, "identity">): PayloadOwner {
  const bySession = ctx.identity.authMethod === "none";
  return { principal: ctx.identity.principal, session: bySession ? (ctx.identity.session?.id ?? "") : "" };
}

/** Who reads a payload back through MCP: the caller, in its actual session (see {@link payloadOwner}). */
export function payloadCaller(ctx: Pick<CallContext, "identity">): PayloadCaller {
  const scope = ctx.identity.authMethod === "none" ? "session" : "principal";
  return { principal: ctx.identity.principal, session: ctx.identity.session?.id ?? "", scope };
}

/** What the upstream pool needs of a call; upstreams that opted in are told who the caller is by a signed assertion. */
export function poolRequest(ctx: CallContext): PoolRequest {
  const { principal, email, roles, authMethod, token } = ctx.identity;
  const identity = callerCredentials(
    // The optional members last, here and below (shell/app.ts, `endpoint`).
    {
      env: ctx.services.env,
      kv: ctx.services.kv,
      waitUntil: ctx.waitUntil,
      ...(ctx.services.auditQueue && ctx.services.config.audit.enabled ? { auditQueue: ctx.services.auditQueue } : {}),
    },
    {
      principal,
      roles,
      method: authMethod,
      ...(email !== undefined ? { email } : {}),
      ...(ctx.record.persona !== undefined ? { persona: ctx.record.persona } : {}),
      ...(token !== undefined ? { token } : {}),
    },
  );
  return {
    env: ctx.services.env,
    kv: ctx.services.kv,
    session: ctx.upstreamClient,
    signal: ctx.signal,
    identity,
    clientVersion: ctx.identity.protocolVersion,
    ...(ctx.paramHeaders ? { paramHeaders: ctx.paramHeaders } : {}),
    ...(ctx.identity.logLevel !== undefined ? { logLevel: ctx.identity.logLevel } : {}),
  };
}
