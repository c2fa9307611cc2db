/**
 * The `requestState` of a multi-round-trip request (2026-07-28 basic/patterns/mrtr) as a
 * modern client holds it: never the upstream's own string, but a token sealed by the
 * gateway (core/sealed-state.ts, AES-GCM) that carries the upstream that asked and its
 * state byte for byte, bound to the principal, an expiry and a digest of the request
 * (route, method, tool/prompt name or resource URI, arguments in canonical form). A retry
 * is trusted only once its token opens for this caller and this request; the upstream
 * then gets exactly the state it issued (or none, when it issued none), so no client can
 * hand an upstream a state it did not write, nor another caller's, nor one of another call
 * (a 2025 client's own `requestState`/`inputResponses` are removed: `withoutRetryFields`).
 * Limit: an upstream state of more than about 47 KB would seal past the 64 Ki characters
 * a retry may bring back (MAX_SEALED_TOKEN_CHARS); such a call ends with -32603.
 */
import { canonicalDigest } from "../core/canonical-json";
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR, INVALID_PARAMS, isObject, type JsonRpcId, type JsonRpcRequest } from "../core/jsonrpc";
import {
  appendMemberSplice,
  member,
  pathSpan,
  removeMemberSplice,
  rootSpan,
  splice,
  type Span,
} from "../core/raw-json";
import { MAX_SEALED_TOKEN_CHARS, openState, sealState, type SealedProblem } from "../core/sealed-state";
import { methodsWith } from "../core/methods";

/** The sealed-state purpose of wrapped request states. */
const PURPOSE = "request-state";
/** How long a client may take to retry a relayed input_required result (the upstream's own state may expire sooner). */
export const REQUEST_STATE_TTL_MS = 10 * 60_000;

/** What a wrapped state carries. `state` is the upstream's raw JSON string (null: it sent none). */
export type WrappedState = {
  readonly digest: string;
  readonly upstream: string;
  readonly state: string | null;
  /** Set when the state is a bridged call's handle (call-bridge.ts), never an upstream's. */
  readonly bridged?: true;
};

/** Methods that may answer input_required (mrtr, "Supported Requests"). */
export const MULTI_ROUND_TRIP_METHODS: ReadonlySet<string> = new Set(methodsWith("multiRoundTrip"));

/**
 * The digest a wrapped state is bound to: what identifies the request apart from its id,
 * its `_meta`, and the input it carries.
 *
 * @example
 * await requestDigest("alpha", { jsonrpc: "2.0", id: 1, method: "prompts/get", params: { name: "greet", arguments: {} } });
 */
export function requestDigest(route: string, request: Pick<JsonRpcRequest, "method" | "params">): Promise<string> {
  const params = request.params ?? {};
  const target = request.method === "resources/read" ? params["uri"] : params["name"];
  return canonicalDigest([route, request.method, target ?? null, params["arguments"] ?? null]);
}

/**
 * True for a result text whose `resultType` is `input_required`. Only a text holding the
 * literal (as the comparison below needs) is walked: every tools/call answer is asked, and
 * walking a 10 MiB result took three passes over it in JavaScript (docs/benchmarks.md).
 */
export function isInputRequired(text: string): boolean {
  if (!text.includes('"input_required"')) return false;
  const span = pathSpan(text, ["result", "resultType"]);
  return span !== undefined && text.slice(span.start, span.end) === '"input_required"';
}

/**
 * `text` (an input_required response) with its `requestState` replaced by a sealed token
 * for `principal` (added when the upstream sent none). A token longer than a retry may
 * bring back (MAX_SEALED_TOKEN_CHARS: an upstream state of about 47 KB) is never issued:
 * the call ends with -32603 instead, answering `wrap.id`.
 *
 * @example
 * const wrapped = await wrapRequestState(text, secret, "alice", { digest, upstream: "alpha", id: 1 });
 */
