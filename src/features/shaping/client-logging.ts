/**
 * Client logging: tells a client that asked for log messages what the gateway itself
 * decided about its calls (`notifications/message`, logger "mcp-edge-gateway"): output
 * filter applied and bytes saved, answer offloaded, rules fired, upstream failed, each
 * at its level and only at or above the level the client asked for. The decisions are
 * read from the call record once the inner layers are done, and sent ahead of the answer.
 *
 * A client that never asked gets nothing, and nothing is built for it: the only work is
 * finding its level (storage/client-log-levels.ts, cached per isolate).
 *
 * 2025 revisions: the level comes from `logging/setLevel` and holds for the session (it
 * is also relayed to the upstreams by the relay). 2026-07-28: the level travels in each
 * request's `_meta` (`io.modelcontextprotocol/logLevel`), read by `requestLevel`.
 */
import { isObject, type JsonObject, type JsonRpcRequest } from "../../core/jsonrpc";
import { GATEWAY_INFO } from "../../core/gateway-info";
import { GatewayError } from "../../core/errors";
import { onRequests, type CallContext, type Middleware } from "../../context/call-context";
import type { Answer } from "../../context/answer";
import type { CallRecord } from "../../context/call-record";
import {
  atLeast,
  isLogLevel,
  loadLogLevel,
  LOG_LEVEL_META_KEY,
  saveLogLevel,
  type LogLevel,
} from "../../storage/client-log-levels";

export const GATEWAY_LOGGER = GATEWAY_INFO.name;

/** A decision worth telling the client: its level, a sentence and the values. */
type Decision = { readonly level: LogLevel; readonly message: string; readonly details: JsonObject };

/** The level a 2026 request asks for in its own `_meta`, if any. */
export function requestLevel(ctx: CallContext, request: JsonRpcRequest): LogLevel | undefined {
  // Only a modern client's requests carry their log level in `_meta`.
  if (ctx.identity.era !== "modern") return undefined;
  const meta = request.params?.["_meta"];
  const level = isObject(meta) ? meta[LOG_LEVEL_META_KEY] : undefined;
  return isLogLevel(level) ? level : undefined;
}

/** The level of log messages the client of `ctx` asked for (its request's own, else its session's); null: none. */
export async function levelFor(ctx: CallContext, request: JsonRpcRequest): Promise<LogLevel | null> {
  const own = requestLevel(ctx, request);
  if (own) return own;
  const { session } = ctx.identity;
  const kv = ctx.services.kv;
  return session && kv ? loadLogLevel(kv, session.id) : null;
}

/** What the record says the gateway did to one call. */
export function decisionsOf(
  record: Readonly<CallRecord>,
  tool: string,
  failure: string | undefined = record.failure,
): Decision[] {
  const out: Decision[] = [];
  if (record.filterSet !== undefined) {
    const details = {
      event: "output-filter",
      tool,
      filterSet: record.filterSet,
      rule: record.filterRule ?? null,
      bytesSaved: record.bytesSaved ?? 0,
    };
    out.push(
      record.filterShadow
        ? {
            level: "debug",
            message: `filter set "${record.filterSet}" (shadow mode) would have saved ${record.bytesSaved ?? 0} bytes of ${tool}'s result`,
            details: { ...details, shadow: true },
          }
        : {
            level: "info",
            message: `filter set "${record.filterSet}" reshaped ${tool}'s result and saved ${record.bytesSaved ?? 0} bytes`,
            details,
          },
    );
  }
  if (record.payloadId !== undefined) {
    out.push({
      level: "info",
      message: `${tool}'s result was too large to send and was stored as payload ${record.payloadId}`,
      details: { event: "offload", tool, payloadId: record.payloadId, bytes: record.bytesFromUpstream ?? null },
    });
  }
  for (const rule of record.rulesFired ?? [])
    out.push({
      level: "info",
      message: `rule "${rule}" added guidance to ${tool}'s result`,
      details: { event: "rule", tool, rule },
    });
  if (failure !== undefined) {
    out.push({
      level: "error",
      message: `the call of ${tool} failed at the gateway (${failure}${record.upstream ? `, upstream "${record.upstream}"` : ""})`,
      details: { event: "failure", tool, failure, upstream: record.upstream ?? null },
    });
  }
  return out;
}

function logMessage(decision: Decision): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: decision.level, logger: GATEWAY_LOGGER, data: { message: decision.message, ...decision.details } },
  });
}

/** Why a call failed, as the relay tagged its error (the record layer writes it on the record later). */
function failureOf(error: unknown): string {
  const reason = error instanceof GatewayError && isObject(error.data) ? error.data["reason"] : undefined;
  return typeof reason === "string" ? reason : "gateway-error";
}

/**
 * Tells the client what the record says of its call. The payload id is the answer's: the
 * record layer, outside this one, copies it onto the record only after this layer returns.
 */
async function report(ctx: CallContext, threshold: LogLevel, tool: string, answer?: Answer, failure?: string) {
  const payloadId = answer?.from.payloadId ?? ctx.record.payloadId;
  const record = payloadId === undefined ? ctx.record : { ...ctx.record, payloadId };
  for (const decision of decisionsOf(record, tool, failure))
    if (atLeast(decision.level, threshold)) await ctx.emit(logMessage(decision));
}

/**
 * The client-logging middleware: remembers a session's `logging/setLevel`, and tells the client what
 * each layer decided about the other requests src/chain.ts declares it for (tool calls).
 *
 * @example
 * const handler = composeMiddleware([clientLogging()], relay);
 */
export function clientLogging(): Middleware {
  return onRequests(
    (next) =>
      async function clientLogging(ctx, request) {
        const { method, params } = request.message;
        if (method === "logging/setLevel") {
          const level = params?.["level"];
          const { session } = ctx.identity;
          const kv = ctx.services.kv;
          if (isLogLevel(level) && session && kv) await saveLogLevel(kv, session.id, level, session.expiresAt);
          return next(ctx, request);
        }
        const threshold = await levelFor(ctx, request.message);
        if (threshold === null) return next(ctx, request);
        const tool = typeof params?.["name"] === "string" ? params["name"] : method;
        let answer: Answer;
        try {
          answer = await next(ctx, request);
        } catch (error) {
          await report(ctx, threshold, tool, undefined, failureOf(error));
          throw error;
        }
        await report(ctx, threshold, tool, answer);
        return answer;
      },
  );
}
