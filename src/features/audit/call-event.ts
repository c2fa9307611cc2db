/**
 * Builds the audit event of one completed client message from its call record, its
 * context (identity, route, trace) and the answer the client got: parameters redacted
 * by key, every field bounded; the whole event is trimmed to fit one Queue message where it
 * is queued (features/audit/audit-queue.ts with audit-bounds.ts: never dropped for its size).
 */
import type { JsonObject } from "../../core/jsonrpc";
import { eachMember, elements, member, skipValue, skipWhitespace, type Span } from "../../core/raw-json";
import { randomHexId } from "../../core/ids";
import { SYS_PREFIX } from "../../core/names";
import type { AuditConfig } from "./audit-config";
import { redactSecrets } from "../../config/secrets";
import type { CallContext, ClientMessage } from "../../context/call-context";
import type { CallRecord } from "../../context/call-record";
import { redactParameters } from "./redact-parameters";
import { secretKeyMatcher } from "./secret-keys";
import type { AuditEvent, AuditOutcome } from "./audit-event";
import { FieldBounds } from "./audit-bounds";
import { namedAt } from "../../context/call-target";
import { methodFacts } from "../../core/methods";

// Where these lived before audit-bounds.ts: importers of this module keep working.
export { MAX_EVENT_BYTES, TRIMMED_MARKER, trimEvent } from "./audit-bounds";

/** How much of an error's text is kept (bytes of JSON text). */
const MAX_ERROR_BYTES = 1024;
/** Raw characters of a tool error's text read from the answer (the rest is never decoded). */
const MAX_ERROR_RAW_CHARS = 4 * MAX_ERROR_BYTES;
/** Session id hashes kept per isolate (session ids are at most a few dozen characters). */
const HASHED_SESSIONS_KEPT = 1024;

/** The decoded start of a JSON string at `span`, without decoding more than `MAX_ERROR_RAW_CHARS` of it. */
function stringStart(text: string, span: Span): string | undefined {
  if (text.charCodeAt(span.start) !== 0x22) return undefined;
  if (span.end - span.start <= MAX_ERROR_RAW_CHARS) return JSON.parse(text.slice(span.start, span.end)) as string;
  // Cut, then drop a partial escape at the cut, and close the string.
  const raw = text
    .slice(span.start, span.start + MAX_ERROR_RAW_CHARS)
    .replace(/\\u[0-9a-fA-F]{0,3}$/, "")
    .replace(/(?<!\\)(\\\\)*\\$/, "$1");
  try {
    return JSON.parse(`${raw}"`) as string;
  } catch {
    return undefined;
  }
}

type Ending = { outcome: AuditOutcome; code?: number; message?: string };

/**
 * The members of the object at `at` as spans (`firstWins`: a key's first member, else its
 * last, as `members(...).find` and `member` read them), and where the object ends.
 */
function memberSpans(text: string, at: number, firstWins: boolean): { spans: Map<string, Span>; end: number } {
  const spans = new Map<string, Span>();
  const end = eachMember(text, at, (key, start) => {
    const valueEnd = skipValue(text, start);
    if (!firstWins || !spans.has(key)) spans.set(key, { start, end: valueEnd });
    return valueEnd;
  });
  return { spans, end };
}

/**
 * How the answer ended: reads only the top of the response and of its result, never the
 * whole text, in one pass over it (walking a 10 MiB result three times was a third of the
 * gateway's JavaScript relaying it, docs/benchmarks.md): the first `error` and the first
 * `result` member are walked where they stand, every other value skipped.
 */
