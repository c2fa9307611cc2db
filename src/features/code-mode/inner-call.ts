/**
 * A tool call a code-mode program makes, run as a direct call: a `tools/call` of the tool's
 * listed name, handed to the pipeline under the caller's own context (identity, route,
 * persona, services), so visibility, authorization, rate limits, pins, rules, filters,
 * offload, client logging and audit treat it exactly as the same call sent by the client
 * (the same path `sys___call_tool` takes, catalog/catalog-modes.ts). Its record is its own
 * and names the run it belongs to (`codeRun`), which audit writes as `gateway.code_run`.
 * Two things differ, both for the program's sake: a result up to MAX_INNER_RESULT_BYTES
 * stays whole (offload keeps it; only what the program returns reaches the client), and a
 * sign-in an upstream needs fails the call at once, its link kept for the run's answer.
 *
 * The answer is the response as the client would have read it (tool-outcome.ts makes the
 * program's value of it), or the message of the gateway's refusal.
 */
import { GatewayError } from "../../core/errors";
import { isObject, type JsonObject, type JsonRpcId, type JsonRpcRequest } from "../../core/jsonrpc";
import type { CallContext, Handler, SignInElicitation } from "../../context/call-context";
import { MAX_INNER_RESULT_BYTES } from "./limits";
import { newCallRecord } from "../../context/call-record";
import { needsClientMessage } from "./names";

/** What the pipeline answered an inner call: its JSON-RPC response, or the gateway's refusal. */
export type InnerAnswer =
  | { readonly ok: true; readonly response: string }
  | { readonly ok: false; readonly message: string };

/** The method of a server request (sampling, elicitation, roots) in `text`, or undefined for anything else. */
function serverRequestMethod(text: string): string | undefined {
  try {
    const message: unknown = JSON.parse(text);
    return isObject(message) && typeof message["method"] === "string" && "id" in message
      ? message["method"]
      : undefined;
  } catch {
    return undefined;
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
  /** Told of a sign-in an upstream needs: the link goes to the client with the run's answer. */
  readonly signIn: (link: SignInElicitation) => void;
};

/**
 * Runs `name` (as the caller lists it) with `args` (JSON text) through the pipeline.
 *
 * @example
 * const step = { pipeline, ctx, outer, runId, signIn };
 * const outcome = await callThroughPipeline(step, "alpha___add", '{"a":1,"b":2}', 1);
 */
export async function callThroughPipeline(
  { pipeline, ctx, outer, runId, signIn }: InnerCall,
  name: string,
  args: string,
  seq: number,
): Promise<InnerAnswer> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
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
  // A server request (sampling, elicitation) cannot reach the client from inside a program: the call is
  // cancelled (the relay tells the upstream, as when a client goes away) and rejects in the program.
  const asked = new AbortController();
  let method = "";
  const emit: CallContext["emit"] = (outgoing) => {
    const requested = typeof outgoing === "string" ? serverRequestMethod(outgoing) : undefined;
    if (requested === undefined) return ctx.emit(outgoing);
    method ||= requested;
    asked.abort();
  };
  const signal = AbortSignal.any([ctx.signal, asked.signal]);
  const inner: CallContext = {
    ...ctx,
    record,
    emit,
    signal,
    cancelsOnClose: true,
    target: undefined,
    keepWholeBytes: MAX_INNER_RESULT_BYTES,
    codeRun: runId,
    signInNeeded: signIn,
  };
  const answered = pipeline(inner, { kind: "request", wire: { text: JSON.stringify(message), message } }).then(
    (answer): InnerAnswer => ({ ok: true, response: answer?.text ?? "null" }),
    (error: unknown): InnerAnswer => {
      if (asked.signal.aborted) return { ok: false, message: needsClientMessage(name, method) };
      if (error instanceof GatewayError) return { ok: false, message: `${name}: ${error.message}` };
      throw error;
    },
  );
  const cancelled = new Promise<InnerAnswer>((resolve) => {
    asked.signal.addEventListener("abort", () => resolve({ ok: false, message: needsClientMessage(name, method) }));
  });
  return Promise.race([answered, cancelled]);
}
