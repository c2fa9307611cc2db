/**
 * Offload: a tools/call result larger than the threshold is stored whole in R2, and the
 * client gets a compact answer instead — the start of the data, its inferred structure,
 * and three ways to read the rest (sys___read_payload, resources/read on the payload
 * URI, a signed URL).
 *
 * It runs outside the output filters, so it sees (and stores) the filtered result.
 * Tools that answer with `structuredContent` (those with an `outputSchema`) get the
 * compact answer as a tool error: a result without `structuredContent`, or with one
 * that does not match, would break clients that validate it, while error results are
 * exempt from validation. Their schemas stay byte for byte as the upstream sent them.
 */
import { isObject, resultText, type JsonObject, type JsonRpcId } from "../../core/jsonrpc";
import { member, pathSpan, rootSpan } from "../../core/raw-json";
import { matchesGlob } from "../../core/glob";
import { DEFAULT_OFFLOAD } from "./offload-config";
import type { OffloadConfig } from "./offload-override";
import { offloadSettings, type PlanOffload } from "./offload-settings";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { READ_PAYLOAD_TOOL, SYS_PREFIX } from "../../core/names";
import { inferSchema, largestArray, type ArrayLocation, type InferredSchema } from "../../core/schema-inference";
import { indexPayloadText, putPayloadIndex } from "../../storage/payload-index";
import { newPayloadId, PAYLOAD_URI_PREFIX, payloadMetadata, putPayload } from "../../storage/payload-store";
import { signPayloadToken, SIGNED_URL_TTL_S } from "../../storage/signed-url";
import { offloadStream } from "./stream-offload";
import {
  onRequests,
  payloadOwner,
  withLargeAnswers,
  type CallContext,
  type LargeAnswerTaker,
  type Middleware,
} from "../../context/call-context";
import { namedAt } from "../../context/call-target";

export const OFFLOAD_META_KEY = "mcp-edge-gateway/offload";
/** Answers longer than this (and than the threshold) are streamed to R2 instead of held in memory. */
export const STREAM_ABOVE_BYTES = 8 * 1024 * 1024;

/** The data a result carries, how to read its shape, and its longest array. */
export type Payload = { text: string; contentType: string; schema: InferredSchema; array?: ArrayLocation | undefined };

const JSON_TYPE = "application/json";

