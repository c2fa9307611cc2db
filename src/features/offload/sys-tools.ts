/**
 * The gateway's own tools and resources (the virtual upstream `sys`): reading back what
 * offload stored. `sys___read_payload` answers on every route, and so do payload URIs
 * (`mcp-edge-gateway://payloads/{id}`) in resources/read. Each route lists the read path
 * its own answers name: /mcp always lists the tool (under the same name, which the
 * `sys` prefix keeps apart from upstream names) and the payload template; /mcp/<upstream>
 * lists them only when offload can happen on that route (R2 bound, and the offload
 * settings' include/exclude globs can take tools of that upstream), so a route whose
 * answers are never offloaded stays a byte-for-byte image of its upstream. None of this
 * is ever forwarded.
 *
 * The `sys___` names are the gateway's alone. On /mcp an upstream's names carry its own
 * prefix, but on /mcp/<upstream> they pass unchanged, so an upstream tool or prompt named
 * `sys___…` would pass for one of the gateway's (and be exempt from personas): it is
 * hidden from lists (with a warning in the log) and never called; a call or prompt of a
 * `sys___` name the gateway does not answer itself is an unknown tool or prompt.
 */
import { GatewayError } from "../../core/errors";
import { GatewayFailure } from "../../core/failures";
import { isObject, resultText, type JsonRpcId } from "../../core/jsonrpc";
import { appendListed, keepListed } from "../../core/raw-json-lists";
import { findPayload, PAYLOAD_URI_PREFIX, payloadNotFoundMessage, readPayload } from "../../storage/payload-store";
import { MAX_SLICE_BYTES, readSlice, sliceRequest } from "../../storage/payload-reader";
import { onRequests, payloadCaller, type CallContext, type Middleware } from "../../context/call-context";
import { Answer } from "../../context/answer";
import { READ_PAYLOAD_TOOL, SYS_PREFIX } from "../../core/names";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { DEFAULT_OFFLOAD } from "./offload-config";
import type { OffloadConfig } from "./offload-override";
import { offloadSettings, type PlanOffload } from "./offload-settings";

/** A payload read whole by resources/read (without slice parameters) up to this size. */
const RESOURCE_WHOLE_MAX_BYTES = MAX_SLICE_BYTES;
const RESOURCE_NOT_FOUND = -32002;
/** `_meta` of a pointer read: what it fetched from R2 (`fetchedBytes`, `ranges`). */
export const READ_META_KEY = "mcp-edge-gateway/read";

