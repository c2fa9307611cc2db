/**
 * A tool call a code-mode program makes, run as a direct call: a `tools/call` of the tool's
 * listed name, handed to the pipeline under the caller's own context (identity, route,
 * persona, services), so visibility, authorization, rate limits, pins, rules, filters,
 * offload, client logging and audit treat it exactly as the same call sent by the client
 * (the same path `sys___call_tool` takes, catalog/catalog-modes.ts). Its record is its own
 * and names the run it belongs to (`codeRun`), which audit writes as `gateway.code_run`.
 *
 * The answer is the response as the client would have read it (tool-outcome.ts makes the
 * program's value of it), or the message of the gateway's refusal.
 */
import { GatewayError } from "../../core/errors";
import { isObject, type JsonObject, type JsonRpcId, type JsonRpcRequest } from "../../core/jsonrpc";
import type { CallContext, Handler } from "../../context/call-context";
import { newCallRecord } from "../../context/call-record";

/** What the pipeline answered an inner call: its JSON-RPC response, or the gateway's refusal. */
export type InnerAnswer =
  { readonly ok: true; readonly response: string } | { readonly ok: false; readonly message: string };

function isServerRequest(text: string): boolean {
  try {
    const message: unknown = JSON.parse(text);
    return isObject(message) && "method" in message && "id" in message;
  } catch {
    return false;
  }
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
): Promise<InnerAnswer> {
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
    return { ok: true, response: text ?? "null" };
  } catch (error) {
    if (error instanceof GatewayError) return { ok: false, message: `${name}: ${error.message}` };
    throw error;
  }
}