export async function wrapRequestState(
  text: string,
  secret: string,
  principal: string,
  wrap: { digest: string; upstream: string; id: JsonRpcId; bridged?: true; ttlMs?: number },
): Promise<string> {
  const result = member(text, rootSpan(text), "result")!;
  const own = member(text, result, "requestState");
  const state = own && text.charCodeAt(own.start) === 0x22 ? text.slice(own.start, own.end) : null;
  const value: WrappedState = {
    digest: wrap.digest,
    upstream: wrap.upstream,
    state,
    ...(wrap.bridged ? { bridged: true as const } : {}),
  };
  const sealed = await sealState(secret, PURPOSE, principal, wrap.ttlMs ?? REQUEST_STATE_TTL_MS, value);
  if (sealed.length > MAX_SEALED_TOKEN_CHARS) {
    const message = `upstream "${wrap.upstream}" asked for input with a requestState of ${state?.length ?? 0} characters; sealed by the gateway it would take ${sealed.length}, past the ${MAX_SEALED_TOKEN_CHARS} a retry may bring back, so the call cannot continue (the upstream must keep its state smaller)`;
    throw new GatewayError(
      200,
      INTERNAL_ERROR,
      message,
      { upstream: wrap.upstream, reason: "request-state-too-large" },
      wrap.id,
    );
  }
  const token = JSON.stringify(sealed);
  return splice(text, [own ? { span: own, raw: token } : appendMemberSplice(text, result, "requestState", token)]);
}

function isWrappedState(value: unknown): value is WrappedState {
  return (
    isObject(value) &&
    typeof value["digest"] === "string" &&
    typeof value["upstream"] === "string" &&
    (value["state"] === null || typeof value["state"] === "string") &&
    (value["bridged"] === undefined || value["bridged"] === true)
  );
}

const RETRY_AFRESH = "send the original request again without requestState and inputResponses";

function refusal(problem: SealedProblem["reason"] | "other-request", id: JsonRpcId): GatewayError {
  const why = {
    malformed: "requestState was not issued by this gateway, or was altered",
    expired: "requestState has expired",
    "other-principal": "requestState was issued to another caller",
    "other-request":
      "requestState belongs to another request (the method, name, URI or arguments differ from the request that received it)",
  }[problem];
  return new GatewayError(400, INVALID_PARAMS, `Invalid params: ${why}; ${RETRY_AFRESH}`, { reason: problem }, id);
}

/**
 * Opens the `requestState` of a modern client's retry: the wrapped state, or a -32602
 * (HTTP 400) error saying what is wrong and what to do.
 *
 * @example
 * const wrapped = await openRequestState(request.message, { secret, principal, route: "" });
 */
export async function openRequestState(
  request: JsonRpcRequest,
  binding: { secret: string; principal: string; route: string },
): Promise<WrappedState> {
  const token = request.params?.["requestState"];
  const opened = await openState(binding.secret, PURPOSE, binding.principal, token);
  if (!opened.ok) throw refusal(opened.reason, request.id);
  if (!isWrappedState(opened.value)) throw refusal("malformed", request.id);
  if (opened.value.digest !== (await requestDigest(binding.route, request))) throw refusal("other-request", request.id);
  return opened.value;
}

/**
 * A 2025 client's request without `requestState` and `inputResponses`: its revision has
 * no multi-round-trip requests, so these can only be forged (the gateway answers a 2026
 * upstream's questions for it, input-bridge.ts, and writes them itself).
 *
 * @example
 * withoutRetryFields('{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"a","requestState":"x"}}'); // …"params":{"name":"a"}}
 */
export function withoutRetryFields(text: string): string {
  // Both fronts refuse a key twice in params (checkDuplicateKeys), so one removal each is all.
  let out = text;
  for (const key of ["requestState", "inputResponses"]) {
    const params = member(out, rootSpan(out), "params");
    if (!params || out.charCodeAt(params.start) !== 0x7b) return out;
    const removal = removeMemberSplice(out, params, key);
    if (removal) out = splice(out, [removal]);
  }
  return out;
}

/**
 * The request text with the upstream's own state back in `params.requestState` (its raw
 * bytes), or without the member when the upstream sent none.
 *
 * @example
 * const upstreamText = restoreRequestState(retry.text, wrapped.state);
 */
export function restoreRequestState(text: string, state: string | null): string {
  const params = member(text, rootSpan(text), "params") as Span;
  const span = member(text, params, "requestState")!;
  if (state !== null) return splice(text, [{ span, raw: state }]);
  const removal = removeMemberSplice(text, params, "requestState");
  return removal ? splice(text, [removal]) : text;
}