/** The read tool as listed. */
export const READ_PAYLOAD_DEFINITION = {
  name: READ_PAYLOAD_TOOL,
  title: "Read a stored payload",
  description:
    "Reads a slice of a tool result that was too large to return and was stored by the gateway (see payloadId in that result). " +
    "Give a JSON Pointer with offset/limit to page through an array (or a long string), or byteOffset/byteLength for raw bytes. " +
    "Pass nextCursor from an answer as cursor to continue.",
  inputSchema: {
    type: "object",
    properties: {
      id: { type: "string", pattern: "^[0-9a-f]{32}$", description: "payloadId of the stored result" },
      pointer: {
        type: "string",
        description: 'JSON Pointer into the payload, e.g. "/items" (default: the whole payload)',
      },
      offset: { type: "integer", minimum: 0, description: "first array item (or string character) to return" },
      limit: { type: "integer", minimum: 1, maximum: 1000, description: "how many items to return (default 50)" },
      byteOffset: { type: "integer", minimum: 0, description: "read raw bytes from here instead" },
      byteLength: { type: "integer", minimum: 1, maximum: MAX_SLICE_BYTES },
      cursor: { type: "string", description: "nextCursor from a previous answer" },
    },
    required: ["id"],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

const PAYLOAD_TEMPLATE = {
  uriTemplate: `${PAYLOAD_URI_PREFIX}{id}{?pointer,offset,limit,byteOffset,byteLength,cursor}`,
  name: "payload",
  title: "A stored oversized result",
  description:
    "A tool result the gateway stored because it was too large; slice it with the query parameters of sys___read_payload.",
  mimeType: "application/json",
};

/** Whether some tool key `<upstream>___...` may match `glob` (judged by the glob's literal start). */
function mayMatchUpstream(glob: string, prefix: string): boolean {
  const literal = glob.split(/[*?]/)[0]!;
  return literal.startsWith(prefix) || prefix.startsWith(literal);
}

/** Whether a result of `upstream` can be offloaded under `config`: an include may take its tools and no exclude takes them all. */
export function mayOffloadUpstream(config: OffloadConfig, upstream: string): boolean {
  const prefix = `${upstream}___`;
  const excludedAll = config.exclude.some(
    (glob) => glob.indexOf("*") === glob.length - 1 && !glob.includes("?") && prefix.startsWith(glob.slice(0, -1)),
  );
  return !excludedAll && config.include.some((glob) => mayMatchUpstream(glob, prefix));
}

/** Whether this route lists the read tool and the payload template. */
async function listsReadPath(ctx: CallContext, options: Required<SysToolOptions>): Promise<boolean> {
  if (ctx.route.kind === "aggregated") return true;
  return mayOffloadUpstream(
    await offloadSettings(ctx.services.kv, options.offloadDefaults, options.cacheTtlMs, options.planOffload),
    ctx.route.upstream.name,
  );
}

async function readPayloadTool(ctx: CallContext, bucket: R2Bucket, id: JsonRpcId, args: unknown): Promise<string> {
  const fail = (message: string) => resultText(id, { content: [{ type: "text", text: message }], isError: true });
  if (!isObject(args) || typeof args["id"] !== "string")
    return fail(`${READ_PAYLOAD_TOOL} needs {"id": "<payloadId>"}`);
  const request = sliceRequest(args);
  if (typeof request === "string") return fail(`${READ_PAYLOAD_TOOL}: ${request}`);
  const answer = await readSlice(bucket, args["id"], payloadCaller(ctx), request);
  if (!answer.ok) return fail(answer.message);
  const meta = answer.stats ? { _meta: { [READ_META_KEY]: answer.stats } } : {};
  return resultText(id, {
    content: [{ type: "text", text: JSON.stringify(answer.slice) }],
    structuredContent: answer.slice,
    ...meta,
  });
}

async function readPayloadResource(ctx: CallContext, bucket: R2Bucket, id: JsonRpcId, uri: string): Promise<string> {
  const url = new URL(uri);
  const payloadId = url.pathname.replace(/^\//, "");
  const params = Object.fromEntries(url.searchParams);
  const why = () => payloadNotFoundMessage(payloadId, payloadCaller(ctx));
  const notFound = () =>
    new GatewayError(200, RESOURCE_NOT_FOUND, `Resource not found: ${uri} (${why()})`, { uri }, id);
  if (Object.keys(params).length === 0) {
    const found = await findPayload(bucket, payloadId, { owner: payloadCaller(ctx) });
    if (found.state !== "found") throw notFound();
    if (found.metadata.size <= RESOURCE_WHOLE_MAX_BYTES) {
      const object = await readPayload(bucket, payloadId);
      if (!object) throw notFound();
      return resultText(id, { contents: [{ uri, mimeType: found.metadata.contentType, text: await object.text() }] });
    }
  }
  const request = sliceRequest(params);
  if (typeof request === "string") throw new GatewayError(200, -32602, `Invalid params: ${request}`, undefined, id);
  const answer = await readSlice(bucket, payloadId, payloadCaller(ctx), request);
  if (!answer.ok) {
    if (answer.reason === "not-found") throw notFound();
    throw new GatewayError(200, -32602, `Invalid params: ${answer.message}`, undefined, id);
  }
  return resultText(id, { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(answer.slice) }] });
}

/** True for a name in the gateway's own namespace (`sys___…`). */
function isSysName(name: unknown): name is string {
  return typeof name === "string" && name.startsWith(SYS_PREFIX);
}

/** A `sys___` name the gateway does not answer: refused as the relay refuses a name nothing serves, never forwarded. */
function unknownSysName(label: "tool" | "prompt", name: string, id: JsonRpcId): GatewayFailure {
  return new GatewayFailure({ reason: "unknown-name", label, name }, id);
}

/** A list of /mcp/<upstream> without the upstream's `sys___` items (on /mcp every upstream name carries its upstream's prefix). */
function withoutUpstreamSysNames(ctx: CallContext, text: string, key: "tools" | "prompts"): string {
  const { route } = ctx;
  if (route.kind === "aggregated") return text;
  return keepListed(text, key, (name) => {
    if (!isSysName(name)) return true;
    console.warn(
      `mcp-edge-gateway: ${key}/list: upstream "${route.upstream.name}" lists ${JSON.stringify(name.slice(0, 80))}, a name of the gateway's own; hidden, and never called`,
    );
    return false;
  });
}

export type SysToolOptions = {
  /** Offload settings under the plan's: they decide whether /mcp/<upstream> lists the read path. */
  readonly offloadDefaults?: OffloadConfig;
  /** How long an isolate trusts its copy of the plan. */
  readonly cacheTtlMs?: number;
  /** The live plan's override of those settings (src/chain.ts builds it from the filters' store). */
  readonly planOffload: PlanOffload;
};

/**
 * The sys-tools middleware for tool calls: `sys___read_payload` is answered here, any other
 * `sys___` name is refused (src/chain.ts declares it for tool calls only).
 *
 * @example
 * composeMiddleware([sysToolCalls(), offload()], relay);
 */
export function sysToolCalls(): Middleware {
  return onRequests(
    (next) =>
      async function sysToolCalls(ctx, request) {
        const bucket = ctx.services.payloads;
        const { id, params } = request.message;
        if (bucket && params?.["name"] === READ_PAYLOAD_TOOL)
          return Answer.ofText(await readPayloadTool(ctx, bucket, id, params["arguments"]));
        if (isSysName(params?.["name"])) throw unknownSysName("tool", params["name"], id);
        return next(ctx, request);
      },
  );
}

/** The methods {@link sysTools} handles (tool calls are {@link sysToolCalls}'). */
export const SYS_TOOL_METHODS: readonly string[] = [
  "prompts/get",
  "completion/complete",
  "resources/read",
  "tools/list",
  "prompts/list",
  "resources/templates/list",
];

/**
 * The sys-tools middleware for everything but tool calls: answers what belongs to the
 * gateway itself (reads of offloaded payloads) and keeps the gateway's names out of lists.
 *
 * @example
 * composeMiddleware([sysTools({ planOffload }), offload({ planOffload }), outputFilters()], relay);
 */
export function sysTools({
  offloadDefaults = DEFAULT_OFFLOAD,
  cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS,
  planOffload,
}: SysToolOptions): Middleware {
  const options = { offloadDefaults, cacheTtlMs, planOffload };
  return onRequests(
    (next) =>
      async function sysTools(ctx, request) {
        const bucket = ctx.services.payloads;
        const { method, id, params } = request.message;
        const firstPage = params?.["cursor"] === undefined;
        switch (method) {
          case "prompts/get":
            if (isSysName(params?.["name"])) throw unknownSysName("prompt", params["name"], id);
            break;
          case "completion/complete": {
            const ref = params?.["ref"];
            if (isObject(ref) && ref["type"] === "ref/prompt" && isSysName(ref["name"]))
              throw unknownSysName("prompt", ref["name"], id);
            break;
          }
          case "resources/read":
            if (bucket && typeof params?.["uri"] === "string" && params["uri"].startsWith(PAYLOAD_URI_PREFIX))
              return Answer.ofText(await readPayloadResource(ctx, bucket, id, params["uri"]));
            break;
          case "tools/list": {
            const answer = (await next(ctx, request)).map((text) => withoutUpstreamSysNames(ctx, text, "tools"));
            return bucket && firstPage && (await listsReadPath(ctx, options))
              ? answer.map((text) => appendListed(text, "tools", READ_PAYLOAD_DEFINITION))
              : answer;
          }
          case "prompts/list":
            return (await next(ctx, request)).map((text) => withoutUpstreamSysNames(ctx, text, "prompts"));
          case "resources/templates/list":
            if (bucket && firstPage && (await listsReadPath(ctx, options)))
              return (await next(ctx, request)).map((text) =>
                appendListed(text, "resourceTemplates", PAYLOAD_TEMPLATE),
              );
            break;
        }
        return next(ctx, request);
      },
  );
}
