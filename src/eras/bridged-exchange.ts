/**
 * One 2025 upstream call held for a modern (2026-07-28) client across its retries: what
 * the `BridgedCall` Durable Object runs (bridged-calls.ts). The upstream call is an
 * ordinary 2025 exchange (upstream/pool.ts) in an upstream session of the call's own
 * (bridge-sessions.ts); its stream, and the session's GET stream, are read until the
 * answer, or until the upstream asks the client something on either (sampling,
 * elicitation, roots), which ends the round: the question goes back to the isolate as an
 * input request and the streams wait for the retry. The retry's
 * input is sent to the upstream as the 2025 client's answer (a JSON-RPC response POSTed
 * in the same upstream session) and the stream is read on.
 *
 * Limits: the stream lives only in this object's memory (a restart or eviction loses the
 * call: the retry is told to start again); BRIDGE_RETRY_DEADLINE_MS per question (from
 * when it is first asked; retries without the answer do not extend it), then the
 * upstream call is cancelled; MAX_BRIDGE_ROUNDS questions; notifications are held up to
 * MAX_HELD_NOTIFICATION_CHARS per round and reach the client with the round's answer,
 * not as they happen; the call's progress goes under the round's own progress token
 * (round-progress.ts). A stream that ends before the answer is resumed with Last-Event-ID
 * (upstream/stream-resumption.ts, as on the direct path), also between a question and its retry.
 * An answer too large to hold goes, as a stream, to the offload
 * consumer of the isolate serving the current round (called back over RPC); a round
 * without one (not a tools/call) fails such an answer as the direct path does.
 */
import { isObject, kindOf, type JsonObject, type JsonRpcId, type JsonRpcRequest } from "../core/jsonrpc";
import { ok, type Result } from "../core/errors";
import type { WireMessage } from "../core/jsonrpc";
import type { LargeAnswerConsumer, LargeAnswerTaker } from "../upstream/client";
import type { UpstreamFailure } from "../upstream/failures";
import { callerCredentials } from "../upstream/caller-credentials";
import type { UpstreamReply } from "../upstream/client";
import {
  resumeFromUpstream,
  sendToUpstream,
  upstreamMessages,
  type PoolRequest,
  type SendOptions,
} from "../upstream/pool";
import { refuseQuestion, type BridgeSession, type BridgeSessions } from "./bridge-sessions";
import { MAX_RESUMPTIONS, resumeDelay } from "../upstream/stream-resumption";
import { BRIDGED_METHODS, MAX_BRIDGE_ROUNDS, MAX_HELD_NOTIFICATION_CHARS } from "./bridge-protocol";
import { progressForRound, progressTokenOf } from "./round-progress";
import type { BridgeAnswer, BridgeOutcome, BridgeStart, InputRequest } from "../context/object-rpc";

type Pending = { readonly key: string; readonly upstreamId: JsonRpcId; readonly request: InputRequest };

/** A 2025 question as a 2026-07-28 input request (elicitation gains the `mode` 2026 requires). */
function inputRequest(message: JsonRpcRequest): InputRequest {
  const params: JsonObject | undefined = message.params;
  if (message.method === "elicitation/create" && params && params["mode"] === undefined)
    return { method: message.method, params: { mode: "form", ...params } };
  return { method: message.method, ...(params ? { params } : {}) };
}

/** A bridged upstream call. `begin` once, then `answer` per retry; `cancel` ends it. */
export class BridgedExchange {
  readonly #abort = new AbortController();
  #pool: PoolRequest;
  #messages: AsyncIterator<Result<WireMessage, UpstreamFailure>> | undefined;
  /** The call's own upstream session (bridge-sessions.ts), whose GET stream's questions are this call's. */
  #own: BridgeSession | undefined;
  /** The pending reads of the call's stream and of its session's questions (the round reads whichever comes first). */
  #fromCall: Promise<IteratorResult<Result<WireMessage, UpstreamFailure>>> | undefined;
  #fromSession: Promise<WireMessage<JsonRpcRequest> | undefined> | undefined;
  /** The stream being read (the call's, or its latest resumption) and how it was asked for. */
  #reply: UpstreamReply | undefined;
  #options: SendOptions = {};
  /** Resumptions in a row with nothing new on the stream. */
  #idle = 0;
  #status = 0;
  /** Bytes of the streams read before the current one. */
  #bytesBefore = 0;
  #pending: Pending | undefined;
  #round = 0;
  /** The progress token the upstream was sent (the first request's), and that of the request the round answers. */
  readonly #upstreamToken: JsonRpcId | undefined;
  #roundToken: JsonRpcId | undefined;
  #busy = false;
  #done = false;
  /** The offload consumer of the isolate serving the current round. */
  #large: LargeAnswerTaker | undefined;