/** The JSON a string holds, when it holds an object or an array; undefined otherwise. */
function jsonInside(text: string): { value: unknown } | undefined {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** A JSON payload: its text as it came, and what is read off its parsed value. */
function jsonPayload(text: string, value: unknown): Payload {
  return { text, contentType: JSON_TYPE, schema: inferSchema(value), array: largestArray(value) };
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

/**
 * The tool's data: `structuredContent` when the blocks beside it are only text (for SDK
 * servers, the same JSON again); the text of a lone text block; otherwise the whole
 * result, so that no image, resource or further block is lost.
 */
export function payloadOf(answer: string, result: JsonObject): Payload {
  const blocks = Array.isArray(result["content"]) ? result["content"] : [];
  const onlyText = blocks.every((block) => isObject(block) && block["type"] === "text");
  const structured = pathSpan(answer, ["result", "structuredContent"]);
  const content = result["structuredContent"];
  if (structured && "structuredContent" in result && onlyText) {
    // A lone string member holding JSON (`{"result": "<json>"}`, as some servers wrap a JSON text) is that JSON.
    const members = isObject(content) ? Object.values(content) : [];
    const wrapped = members.length === 1 && typeof members[0] === "string" ? jsonInside(members[0]) : undefined;
    if (wrapped) return jsonPayload(members[0] as string, wrapped.value);
    return jsonPayload(answer.slice(structured.start, structured.end), content);
  }
  const lone =
    blocks.length === 1 && !("structuredContent" in result) && onlyText
      ? (blocks[0] as { text?: unknown }).text
      : undefined;
  if (typeof lone === "string") {
    const inside = jsonInside(lone);
    if (inside) return jsonPayload(lone, inside.value);
    return { text: lone, contentType: "text/plain; charset=utf-8", schema: "string" };
  }
  const whole = pathSpan(answer, ["result"])!;
  return jsonPayload(answer.slice(whole.start, whole.end), result);
}

function applies(config: OffloadConfig, key: string): boolean {
  return (
    config.include.some((glob) => matchesGlob(glob, key)) && !config.exclude.some((glob) => matchesGlob(glob, key))
  );
}

/** How to read the rest, said with the payload's own structure: its longest array by its real pointer. */
export function instructions(id: string, size: number, contentType: string, array: ArrayLocation | undefined): string {
  const json = contentType.startsWith(JSON_TYPE);
  const how = !json
    ? `To read the rest, call the tool ${READ_PAYLOAD_TOOL} with {"id": "${id}", "byteOffset": 0, "byteLength": 16384} (the data is text, read by bytes); `
    : array
      ? `To read the rest, call the tool ${READ_PAYLOAD_TOOL} with {"id": "${id}", "pointer": ${JSON.stringify(array.pointer)}, "offset": 0, "limit": 50}: ` +
        `the longest array, ${array.count} items, is at the JSON Pointer ${JSON.stringify(array.pointer)}${array.pointer === "" ? " (the whole payload)" : ""}. ` +
        'Any other JSON Pointer into payloadSchema works too ("offset"/"limit" page through arrays), or "byteOffset"/"byteLength" for raw bytes; '
      : `To read the rest, call the tool ${READ_PAYLOAD_TOOL} with {"id": "${id}"} and a "pointer" (a JSON Pointer to a member that payloadSchema shows; "offset"/"limit" page through arrays), or "byteOffset"/"byteLength" for raw bytes; `;
  return (
    `The result was too large for an MCP response (${size} bytes), so the gateway stored it whole under payloadId. ` +
    `payloadSchema shows the structure and types of the data (not its values); payloadPreview shows its first characters${json ? " as raw JSON text" : ""}. ` +
    how +
    'follow "nextCursor" for more. ' +
    "The same data is at payloadUri (resources/read) and, over HTTP without MCP, at payloadUrl until it expires."
  );
}

/** What the compact answer is built from, however the payload was stored. */
type Stored = {
  payloadId: string;
  size: number;
  contentType: string;
  preview: string;
  schema: InferredSchema;
  structured: boolean;
  expiresAt: string;
  array?: ArrayLocation | undefined;
};

async function compactAnswer(ctx: CallContext, id: JsonRpcId, key: string, stored: Stored): Promise<string> {
  const urlExpiry = Math.min(
    Math.floor(Date.parse(stored.expiresAt) / 1000),
    Math.floor(Date.now() / 1000) + SIGNED_URL_TTL_S,
  );
  const token = await signPayloadToken(stored.payloadId, urlExpiry, ctx.services.sessionSecret);
  const envelope = {
    agentInstructions: instructions(stored.payloadId, stored.size, stored.contentType, stored.array),
    payloadId: stored.payloadId,
    payloadUri: `${PAYLOAD_URI_PREFIX}${stored.payloadId}`,
    payloadUrl: `${ctx.route.origin}/payloads/${stored.payloadId}?token=${encodeURIComponent(token)}`,
    payloadPreview: stored.preview,
    payloadSchema: stored.schema,
    originalSize: stored.size,
    truncated: true,
    contentType: stored.contentType,
    expiresAt: stored.expiresAt,
  };
  const link = {
    type: "resource_link",
    uri: envelope.payloadUri,
    name: `payload-${stored.payloadId}`,
    mimeType: stored.contentType,
    size: stored.size,
    description: `The full result of ${key}`,
  };
  return resultText(id, {
    content: [{ type: "text", text: JSON.stringify(envelope) }, link],
    ...(stored.structured ? { isError: true } : { structuredContent: envelope }),
    _meta: { [OFFLOAD_META_KEY]: { payloadId: stored.payloadId, originalSize: stored.size } },
  });
}

/** Whether `answer` takes more than `thresholdBytes` bytes of UTF-8. */
export function isOverThreshold(answer: string, thresholdBytes: number): boolean {
  // Cheap first: a UTF-16 length that cannot reach the threshold in UTF-8 bytes.
  return answer.length * 3 > thresholdBytes && byteLength(answer) > thresholdBytes;
}

/** What `offloadAnswer` stores: a JSON-RPC answer with a result, and whose it is. */
export type LargeAnswer = {
  readonly id: JsonRpcId;
  readonly upstream: string;
  /** The tool's name as listed (`<upstream>___<tool>`), or the gateway tool that answered. */
  readonly key: string;
  readonly answer: string;
  readonly config: OffloadConfig;
};

/**
 * Stores a result too large to return whole in R2 for the caller (`payloadOwner`) and
 * answers the compact envelope in its place: the start of the data, its inferred
 * structure, and the ways to read the rest. The offload middleware calls it for an
 * upstream's result; code mode for a program's returned value.
 *
 * @example
 * if (isOverThreshold(answer, config.thresholdBytes))
 *   return offloadAnswer(ctx, bucket, { id, upstream, key, answer, config });
 */
export async function offloadAnswer(
  ctx: CallContext,
  bucket: R2Bucket,
  { id, upstream, key, answer, config }: LargeAnswer,
): Promise<{ text: string; payloadId: string }> {
  const result = (JSON.parse(answer) as { result: JsonObject }).result;
  const payload = payloadOf(answer, result);
  const payloadId = newPayloadId();
  const metadata = payloadMetadata(payloadOwner(ctx), {
    upstream,
    tool: key,
    size: byteLength(payload.text),
    contentType: payload.contentType,
    ttlSeconds: config.ttlSeconds,
  });
  await putPayload(bucket, payloadId, payload.text, metadata);
  // The index lets pointer reads fetch byte ranges instead of the whole payload.
  const index = payload.contentType === JSON_TYPE ? indexPayloadText(payload.text, metadata.size) : undefined;
  if (index) await putPayloadIndex(bucket, payloadId, index);
  const text = await compactAnswer(ctx, id, key, {
    payloadId,
    size: metadata.size,
    contentType: payload.contentType,
    preview: payload.text.slice(0, config.previewChars),
    schema: payload.schema,
    structured: "structuredContent" in result,
    expiresAt: metadata.expiresAt,
    array: payload.array,
  });
  return { text, payloadId };
}

export type OffloadOptions = {
  /** Settings under the plan's (the configured OFFLOAD var over the built-in defaults). */
  readonly defaults?: OffloadConfig;
  /** How long an isolate trusts its copy of the plan. */
  readonly cacheTtlMs?: number;
  /** The live plan's override of those settings (src/chain.ts builds it from the filters' store). */
  readonly planOffload: PlanOffload;
};

/**
 * The offload middleware.
 *
 * @example
 * composeMiddleware([offload({ defaults: config.offload, planOffload }), outputFilters()], relay); // offload sees filtered results
 */
export function offload({
  defaults = DEFAULT_OFFLOAD,
  cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS,
  planOffload,
}: OffloadOptions): Middleware {
  return onRequests(
    (next) =>
      async function offload(ctx, request) {
        const { id, params } = request.message;
        const bucket = ctx.services.payloads;
        const name = params?.["name"];
        if (!bucket || typeof name !== "string" || name.startsWith(SYS_PREFIX)) return next(ctx, request);
        const tool = namedAt(ctx.target);
        if (!tool) return next(ctx, request);
        const { upstream, key } = tool;
        const settings = await offloadSettings(ctx.services.kv, defaults, cacheTtlMs, planOffload);
        if (!applies(settings, key)) return next(ctx, request);
        // A code-mode program's call keeps larger results whole (its caller's bound, context/call-context.ts).
        const thresholdBytes = Math.max(settings.thresholdBytes, ctx.keepWholeBytes ?? 0);
        const config = { ...settings, thresholdBytes };
        const metadataFor = (size: number, contentType: string) =>
          payloadMetadata(payloadOwner(ctx), { upstream, tool: key, size, contentType, ttlSeconds: config.ttlSeconds });

        // Answers too large to hold are streamed to R2 as they arrive.
        let streamedId: string | undefined;
        const largeAnswer: LargeAnswerTaker = {
          minBytes: Math.max(config.thresholdBytes, STREAM_ABOVE_BYTES),
          take: async (body) => {
            const payloadId = newPayloadId();
            let expiresAt = "";
            const streamed = await offloadStream(
              body,
              bucket,
              payloadId,
              (contentType) => {
                const metadata = metadataFor(-1, contentType);
                expiresAt = metadata.expiresAt;
                return metadata;
              },
              config.previewChars,
            );
            streamedId = payloadId;
            // Answered with the upstream message's own id, which is the relay's when it answers the call it forwarded
            // (an answer to another request is dropped as any stray: upstream/reply-body.ts, LargeAnswerTaker).
            if (streamed.messageId === undefined)
              throw new Error("the answer streamed to R2 has no id: it answers no request");
            return compactAnswer(ctx, streamed.messageId, key, { payloadId, ...streamed, expiresAt });
          },
        };
        const answered = await next(withLargeAnswers(ctx, { offload: largeAnswer }), request);
        // Measured without reading it: an answer under the threshold passes on as it came.
        if (answered.byteLength <= config.thresholdBytes) {
          // Already offloaded while streaming (the compact answer names the payload).
          return streamedId !== undefined && answered.text.includes(streamedId)
            ? answered.with({ payloadId: streamedId })
            : answered;
        }
        const answer = answered.text;
        if (!member(answer, rootSpan(answer), "result")) return answered; // errors pass as they are
        // What was streamed, if anything, was another request's answer (dropped): this one is offloaded as any other.
        if (streamedId !== undefined && answer.includes(streamedId)) return answered.with({ payloadId: streamedId });
        const compact = await offloadAnswer(ctx, bucket, { id, upstream, key, answer, config });
        return answered.withText(compact.text).with({ payloadId: compact.payloadId });
      },
  );
}
