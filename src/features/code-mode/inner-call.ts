/**
 * A tool call a code-mode program makes, run as a direct call: a `tools/call` of the tool's
 * listed name, handed to the pipeline under the caller's own context (identity, route,
 * persona, services), so visibility, authorization, rate limits, pins, rules, filters,
 * offload, client logging and audit treat it exactly as the same call sent by the client
 * (the same path `sys___call_tool` takes, catalog/catalog-modes.ts). Its record is its own
 * and names the run it belongs to (`codeRun`), which audit writes as `gateway.code_run`.
 *
 * What the program gets back is the result's value: its `structuredContent` when it has
 * one, else its text (parsed when it is JSON). A tool error, or a call the gateway
 * refuses, rejects with the message the client would have read.
 */
import { GatewayError } from "../../core/errors";
import { isObject, type JsonObject, type JsonRpcId, type JsonRpcRequest } from "../../core/jsonrpc";
import type { CallContext, Handler } from "../../context/call-context";
import { newCallRecord } from "../../context/call-record";

/** What a program's tool call comes to: a JSON text, or the message of its refusal or error. */
export type ToolOutcome =
  { readonly ok: true; readonly value: string } | { readonly ok: false; readonly message: string };

/** The texts of a result's text items, joined. */
function textsOf(result: JsonObject): string {
  const content = Array.isArray(result["content"]) ? result["content"] : [];
  return content
    .flatMap((item) =>
      isObject(item) && item["type"] === "text" && typeof item["text"] === "string" ? [item["text"]] : [],
    )
    .join("\n");
}

/** The value a program gets from a result. */
function valueOf(result: JsonObject): string {
  if (result["structuredContent"] !== undefined) return JSON.stringify(result["structuredContent"]);
  const content = Array.isArray(result["content"]) ? result["content"] : [];
  const onlyText = content.length > 0 && content.every((item) => isObject(item) && item["type"] === "text");
  if (!onlyText) return JSON.stringify(content);
  const text = textsOf(result);
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

function isServerRequest(text: string): boolean {
  try {
    const message: unknown = JSON.parse(text);
    return isObject(message) && "method" in message && "id" in message;
  } catch {
    return false;
  }
}

/** The outcome of a JSON-RPC response's text. */
export function outcomeOf(text: string, name: string): ToolOutcome {
  const response: unknown = JSON.parse(text);
  if (!isObject(response)) return { ok: false, message: `${name}: the gateway got no answer` };
  if (isObject(response["error"])) return { ok: false, message: `${name}: ${String(response["error"]["message"])}` };
  const result = response["result"];
  if (!isObject(result)) return { ok: false, message: `${name}: the answer held no result` };
  if (result["isError"] === true) return { ok: false, message: `${name} failed: ${textsOf(result) || "(no message)"}` };
  return { ok: true, value: valueOf(result) };
}

export type InnerCall = {
  readonly pipeline: Handler;
  /** The context of the client's `sys___run_code` call. */
  readonly ctx: CallContext;
  /** The JSON-RPC request of that call: its `_meta` travels with every inner call. */
  readonly outer: JsonRpcRequest;
  /** The run's id, written on each inner call's record. */
  readonly runId: string;
};

/**
 * Runs `name` (as the caller lists it) with `args` (JSON text) through the pipeline.
 *
 * @example
 * const outcome = await callThroughPipeline({ pipeline, ctx, outer, runId }, "alpha___add", '{"a":1,"b":2}', 1);
 */
export async function callThroughPipeline(
  { pipeline, ctx, outer, runId }: InnerCall,
  name: string,
  args: string,
  seq: number,
): Promise<ToolOutcome> {
  const parsed: unknown = JSON.parse(args);
  if (!isObject(parsed)) return { ok: false, message: `${name}: arguments are an object` };
  const params: JsonObject = { name, arguments: parsed };
  const meta = outer.params?.["_meta"];
  // The outer call's envelope (a 2026-07-28 client's protocol fields) without its progress token.
  if (isObject(meta)) {
    const { progressToken: _, ...kept } = meta;
    params["_meta"] = kept;
  }
  const id: JsonRpcId = `${String(outer.id)}:code:${seq}`;
  const message: JsonRpcRequest = { jsonrpc: "2.0", id, method: "tools/call", params };
  const record = newCallRecord();
  record.codeRun = runId;
  // Server requests (sampling, elicitation) cannot reach a client from inside a program: only notifications pass.
  const emit: CallContext["emit"] = (outgoing) =>
    typeof outgoing === "string" && isServerRequest(outgoing) ? undefined : ctx.emit(outgoing);
  try {
    const text = await pipeline(
      { ...ctx, record, emit, target: undefined },
      { kind: "request", wire: { text: JSON.stringify(message), message } },
    );
    return outcomeOf(text ?? "null", name);
  } catch (error) {
    if (error instanceof GatewayError) return { ok: false, message: `${name}: ${error.message}` };
    throw error;
  }
}
