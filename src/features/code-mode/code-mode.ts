/**
 * The `code` catalog mode (context/grant.ts): tools/list holds the gateway's own
 * tools only, and of the catalog tools `sys___search_tools`, which answers TypeScript
 * declarations of the tools that match a task (declarations.ts), and `sys___run_code`,
 * which runs a program against them in a sandbox (run-code.ts). Each tool call of a
 * program is a direct call through the pipeline (inner-call.ts). The catalog a search
 * ranks and a program gets is the caller's own tools/list, asked through the same
 * pipeline (catalog/visible-catalog.ts): a tool the caller may not see is neither
 * declared nor in `tools`.
 *
 * The sandbox is the Worker Loader binding `LOADER` (wrangler.toml `[[worker_loaders]]`);
 * without it the mode is refused, with a message naming the binding.
 */
import { GatewayError } from "../../core/errors";
import { INVALID_REQUEST, type JsonRpcId } from "../../core/jsonrpc";
import type { AuthConfig } from "../../config/auth-config";
import type { CallContext, ClientMessage, Handler, SignInElicitation } from "../../context/call-context";
import { Answer } from "../../context/answer";
import type { OffloadConfig } from "../offload/offload-override";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { DEFAULT_OFFLOAD } from "../offload/offload-config";
import { isOverThreshold, offloadAnswer } from "../offload/offload";
import { offloadSettings, type PlanOffload } from "../offload/offload-settings";
import { signInLinksAnswer } from "../upstream-sign-in/sign-in-required";
import { NO_PERSONA } from "../personas/authorization";
import { MAX_QUERY_CHARS, SEARCH_TOOLS, searchInputSchema } from "../catalog/definitions";
import { loadSearch } from "../catalog/search";
import { visibleCatalog } from "../catalog/visible-catalog";
import type { CodeModePlug } from "../catalog/catalog-modes";
import { loadCodeModeLibrary } from "./library-loader";
import { callThroughPipeline } from "./inner-call";
import { LOADER_BINDING, RUN_CODE } from "./names";
import { MAX_CODE_CHARS, MAX_LOG_BYTES, MAX_TOOL_CALLS_PER_RUN, RUN_WALL_TIME_MS } from "./limits";

export { RUN_CODE };

