/**
 * Catalog modes (`CATALOG_MODES` in context/grant.ts) around the whole pipeline. In `full` nothing
 * changes. In `compact` tools/list is shortened (compact.ts) and `sys___describe_tools`
 * answers full definitions. In `search` tools/list holds only the gateway's own tools;
 * `sys___search_tools` ranks the caller's catalog (search-index.ts; by meaning too when
 * the operator binds Workers AI as `AI`: semantic-ranking.ts) and
 * `sys___call_tool` runs a tool found there.
 *
 * This layer wraps the pipeline from outside (the audit trail included) because a call
 * through `sys___call_tool` must be the direct call itself: it is rewritten into the
 * `tools/call` of the named tool, with every other parameter as the client sent it
 * (`_meta`, progress token, task, `inputResponses`/`requestState` of a retry), and handed
 * to the pipeline, so visibility, personas, rate limits, pins, rules, filters, offload,
 * audit (under the inner tool's name), client logging, progress and the client's answers
 * to sampling or elicitation apply to it exactly as to a direct call. The catalog a
 * search ranks is the caller's own tools/list, asked through the same pipeline: a tool the
 * caller may not see is never found, and calling it is refused as a direct call is.
 *
 * The mode is read per request (the URL's `?catalog=`, else the caller's persona, else
 * full), not sealed into a 2025 session: a client keeps its URL for every request, the
 * 2026-07-28 revision has no session to seal it in, and an operator's change to a
 * persona applies at the next request.
 */
import { GatewayFailure } from "../../core/failures";
import {
  isObject,
  resultText,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type WireMessage,
} from "../../core/jsonrpc";
import { appendListed, keepListed } from "../../core/raw-json-lists";
import { pathSpan, removeMemberSplice, splice } from "../../core/raw-json";
import { SYS_PREFIX } from "../../core/names";
import type { AuthConfig } from "../../config/auth-config";
import type { CallContext, ClientMessage, EmbeddingsBinding, Handler } from "../../context/call-context";
import { Answer } from "../../context/answer";
import type { CatalogMode } from "../../context/grant";
import { NO_PERSONA } from "../personas/authorization";
import { compactList } from "./compact";
import {
  CALL_TOOL,
  CALL_TOOL_DEFINITION,
  CATALOG_TOOLS,
  DEFAULT_SEARCH_LIMIT,
  DESCRIBE_TOOLS,
  DESCRIBE_TOOLS_DEFINITION,
  MAX_DESCRIBE_NAMES,
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
  SEARCH_TOOLS,
  SEARCH_TOOLS_DEFINITION,
} from "./definitions";
import { loadSearch } from "./search";
import { definitionsOf, visibleCatalog, type Catalog } from "./visible-catalog";
import { withReferencedArguments } from "./arguments-from";

export type CatalogModeOptions = {
  /** Personas choose a mode only when authentication is on. */
  readonly auth: AuthConfig | { readonly mode: "missing" };
  /** Wraps the handler of the catalog tools in the record layer and the audit trail, as the pipeline is. */
  readonly observe?: (handler: Handler) => Handler;
  /** The `code` mode's part (features/code-mode), plugged in by the composition root (src/chain.ts). */
  readonly codeMode: CodeModePlug;
};

/** What the `code` mode adds to the list and the dispatch here. */
export type CodeModePlug = {
  /** Throws the JSON-RPC error a call in code mode gets when the Worker cannot run code. */
  readonly requireLoader: (ctx: CallContext, id: JsonRpcId) => void;
  /** The tools a code-mode list shows besides the gateway's own. */
  readonly definitions: readonly object[];
  /** The names of those tools, answered by `tools`. */
  readonly names: readonly string[];
  /** The handler of those tools, recorded and audited by `observe` as any call is. */
  readonly tools: (pipeline: Handler, options: Required<Pick<CatalogModeOptions, "auth" | "observe">>) => Handler;
};

async function modeOf(ctx: CallContext, { auth }: CatalogModeOptions): Promise<CatalogMode> {
  if (ctx.route.catalog) return ctx.route.catalog;
  if (auth.mode !== "on") return "full";
  return (await ctx.grant())?.catalog ?? "full";
}

/** A tool result the model can read (bad arguments are told this way, not as protocol errors). */
function toolAnswer(id: JsonRpcId, text: string, isError = false): string {
  return resultText(id, { content: [{ type: "text", text }], ...(isError ? { isError: true } : {}) });
}

/** A JSON object written by hand around raw definitions, so that each stays byte for byte. */
function withDefinitions(fields: JsonObject, raws: readonly string[]): string {
  const head = JSON.stringify(fields).slice(0, -1);
  return `${head}${head.length > 1 ? "," : ""}"tools":[${raws.join(",")}]}`;
}

