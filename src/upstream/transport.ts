/**
 * The upstream transport interface: how the gateway speaks to one side of an upstream.
 * Each upstream era is one implementation (legacy-transport.ts for the 2025 revisions,
 * modern-transport.ts for 2026-07-28); a new upstream protocol is one more. Which one a
 * call uses (select-transport.ts) is decided by era-choice.ts from what discovery learned (era.ts) and what the
 * client is: once per client and upstream when an upstream session is opened (the session
 * then names its transport), or per call for a client that keeps none.
 *
 * Callers in relay/ hold a transport and ask it what they need (send, listen, close, and
 * how the upstream asks its questions, which tells where a bridge is needed); they do not
 * branch on eras themselves.
 */
import type { Result } from "../core/errors";
import type { JsonObject, JsonRpcId } from "../core/jsonrpc";
import type { UpstreamConfig } from "../config/upstreams";
import type { LargeAnswerConsumer, NotificationPass, UpstreamReply } from "./client";
import type { UpstreamFailure } from "./failures";
import type { UpstreamSide } from "./era-choice";
import type { ListenFilter } from "./modern-listen";
import type { PoolRequest, UpstreamSession } from "./upstream-session";

/** How one message is sent: see `UpstreamExchange`. */
export type SendOptions = {
  readonly large?: LargeAnswerConsumer;
  readonly flowId?: JsonRpcId;
  readonly notifications?: NotificationPass;
  readonly answerWithinTimeout?: boolean;
  readonly traceparent?: string;
};

/** An upstream's stream of messages outside requests, as it was opened. */
export type OpenedStream = {
  /** What a 2026-07-28 upstream acknowledged it will send; absent for a 2025 GET stream (it sends what it sends). */
  readonly acknowledged?: JsonObject;
  /** The messages after the acknowledgement. */
  readonly reply: UpstreamReply;
};

/** One side of an upstream, spoken to in its own era. */
export type UpstreamTransport = {
  /** The side it speaks to. */
  readonly side: UpstreamSide;
  /**
   * How the upstream asks the client a question during a call: requests on the call's
   * stream (a client that cannot take them needs the call bridge), or an `input_required`
   * result (a client that cannot read it needs the input bridge).
   */
  readonly asks: "server-requests" | "input-required";
  /** Sends one message text in `session`. */
  readonly send: (
    upstream: UpstreamConfig,
    text: string,
    request: PoolRequest,
    session: UpstreamSession,
    options: SendOptions,
  ) => Promise<Result<UpstreamReply, UpstreamFailure>>;
  /**
   * Opens the upstream's stream of messages outside requests: the 2025 GET stream of
   * `session` (all it sends), or a 2026-07-28 `subscriptions/listen` for `filter`, once acknowledged.
   */
  readonly listen: (
    upstream: UpstreamConfig,
    request: PoolRequest,
    session: UpstreamSession,
    filter: ListenFilter,
  ) => Promise<Result<OpenedStream, UpstreamFailure>>;
  /** Ends `session` at the upstream (a 2025 DELETE; a 2026-07-28 upstream keeps none). Never rejects. */
  readonly close: (
    upstream: UpstreamConfig,
    request: Pick<PoolRequest, "env" | "identity">,
    session: UpstreamSession,
  ) => Promise<void>;
};
