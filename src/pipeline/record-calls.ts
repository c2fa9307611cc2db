/**
 * The pipeline's outermost layer: completes each message's call record from its answer
 * (what served it: upstream, bridged call, payload; bytes sent to the client), its duration
 * and the failure that ended it, and hands it to the observers (audit, upstream health)
 * once the message is done. Observers run after the answer is decided and cannot change it;
 * no layer of the pipeline reads the record to decide anything.
 */
import { GatewayError } from "../core/errors";
import { failureOf } from "../core/failures";
import { INTERNAL_ERROR, type OutgoingMessage } from "../core/jsonrpc";
import { utf8Length } from "../core/utf8-position";
import { FlowBreak } from "../core/response-flow";
import type { CallContext, ClientMessage, Handler } from "../context/call-context";
import type { CallFailure, CallRecord } from "../context/call-record";

/** Told of each message's completed record. */
export type CallObserver = (record: Readonly<CallRecord>, ctx: CallContext, message: ClientMessage) => void;

const RELAY_FAILURES: ReadonlySet<string> = new Set<CallFailure>([
  "unreachable",
  "timeout",
  "http-status",
  "session-expired",
  "bad-response",
  "missing-binding",
  "no-response",
]);

/** The record's failure: an upstream failure's own reason, by its type; any other error is the gateway's. */
function callFailureOf(error: unknown): CallFailure {
  const reason = failureOf(error)?.reason;
  return reason !== undefined && RELAY_FAILURES.has(reason) ? (reason as CallFailure) : "gateway-error";
}

/** Wraps `next` so that every message's record is completed and observed. */
export function recordCalls(next: Handler, observers: readonly CallObserver[]): Handler {
  return async function recordCalls(ctx, message) {
    const { record } = ctx;
    let sent = 0;
    const emit = (outgoing: OutgoingMessage) => {
      sent += typeof outgoing === "string" ? utf8Length(outgoing) : outgoing.bytes.byteLength;
      return ctx.emit(outgoing);
    };
    const failed = (error: unknown) => {
      record.failure ??= callFailureOf(error);
      // What the client is answered with: a gateway error as it is, anything else as the generic internal error.
      if (error instanceof GatewayError) {
        record.errorCode = error.code;
        record.errorMessage = error.message;
      } else record.errorCode = INTERNAL_ERROR;
    };
    const done = () => {
      record.bytesToClient = sent;
      record.durationMs = Date.now() - record.startedAt;
      for (const observe of observers) {
        try {
          observe(record, ctx, message);
        } catch (error) {
          console.error("mcp-edge-gateway: a call observer failed", error);
        }
      }
    };
    /** An answer that flows is done once it ended: its length and how it ended are known then. */
    let flowing = false;
    try {
      const answer = await next({ ...ctx, emit }, message);
      if (answer !== undefined) {
        sent += answer.byteLength;
        // What served the answer, as the answer says (the relay and offload made it).
        const { upstream, bridgedCall, payloadId } = answer.from;
        if (upstream !== undefined) record.upstream = upstream;
        if (bridgedCall !== undefined) record.bridgedCall = bridgedCall;
        if (payloadId !== undefined) record.payloadId = payloadId;
        if (answer.flow) {
          flowing = true;
          ctx.waitUntil(
            answer.flow.ended.then((end) => {
              sent += end.byteLength;
              // A client that went away says nothing of the upstream, nor of the gateway.
              if (!end.ok && !(end.error instanceof FlowBreak && end.error.byClient)) failed(end.error);
              done();
            }),
          );
        }
      }
      return answer;
    } catch (error) {
      failed(error);
      throw error;
    } finally {
      if (!flowing) done();
    }
  };
}