function upstreamsOf(catalog: Catalog): string {
  const counts = new Map<string, number>();
  for (const tool of catalog.tools) counts.set(tool.upstream, (counts.get(tool.upstream) ?? 0) + 1);
  return [...counts].map(([name, count]) => `${name || "(gateway)"} (${count})`).join(", ");
}

/** Searches `catalog` for a call of sys___search_tools; by meaning too when `ai` (the operator's Workers AI binding) is there. */
async function search(
  id: JsonRpcId,
  catalog: Catalog,
  args: unknown,
  ai: EmbeddingsBinding | undefined,
): Promise<string> {
  if (!isObject(args) || typeof args["query"] !== "string")
    return toolAnswer(id, `${SEARCH_TOOLS} needs {"query": "<the task, in words>"}`, true);
  const limit = args["limit"] ?? DEFAULT_SEARCH_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
    return toolAnswer(id, `${SEARCH_TOOLS}: limit is a whole number from 1 to ${MAX_SEARCH_LIMIT}`, true);
  const upstream = args["upstream"];
  if (upstream !== undefined && typeof upstream !== "string")
    return toolAnswer(id, `${SEARCH_TOOLS}: upstream is the name of an upstream server`, true);
  const query = args["query"].slice(0, MAX_QUERY_CHARS);
  const total = catalog.tools.filter((tool) => upstream === undefined || tool.upstream === upstream).length;
  const fields: JsonObject = { query, matched: 0, total };
  if (catalog.truncated)
    fields["truncated"] = "the catalog is larger than the gateway searches; narrow it with upstream";
  if (query.trim() === "") {
    const first = catalog.tools.filter((tool) => upstream === undefined || tool.upstream === upstream).slice(0, limit);
    fields["note"] =
      `An empty query ranks nothing: these are the first ${first.length} of ${total} tools. Describe the task in words to find the tools that serve it. Upstreams: ${upstreamsOf(catalog)}.`;
    return toolAnswer(
      id,
      withDefinitions(
        fields,
        first.map((tool) => tool.raw),
      ),
    );
  }
  const request = { query, limit, ...(upstream !== undefined ? { upstream } : {}) };
  const found = await (await loadSearch()).search(catalog, request, ai);
  fields["matched"] = found.matched;
  if ("ranking" in found) fields["ranking"] = found.ranking;
  if (found.matched === 0) {
    fields["note"] =
      `No tool matched. Try other words: what to act on ("issue", "message", "page") and what to do ("create", "list", "close"). Upstreams: ${upstreamsOf(catalog) || "(none: you may use no tools)"}.`;
  } else {
    fields["note"] = `Run one with ${CALL_TOOL} {"name": <name>, "arguments": {...}}.`;
  }
  return toolAnswer(
    id,
    withDefinitions(
      fields,
      found.tools.map((tool) => tool.raw),
    ),
  );
}

function describe(id: JsonRpcId, catalog: Catalog, args: unknown): string {
  const names = isObject(args) ? args["names"] : undefined;
  if (
    !Array.isArray(names) ||
    names.length === 0 ||
    names.length > MAX_DESCRIBE_NAMES ||
    !names.every((name) => typeof name === "string")
  ) {
    return toolAnswer(
      id,
      `${DESCRIBE_TOOLS} needs {"names": [...]}, 1 to ${MAX_DESCRIBE_NAMES} tool names as listed`,
      true,
    );
  }
  const { found, unknown } = definitionsOf(catalog, names as string[]);
  return toolAnswer(
    id,
    withDefinitions(
      unknown.length > 0 ? { unknown } : {},
      found.map((tool) => tool.raw),
    ),
  );
}

/**
 * The `tools/call` of the tool `sys___call_tool` names: the request's raw text with
 * `params.name` and `params.arguments` replaced (every other byte kept), or why not.
 */
function innerCall(request: WireMessage<JsonRpcRequest>): WireMessage<JsonRpcRequest> | string {
  const args = request.message.params?.["arguments"];
  if (!isObject(args) || typeof args["name"] !== "string" || args["name"] === "")
    return `${CALL_TOOL} needs {"name": "<tool name from ${SEARCH_TOOLS}>", "arguments": {...}}`;
  const name = args["name"];
  if (CATALOG_TOOLS.has(name)) return `${CALL_TOOL} runs the tools ${SEARCH_TOOLS} finds; call ${name} directly`;
  const inner = args["arguments"] ?? {};
  if (!isObject(inner)) return `${CALL_TOOL}: arguments is an object (the tool's arguments)`;
  const message: JsonRpcRequest = { ...request.message, params: { ...request.message.params, name, arguments: inner } };
  const { text } = request;
  const params = pathSpan(text, ["params"]);
  const nameSpan = params && pathSpan(text, ["name"], params);
  const argsSpan = params && pathSpan(text, ["arguments"], params);
  // The text always holds what the message does; a front that handed another shape gets it re-serialised.
  if (!nameSpan || !argsSpan) return { text: JSON.stringify(message), message };
  const innerSpan = pathSpan(text, ["arguments"], argsSpan);
  const edits = [
    { span: nameSpan, raw: JSON.stringify(name) },
    { span: argsSpan, raw: innerSpan ? text.slice(innerSpan.start, innerSpan.end) : "{}" },
  ];
  return { text: splice(text, edits), message };
}