export const CODE_SEARCH_DEFINITION = {
  name: SEARCH_TOOLS,
  title: "Search the tools, as TypeScript",
  description:
    "Finds the tools that serve a task among every tool you may use (they are not listed) and answers " +
    "their TypeScript declarations, as methods of `tools.<upstream>`. Describe the task in words. " +
    `Then write a program that calls them and run it with ${RUN_CODE}.`,
  inputSchema: searchInputSchema("declare"),
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const RUN_CODE_DEFINITION = {
  name: RUN_CODE,
  title: "Run a program that calls tools",
  description:
    "Runs JavaScript (not TypeScript), the body of an async function, in a sandbox without network. " +
    `It gets \`tools.<upstream>.<tool>(args)\` for the tools ${SEARCH_TOOLS} declares (each returns a Promise ` +
    "of the tool's structured result, or its text, parsed when it is JSON; a tool error rejects) and " +
    "`console.log`. Loop, filter and combine there, and `return` only what you need: it is the answer, as JSON. " +
    `At most ${MAX_TOOL_CALLS_PER_RUN} tool calls and ${RUN_WALL_TIME_MS / 1000} s per run; ` +
    `${MAX_LOG_BYTES / 1024} KiB of logs.`,
  inputSchema: {
    type: "object",
    properties: {
      code: {
        type: "string",
        maxLength: MAX_CODE_CHARS,
        description: 'e.g. const r = await tools.github.list_issues({ state: "open" }); return r.items.length;',
      },
    },
    required: ["code"],
  },
};

/** The Worker Loader binding of `ctx`'s Worker, when it has one. */
function loaderOf(ctx: CallContext): WorkerLoader | undefined {
  const binding: unknown = ctx.services.env[LOADER_BINDING];
  const isLoader =
    typeof binding === "object" && binding !== null && typeof (binding as { load?: unknown }).load === "function";
  return isLoader ? (binding as WorkerLoader) : undefined;
}

/** Refuses code mode on a Worker without its binding. */
export function requireLoader(ctx: CallContext, id: JsonRpcId): void {
  if (loaderOf(ctx)) return;
  throw new GatewayError(
    200,
    INVALID_REQUEST,
    `The code catalog mode needs the Worker Loader binding ${LOADER_BINDING} ` +
      `(wrangler.toml: [[worker_loaders]] binding = "${LOADER_BINDING}"); use another mode (see docs/code-mode.md)`,
    undefined,
    id,
  );
}

/**
 * The handler of code mode's own tools, recorded and audited by `observe` as any call is:
 * a run for `sys___run_code`, declarations for `sys___search_tools` (the only other name
 * catalog-modes.ts hands it).
 *
 * @example
 * const codeTools = codeModeTools(pipeline, { auth, observe }, { offloadDefaults: config.offload, planOffload });
 */
export function codeModeTools(
  pipeline: Handler,
  { auth, observe }: { auth: AuthConfig | { readonly mode: "missing" }; observe: (handler: Handler) => Handler },
  { offloadDefaults = DEFAULT_OFFLOAD, cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS, planOffload }: CodeModeOptions,
): Handler {
  return observe(async function codeModeTools(ctx: CallContext, message: ClientMessage) {
    const request = (message as Extract<ClientMessage, { kind: "request" }>).wire.message;
    if (auth.mode === "on") ctx.record.persona = (await ctx.grant())?.persona ?? NO_PERSONA;
    // Listed while the library loads and, for a run, while its sandbox starts.
    const catalog = visibleCatalog(pipeline, ctx, request.id);
    catalog.catch(() => {}); // Awaited below; this only keeps a failure from counting as unhandled meanwhile.
    const { declarationsAnswer, runAnswer } = await loadCodeModeLibrary();
    if (request.params?.["name"] === RUN_CODE) {
      const links = new Map<string, SignInElicitation>();
      const signIn = (link: SignInElicitation) => void (links.has(link.upstream) || links.set(link.upstream, link));
      const call = (name: string, args: string, seq: number, runId: string) =>
        callThroughPipeline({ pipeline, ctx, outer: request, runId, signIn }, name, args, seq);
      const offload = async (answer: string) => {
        const bucket = ctx.services.payloads;
        const config = bucket && (await offloadSettings(ctx.services.kv, offloadDefaults, cacheTtlMs, planOffload));
        if (!bucket || !config || !isOverThreshold(answer, config.thresholdBytes)) return answer;
        const compact = await offloadAnswer(ctx, bucket, {
          id: request.id,
          upstream: "sys",
          key: RUN_CODE,
          answer,
          config,
        });
        ctx.record.payloadId = compact.payloadId; // for observers (audit), as the record layer does for a call's answer
        return compact.text;
      };
      const answer = await runAnswer({ loader: loaderOf(ctx)!, request, catalog, record: ctx.record, call, offload });
      return Answer.ofText(links.size > 0 ? signInLinksAnswer(ctx, request.id, answer, [...links.values()]) : answer);
    }
    const ai = ctx.services.embeddings;
    const listed = await catalog;
    const declared = await declarationsAnswer(request.id, listed, request.params?.["arguments"], async (ranked) => {
      const bounded = { ...ranked, query: ranked.query.slice(0, MAX_QUERY_CHARS) };
      return (await (await loadSearch()).search(listed, bounded, ai)).tools;
    });
    return Answer.ofText(declared);
  });
}

export type CodeModeOptions = {
  /** Offload settings under the plan's: a program's large returned value is offloaded as any large result. */
  readonly offloadDefaults?: OffloadConfig;
  /** How long an isolate trusts its copy of the plan. */
  readonly cacheTtlMs?: number;
  /** The live plan's override of the offload settings (src/chain.ts builds it from the filters' store). */
  readonly planOffload: PlanOffload;
};

/**
 * The `code` mode's part of catalog/catalog-modes.ts, plugged in by src/chain.ts.
 *
 * @example
 * catalogModes(pipeline, { auth, observe, codeMode: codeMode({ offloadDefaults: config.offload, planOffload }) });
 */
export function codeMode(options: CodeModeOptions): CodeModePlug {
  return {
    requireLoader,
    definitions: [CODE_SEARCH_DEFINITION, RUN_CODE_DEFINITION],
    names: [SEARCH_TOOLS, RUN_CODE],
    tools: (pipeline, plugged) => codeModeTools(pipeline, plugged, options),
  };
}