function endingOf(record: Readonly<CallRecord>, answer: string | undefined): Ending {
  if (record.errorCode !== undefined) return { outcome: "error", code: record.errorCode, message: record.errorMessage };
  if (answer === undefined) return record.failure ? { outcome: "error" } : { outcome: "success" };
  try {
    let error: Map<string, Span> | undefined;
    let result: Map<string, Span> | undefined;
    let resultSeen = false;
    const end = eachMember(answer, skipWhitespace(answer, 0), (key, start) => {
      if (key === "error" && !error) {
        // Not an object: no outcome can be read (the walk throws, as reading its members did).
        const read = memberSpans(answer, start, false);
        error = read.spans;
        return read.end;
      }
      if (key === "result" && !resultSeen) {
        resultSeen = true;
        if (answer.charCodeAt(start) !== 0x7b) return skipValue(answer, start);
        const read = memberSpans(answer, start, true);
        result = read.spans;
        return read.end;
      }
      return skipValue(answer, start);
    });
    if (skipWhitespace(answer, end) !== answer.length) return { outcome: "success" };
    if (error) {
      const code = error.get("code");
      const message = error.get("message");
      const parsedCode = code ? Number(answer.slice(code.start, code.end)) : Number.NaN;
      return {
        outcome: "error",
        ...(Number.isInteger(parsedCode) ? { code: parsedCode } : {}),
        ...(message ? { message: stringStart(answer, message) } : {}),
      };
    }
    const isError = result?.get("isError");
    if (!result || !isError || answer.slice(isError.start, isError.end) !== "true") return { outcome: "success" };
    const content = result.get("content");
    const first = content && answer.charCodeAt(content.start) === 0x5b ? elements(answer, content)[0] : undefined;
    const text = first && answer.charCodeAt(first.start) === 0x7b ? member(answer, first, "text") : undefined;
    return { outcome: "tool_error", ...(text ? { message: stringStart(answer, text) } : {}) };
  } catch {
    return { outcome: "success" };
  }
}

/** A field of the identity that authentication may add (email, roles, persona); absent until it does. */
function identityField(ctx: CallContext, key: string): unknown {
  return (ctx.identity as Readonly<Record<string, unknown>>)[key];
}

/** Session ids whose hash this isolate computed, oldest first: a session's every event hashes the same id. */
const hashedSessions = new Map<string, Promise<string>>();