  /** `reach`: the Worker's bindings as the shell typed them (`env` for what configuration names, `kv`). */
  constructor(
    reach: Pick<PoolRequest, "env" | "kv">,
    private readonly call: BridgeStart,
    private readonly sessions: BridgeSessions,
  ) {
    const { caller } = call;
    const { env, kv } = reach;
    this.#pool = {
      env,
      kv,
      session: call.client,
      signal: this.#abort.signal,
      identity: callerCredentials({ env, kv }, caller),
    };
    this.#upstreamToken = progressTokenOf(call.text);
    this.#roundToken = this.#upstreamToken;
  }

  /** True while a question waits for the client's retry (no round running). */
  get waiting(): boolean {
    return !this.#done && !this.#busy && this.#pending !== undefined;
  }

  /** True once the call answered, failed or was cancelled. */
  get done(): boolean {
    return this.#done;
  }

  /** True when `principal` is the one the call is for. */
  caller(principal: string): boolean {
    return principal === this.call.caller.principal;
  }

  /** Sends the request upstream and reads to its answer or first question. */
  async begin(): Promise<BridgeOutcome> {
    this.#large = this.call.large;
    const minBytes = this.call.large?.minBytes;
    // Past the first round's bound, an answer goes to the current round's consumer (or breaks off, as with none).
    const large: LargeAnswerConsumer | undefined =
      minBytes === undefined ? undefined : { minBytes, take: (body) => this.#takeLarge(body) };
    this.#options = { answerWithinTimeout: false, ...(large ? { large } : {}) };
    const own = await this.sessions.lease(this.call.upstream, this.#pool);
    if (!own.ok) return this.#finish({ kind: "failed", failure: own });
    if (own.value) {
      this.#own = own.value;
      this.#pool = { ...this.#pool, session: own.value.pool.session };
    }
    const reply = await sendToUpstream(this.call.upstream, this.call.text, this.#pool, {
      ...this.#options,
      ...(this.call.traceparent ? { traceparent: this.call.traceparent } : {}),
    });
    if (!reply.ok) return this.#finish({ kind: "failed", failure: reply });
    this.#status = reply.value.status;
    this.#read(reply.value);
    return this.#advance();
  }

  #read(reply: UpstreamReply): void {
    if (this.#reply) this.#bytesBefore += this.#reply.received.bytes;
    this.#reply = reply;
    this.#messages = upstreamMessages(reply, this.call.upstream.name)[Symbol.asyncIterator]();
    this.#fromCall = undefined;
  }

  /** The call's next message: from its own stream, or a question from its session's GET stream, whichever comes first. */
  async #next(): Promise<IteratorResult<Result<WireMessage, UpstreamFailure>>> {
    this.#fromCall ??= this.#messages!.next();
    while (this.#own?.open || this.#fromSession) {
      this.#fromSession ??= this.#own!.next();
      const first = await Promise.race([
        this.#fromCall.then((call) => ({ call })),
        this.#fromSession.then((question) => ({ question })),
      ]);
      if ("call" in first) break;
      this.#fromSession = undefined;
      if (first.question) return { done: false, value: ok(first.question) };
    }
    const next = await this.#fromCall;
    this.#fromCall = undefined;
    return next;
  }

  #bytes(): number {
    return this.#bytesBefore + (this.#reply?.received.bytes ?? 0);
  }

  /**
   * Reopens the call's stream after it ended before the answer, as relay/forward.ts does: when the
   * upstream gave event ids, after the delay it asked for, at most MAX_RESUMPTIONS times in
   * a row with nothing new. False when it cannot be resumed.
   */
  async #resume(): Promise<Result<true, UpstreamFailure> | false> {
    const { lastEventId, retryMs } = this.#reply?.resume ?? {};
    if (lastEventId === undefined || this.#idle >= MAX_RESUMPTIONS || this.#abort.signal.aborted) return false;
    this.#idle++;
    await resumeDelay(retryMs);
    const reply = await resumeFromUpstream(this.call.upstream, lastEventId, this.#pool, this.#options);
    if (!reply.ok) return reply;
    this.#read(reply.value);
    return ok(true);
  }

  /** Takes a retry's input for the pending question, answers the upstream and reads on. */
  async answer(input: BridgeAnswer): Promise<BridgeOutcome> {
    if (input.principal !== this.call.caller.principal) return { kind: "gone", reason: "other-principal" };
    const pending = this.#pending;
    if (!pending || input.round !== this.#round) return { kind: "gone", reason: "stale-round" };
    if (this.#busy) return { kind: "gone", reason: "busy" };
    const response = isObject(input.responses) ? input.responses[pending.key] : undefined;
    // Input missing: asked again (mrtr, "Error Handling"), the call still waiting.
    if (!isObject(response))
      return { kind: "input", round: this.#round, key: pending.key, request: pending.request, notifications: [] };
    this.#busy = true;
    this.#large = input.large;
    this.#roundToken = input.progressToken;
    try {
      this.#pending = undefined;
      const sent = await sendToUpstream(
        this.call.upstream,
        JSON.stringify({ jsonrpc: "2.0", id: pending.upstreamId, result: response }),
        this.#pool,
      );
      if (!sent.ok) return this.#finish({ kind: "failed", failure: sent });
      for await (const item of upstreamMessages(sent.value, this.call.upstream.name))
        if (!item.ok) return this.#finish({ kind: "failed", failure: item });
      return await this.#advance();
    } finally {
      this.#busy = false;
    }
  }

  /** Ends the call: the upstream is told (best effort) and its stream is closed. */
  async cancel(reason: string): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    const notice = JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: this.call.id, reason },
    });
    try {
      const sent = await sendToUpstream(this.call.upstream, notice, {
        ...this.#pool,
        signal: AbortSignal.timeout(this.call.upstream.timeoutMs),
      });
      if (sent.ok) for await (const item of upstreamMessages(sent.value, this.call.upstream.name)) if (!item.ok) break;
    } finally {
      this.#abort.abort();
      this.#giveBack(false);
    }
  }

  async #takeLarge(body: ReadableStream<Uint8Array>): Promise<string> {
    const consumer = this.#large;
    // The consumer answers the call's request (its stand-in is checked like any other answer).
    if (consumer) return consumer.take(body, this.call.id);
    await body.cancel();
    throw new Error("an answer too large to hold came in a round without a consumer for it");
  }

  #finish(outcome: BridgeOutcome): BridgeOutcome {
    this.#done = true;
    this.#abort.abort();
    this.#giveBack(outcome.kind === "complete");
    return outcome;
  }

  /**
   * Returns the call's own session: for the next call when this one answered, closed
   * otherwise. A question `#next` took off the session but lost the race to the call's
   * answer is in `#fromSession`: it goes back with the session, to be refused there.
   */
  #giveBack(reusable: boolean): void {
    const own = this.#own;
    const taken = this.#fromSession;
    this.#own = undefined;
    this.#fromSession = undefined;
    if (own) void this.sessions.release(own, reusable, taken).catch(() => {});
  }

  /** Reads the upstream's stream to the call's answer or its next question. */
  async #advance(): Promise<BridgeOutcome> {
    const notifications: string[] = [];
    let held = 0;
    const upstream = this.call.upstream.name;
    for (;;) {
      const next = await this.#next();
      if (next.done) {
        const resumed = await this.#resume();
        if (resumed === false)
          return this.#finish({
            kind: "failed",
            failure: { reason: "bad-response", upstream, detail: "its stream ended without answering the request" },
          });
        if (!resumed.ok) return this.#finish({ kind: "failed", failure: resumed });
        continue;
      }
      const item = next.value;
      if (!item.ok) return this.#finish({ kind: "failed", failure: item });
      this.#idle = 0;
      const { message, text } = item.value;
      const kind = kindOf(message);
      if (kind === "response") {
        if ("id" in message && message.id === this.call.id)
          return this.#finish({
            kind: "complete",
            text,
            notifications,
            status: this.#status,
            bytesFromUpstream: this.#bytes(),
          });
        continue; // not this call's answer
      }
      if (kind === "request") {
        const request = message as JsonRpcRequest;
        const capability = BRIDGED_METHODS.get(request.method);
        // Only what the client declared it can answer becomes an input request (mrtr: servers MUST NOT ask otherwise).
        if (capability !== undefined && isObject(this.call.client.clientCapabilities[capability])) {
          if (this.#round >= MAX_BRIDGE_ROUNDS) {
            await this.cancel(`the gateway bridges at most ${MAX_BRIDGE_ROUNDS} questions per call`);
            return { kind: "gone", reason: "too-many-rounds" };
          }
          this.#round++;
          const pending: Pending = {
            key: `${capability}-${this.#round}`,
            upstreamId: request.id,
            request: inputRequest(request),
          };
          this.#pending = pending;
          return { kind: "input", round: this.#round, key: pending.key, request: pending.request, notifications };
        }
        // A ping is answered here; anything else the client cannot be asked.
        const why =
          capability !== undefined
            ? `the client did not declare the ${capability} capability`
            : "not bridged to 2026-07-28 clients";
        await refuseQuestion(this.call.upstream, request, why, this.#pool);
        continue;
      }
      const forClient = progressForRound(item.value, this.#upstreamToken, this.#roundToken);
      if (forClient !== undefined && held + forClient.length <= MAX_HELD_NOTIFICATION_CHARS) {
        notifications.push(forClient);
        held += forClient.length;
      }
    }
  }
}
