/**
 * The answers of code mode's two tools, loaded with the lazy module (lazy-entry.ts) so the
 * main module keeps only the glue (code-mode.ts): `sys___search_tools` answers the
 * declarations of the tools a ranking found; `sys___run_code` runs the program
 * (run-code.ts) and answers its value and logs, or its failure with the line. The caller's
 * catalog, the ranking and the inner call are handed in by the main module, which owns the
 * pipeline they run through.
 */
import { bytesToBase64Url } from "../../core/base64url";
import { isObject, resultText, type JsonRpcId, type JsonRpcRequest } from "../../core/jsonrpc";
import { randomHexId } from "../../core/ids";
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SEARCH_TOOLS } from "../catalog/definitions";
import type { Catalog, CatalogTool } from "../catalog/visible-catalog";
import { toolDeclarations, toolIdentifiers } from "./declarations";
import type { InnerAnswer } from "./inner-call";
import { toolOutcome } from "./tool-outcome";
import { MAX_CODE_CHARS, MAX_LOG_BYTES } from "./limits";
import { RUN_CODE } from "./names";
import { runProgram, type RunOutcome, type RunTiming } from "./run-code";

/** Ranks the catalog for a search: the tools found, best first. */
export type Rank = (request: { query: string; limit: number; upstream?: string }) => Promise<readonly CatalogTool[]>;

/** `_meta` key of a run's answer: where its time went (RunTiming), for operators and `npm run bench:code`. */
export const RUN_META_KEY = "mcp-edge-gateway/code-run";

function toolAnswer(id: JsonRpcId, texts: readonly string[], isError = false, timing?: RunTiming): string {
  const result: Record<string, unknown> = { content: texts.map((text) => ({ type: "text", text })) };
  if (isError) result["isError"] = true;
  if (timing) result["_meta"] = { [RUN_META_KEY]: timing };
  return resultText(id, result);
}

/**
 * The answer of a search: the declarations of the tools `rank` finds for its arguments.
 *
 * @example
 * await declarationsAnswer(request.id, catalog, request.params?.arguments, rank);
 */
export async function declarationsAnswer(id: JsonRpcId, catalog: Catalog, args: unknown, rank: Rank): Promise<string> {
  if (!isObject(args) || typeof args["query"] !== "string") {
    return toolAnswer(id, [`${SEARCH_TOOLS} needs {"query": "<the task, in words>"}`], true);
  }
  const limit = args["limit"] ?? DEFAULT_SEARCH_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    return toolAnswer(id, [`${SEARCH_TOOLS}: limit is a whole number from 1 to ${MAX_SEARCH_LIMIT}`], true);
  }
  const upstream = typeof args["upstream"] === "string" ? args["upstream"] : undefined;
  const query = args["query"];
  const inUpstream = (tool: CatalogTool) => upstream === undefined || tool.upstream === upstream;
  const found =
    query.trim() === ""
      ? catalog.tools.filter(inUpstream).slice(0, limit)
      : await rank({ query, limit, ...(upstream !== undefined ? { upstream } : {}) });
  const cut = catalog.truncated ? " (the catalog was cut: narrow it with upstream)" : "";
  const head = `// ${found.length} of ${catalog.tools.length} tools${cut}. Call them in ${RUN_CODE}.`;
  if (found.length === 0) return toolAnswer(id, [`${head}\n// No tool matched: try other words.`]);
  return toolAnswer(id, [`${head}\n${toolDeclarations(found, toolIdentifiers(catalog))}`]);
}

function logLines(outcome: RunOutcome): string[] {
  if (outcome.logs.length === 0 && !outcome.logsCut) return [];
  const cut = outcome.logsCut ? `\n[more output was cut at ${MAX_LOG_BYTES} bytes]` : "";
  return [`console output:\n${outcome.logs.join("\n")}${cut}`];
}

export type RunRequest = {
  readonly loader: WorkerLoader;
  /** The client's `sys___run_code` request. */
  readonly request: JsonRpcRequest;
  /** The caller's catalog, still being listed: the sandbox starts meanwhile. */
  readonly catalog: Promise<Catalog>;
  /** The call's record: the run's id and the program's digest are written on it. */
  readonly record: { codeRun?: string; codeDigest?: string };
  /** Runs one of the program's tool calls as a direct call (inner-call.ts). */
  readonly call: (name: string, args: string, seq: number, runId: string) => Promise<InnerAnswer>;
  /** The answer holding the returned value as it goes to the client: offloaded when large (code-mode.ts). */
  readonly offload: (answer: string) => Promise<string>;
};

/** `answer` (a tool result) with the console output after its content. */
function withLogs(answer: string, lines: readonly string[]): string {
  if (lines.length === 0) return answer;
  const { id, result } = JSON.parse(answer) as { id: JsonRpcId; result: { content: unknown[] } };
  return resultText(id, { ...result, content: [...result.content, ...lines.map((text) => ({ type: "text", text }))] });
}

/**
 * The answer of a run: the program's value (JSON text) and logs, or its failure.
 *
 * @example
 * await runAnswer({ loader, request, catalog, record: ctx.record, call, offload });
 */
export async function runAnswer({ loader, request, catalog, record, call, offload }: RunRequest): Promise<string> {
  const { id } = request;
  const args = request.params?.["arguments"];
  if (!isObject(args) || typeof args["code"] !== "string") {
    return toolAnswer(id, [`${RUN_CODE} needs {"code": "<the body of an async function>"}`], true);
  }
  const code = args["code"];
  if (code.length > MAX_CODE_CHARS) {
    return toolAnswer(id, [`${RUN_CODE}: a program has at most ${MAX_CODE_CHARS} characters`], true);
  }
  const runId = randomHexId();
  record.codeRun = runId;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(code));
  record.codeDigest = bytesToBase64Url(new Uint8Array(digest));
  const places = catalog.then((listed) => [...toolIdentifiers(listed).values()]);
  const outcome = await runProgram(loader, code, places, async (name, json, seq) =>
    toolOutcome(await call(name, json, seq, runId), name),
  );
  if (!outcome.ok) {
    const line = outcome.line !== undefined ? ` (line ${outcome.line})` : "";
    return toolAnswer(id, [`${outcome.message}${line}`, ...logLines(outcome)], true, outcome.timing);
  }
  const answer = toolAnswer(id, [outcome.value ?? "undefined"], false, outcome.timing);
  return withLogs(await offload(answer), logLines(outcome));
}