/**
 * An unknown tool's failure from the inner call, pointing at the search tool; any other
 * error as it is. Told by the failure's type (`unknown-name` of a tool), never its words.
 *
 * @example
 * throw pointToSearch(error, id);
 */
export function pointToSearch(error: unknown, id: JsonRpcId): unknown {
  if (!(error instanceof GatewayFailure)) return error;
  const { failure } = error;
  if (failure.reason !== "unknown-name" || failure.label !== "tool") return error;
  const hint = `not a tool you may use, or no longer listed: find tools with ${SEARCH_TOOLS}`;
  return new GatewayFailure({ ...failure, hints: [...(failure.hints ?? []), hint] }, error.id ?? id, error.era);
}

/** A search (or code) mode list: the gateway's own tools only, the catalog tools added, no further pages. */
function searchList(text: string, added: readonly object[] = [SEARCH_TOOLS_DEFINITION, CALL_TOOL_DEFINITION]): string {
  const own = keepListed(text, "tools", (name) => name?.startsWith(SYS_PREFIX) === true);
  const result = pathSpan(own, ["result"]);
  const cursor =
    result && own.charCodeAt(result.start) === 0x7b ? removeMemberSplice(own, result, "nextCursor") : undefined;
  return appendListed(cursor ? splice(own, [cursor]) : own, "tools", ...added);
}

/**
 * Wraps the pipeline in the catalog modes, for tool lists and tool calls (src/chain.ts declares it for
 * those two only): `pipeline` must take any request, as the searches and found calls sent through it do.
 *
 * @example
 * const handle = catalogModes(auditTrail(recorded, { config: config.audit }), { auth });
 */
export function catalogModes(pipeline: Handler, options: CatalogModeOptions): Handler {
  const { observe = (handler: Handler) => handler } = options;
  // Searches and descriptions are answered here, but recorded and audited like any call.
  const catalogTools = observe(async function catalogTools(ctx, message) {
    const { id, params } = (message as Extract<ClientMessage, { kind: "request" }>).wire.message;
    if (options.auth.mode === "on") ctx.record.persona = (await ctx.grant())?.persona ?? NO_PERSONA;
    const catalog = await visibleCatalog(pipeline, ctx, id);
    return Answer.ofText(
      params?.["name"] === SEARCH_TOOLS
        ? await search(id, catalog, params["arguments"], ctx.services.embeddings)
        : describe(id, catalog, params?.["arguments"]),
    );
  });
  const codeMode = options.codeMode;
  const codeTools = codeMode.tools(pipeline, { auth: options.auth, observe });
  return async function catalogModes(ctx, message) {
    if (message.kind !== "request") return pipeline(ctx, message);
    const request = message.wire;
    const { method, id, params } = request.message;
    const mode = await modeOf(ctx, options);
    if (mode === "full") return pipeline(ctx, message);
    if (mode === "code") codeMode.requireLoader(ctx, id);
    if (method === "tools/list") {
      const answer = (await pipeline(ctx, message))!;
      const text = answer.text;
      if (mode === "search") return answer.withText(searchList(text));
      if (mode === "code") return answer.withText(searchList(text, codeMode.definitions));
      const compact = compactList(text);
      return answer.withText(
        params?.["cursor"] === undefined ? appendListed(compact, "tools", DESCRIBE_TOOLS_DEFINITION) : compact,
      );
    }
    const name = params?.["name"];
    if ((mode === "compact" && name === DESCRIBE_TOOLS) || (mode === "search" && name === SEARCH_TOOLS))
      return catalogTools(ctx, message);
    if (mode === "code" && typeof name === "string" && codeMode.names.includes(name)) return codeTools(ctx, message);
    if (mode === "search" && name === CALL_TOOL) {
      const resolved = await withReferencedArguments(ctx, request);
      if (typeof resolved === "string") return Answer.ofText(toolAnswer(id, `${CALL_TOOL}: ${resolved}`, true));
      const inner = innerCall(resolved);
      if (typeof inner === "string") return Answer.ofText(toolAnswer(id, inner, true));
      try {
        return await pipeline(ctx, { kind: "request", wire: inner });
      } catch (error) {
        throw pointToSearch(error, id);
      }
    }
    return pipeline(ctx, message);
  };
}