async function sessionHash(id: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(id)));
  return [...digest.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The first 128 bits of the SHA-256 of a session id, as hex: what the event says instead of the id. */
function hashedSessionId(id: string | undefined): Promise<string> | undefined {
  if (id === undefined) return undefined;
  let hash = hashedSessions.get(id);
  if (hash === undefined) {
    if (hashedSessions.size >= HASHED_SESSIONS_KEPT) hashedSessions.delete(hashedSessions.keys().next().value!);
    hash = sessionHash(id);
    hashedSessions.set(id, hash);
  }
  return hash;
}

/** The method, the names and the parameters a message carries. */
function callOf(message: ClientMessage): { method: string; id?: string; params?: JsonObject } {
  switch (message.kind) {
    case "request":
      return {
        method: message.wire.message.method,
        id: JSON.stringify(message.wire.message.id),
        ...(message.wire.message.params ? { params: message.wire.message.params } : {}),
      };
    case "notification":
      return {
        method: message.wire.message.method,
        ...(message.wire.message.params ? { params: message.wire.message.params } : {}),
      };
    case "response":
      return { method: "(response)" };
    case "listen":
      return { method: "(listen)" };
    case "end":
      return { method: "(end)" };
    default: {
      const never: never = message;
      return never;
    }
  }
}

function withoutMeta(params: JsonObject): JsonObject {
  const { _meta: _, ...rest } = params;
  return rest;
}

/** Drops undefined fields, so the NDJSON line holds only what is known. */
function compact<T extends object>(event: T): T {
  const kept: Record<string, unknown> = {};
  for (const key in event) if (event[key] !== undefined) kept[key] = event[key];
  return kept as T;
}

/** The name policy knows a called tool by (`<upstream>___<name>` on every route; a gateway tool keeps its own). */
function qualifiedToolName(ctx: CallContext, name: unknown): string | undefined {
  if (typeof name !== "string") return undefined;
  return name.startsWith(SYS_PREFIX) ? name : namedAt(ctx.target)?.key;
}

/**
 * The audit event of a completed message.
 *
 * @example
 * const event = await auditEventOf(ctx.record, ctx, message, answer, config.audit);
 */
export async function auditEventOf(
  record: Readonly<CallRecord>,
  ctx: CallContext,
  message: ClientMessage,
  answer: string | undefined,
  config: AuditConfig,
): Promise<AuditEvent> {
  const { method, id, params } = callOf(message);
  const isSecret = secretKeyMatcher(config.redactKeys);
  const redact = (value: unknown) => (config.redact ? redactParameters(value, isSecret) : value);
  const ending = endingOf(record, answer);
  const env = ctx.services.env;
  const bounds = new FieldBounds();
  const text = bounds.text.bind(bounds);
  const roles = bounds.roles("user.roles", identityField(ctx, "roles"));
  const invokes = methodFacts(method).invokes;
  const toolCall = invokes === "tool";
  const prompt = invokes === "prompt";
  const errorType =
    ending.outcome === "success"
      ? undefined
      : (record.failure ??
        (ending.code !== undefined ? String(ending.code) : ending.outcome === "tool_error" ? "tool_error" : "error"));
  const event: AuditEvent = compact({
    "gateway.event_id": randomHexId(),
    timestamp: new Date(record.startedAt).toISOString(),
    trace_id: record.trace?.traceId,
    span_id: record.trace?.spanId,
    parent_span_id: record.trace?.parentSpanId,
    "mcp.method.name": text("mcp.method.name", method)!,
    "gen_ai.operation.name": toolCall ? "execute_tool" : undefined,
    "gen_ai.tool.name": toolCall ? text("gen_ai.tool.name", record.alias ?? params?.["name"]) : undefined,
    "gateway.tool.qualified_name": toolCall
      ? text("gateway.tool.qualified_name", qualifiedToolName(ctx, params?.["name"]))
      : undefined,
    "gen_ai.prompt.name": prompt ? text("gen_ai.prompt.name", record.alias ?? params?.["name"]) : undefined,
    "gateway.prompt.qualified_name":
      prompt && record.alias !== undefined ? text("gateway.prompt.qualified_name", params?.["name"]) : undefined,
    "mcp.resource.uri": method.startsWith("resources/") ? text("mcp.resource.uri", params?.["uri"]) : undefined,
    "gen_ai.tool.call.arguments": toolCall ? redact(record.guardedArguments ?? params?.["arguments"] ?? {}) : undefined,
    "gateway.params":
      !toolCall && params && Object.keys(withoutMeta(params)).length > 0 ? redact(withoutMeta(params)) : undefined,
    "jsonrpc.request.id": text("jsonrpc.request.id", id),
    "mcp.protocol.version": text("mcp.protocol.version", ctx.identity.protocolVersion)!,
    "mcp.session.id": await hashedSessionId(ctx.identity.session?.id),
    "user.id": text("user.id", ctx.identity.principal)!,
    "user.email": text("user.email", identityField(ctx, "email")),
    "user.roles": roles.roles,
    "gateway.user.roles_count": roles.total,
    "gateway.persona": text("gateway.persona", record.persona),
    "gateway.denied": text("gateway.denied", record.denied),
    "gateway.route": ctx.route.name === "" ? "/mcp" : text("gateway.route", `/mcp/${ctx.route.name}`)!,
    "gateway.upstream": text("gateway.upstream", record.upstream),
    "gateway.upstream.status_code": record.upstreamStatus,
    "gateway.bytes_from_upstream": record.bytesFromUpstream,
    "gateway.bytes_to_client": record.bytesToClient,
    "gateway.filter.set": text("gateway.filter.set", record.filterSet),
    "gateway.filter.rule": text("gateway.filter.rule", record.filterRule),
    "gateway.filter.bytes_saved": record.bytesSaved,
    "gateway.filter.shadow": record.filterShadow,
    "gateway.payload_id": text("gateway.payload_id", record.payloadId),
    "gateway.guardrails": record.guardrails,
    "gateway.outcome": ending.outcome,
    "error.type": errorType,
    "rpc.response.status_code": ending.code !== undefined ? String(ending.code) : undefined,
    // Upstreams write these texts: no configured secret leaves in them.
    "gateway.error.message":
      ending.message === undefined
        ? undefined
        : text("gateway.error.message", redactSecrets(ending.message, env), MAX_ERROR_BYTES),
    "gateway.failure": record.failure,
    "gateway.duration_ms": record.durationMs ?? Date.now() - record.startedAt,
    "gateway.code_run": record.codeRun,
    "gateway.code_digest": record.codeDigest,
  });
  // Cut to fit one Queue message where it is queued (features/audit/audit-queue.ts), which measures it once.
  return { ...event, ...bounds.markers() };
}
