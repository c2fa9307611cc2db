/**
 * A 2025 client of a 2026-07-28 upstream: the upstream's `input_required` result
 * (basic/patterns/mrtr) becomes server-to-client requests on the client's stream
 * (elicitation/create, sampling/createMessage, roots/list: only those the client
 * declared at initialize), the client's answers are collected, and the call is retried
 * upstream with `inputResponses` and the exact `requestState`, round after round, until
 * a complete result answers the client's original request on its original stream.
 *
 * The answers come as separate POSTs that may reach any isolate: each server request's
 * id is sealed (core/sealed-state.ts, purpose "input-request", bound to the principal,
 * the round and the key) and names the round's Durable Object (`INPUT_RENDEZVOUS`,
 * shell/input-rendezvous.ts) where the answer is left and the waiting call picks it up.
 * Bounded: MAX_INPUT_ROUNDS rounds, INPUT_ROUND_TIMEOUT_MS for the client to answer a
 * round, INPUT_BRIDGE_DEADLINE_MS for the whole call, MAX_INPUT_REQUESTS_PER_ROUND
 * requests in a round (more end the call with -32603), MAX_INPUT_ANSWER_CHARS per answer
 * (a larger one is refused with HTTP 413 and ends the call at once, never left to time out).
 */
import { GatewayError } from "../core/errors";
import {
  INTERNAL_ERROR,
  INVALID_REQUEST,
  isObject,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcResponse,
  type WireMessage,
} from "../core/jsonrpc";
import {
  appendMemberSplice,
  member,
  members,
  parseSpan,
  rootSpan,
  splice,
  withMessageId,
  type Splice,
} from "../core/raw-json";
import { openState, sealState } from "../core/sealed-state";
import type { CallContext } from "../context/call-context";
import type { InputRendezvousRpc } from "../context/object-rpc";

export const MAX_INPUT_ROUNDS = 8;
export const INPUT_ROUND_TIMEOUT_MS = 10 * 60_000;
export const INPUT_BRIDGE_DEADLINE_MS = 30 * 60_000;
/** Input requests one round may put to the client (each costs a sealed id, a server request and a stored answer). */
export const MAX_INPUT_REQUESTS_PER_ROUND = 32;
/** The longest answer to one input request, in UTF-16 code units: it is stored whole in the round's Durable Object (values up to 2 MB). */
export const MAX_INPUT_ANSWER_CHARS = 512 * 1024;
/** Ids of the server requests the gateway sends on an upstream's behalf start with this. */
const INPUT_ID_PREFIX = "gw-input.";
const INPUT_PURPOSE = "input-request";

/** The client capability each embedded request needs (2025 clients declare them at initialize). */
const CAPABILITY_OF: ReadonlyMap<string, string> = new Map([
  ["elicitation/create", "elicitation"],
  ["sampling/createMessage", "sampling"],
  ["roots/list", "roots"],
]);

/** What a sealed server-request id carries: the round and the key of the request in it. */
type InputTicket = { readonly round: string; readonly key: string };

function rendezvous(ctx: CallContext, round: string): InputRendezvousRpc {
  const namespace = ctx.services.inputRendezvous;
  if (!namespace) throw new Error("unreachable: checked by the caller");
  return namespace.get(namespace.idFromName(round));
}

/**
 * The `input_required` result of a response text, or undefined for any other answer.
 *
 * @example
 * inputRequired('{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}'); // { resultType: "input_required", requestState: "s" }
 */
export function inputRequired(text: string): JsonObject | undefined {
  if (!text.includes("input_required")) return undefined;
  const span = member(text, rootSpan(text), "result");
  const result = span ? parseSpan(text, span) : undefined;
  return isObject(result) && result["resultType"] === "input_required" ? result : undefined;
}

/** The retry of `request`: a new id, `inputResponses` and the upstream's exact `requestState` in its params. */
function retryText(request: string, id: string, responses: JsonObject, requestState: unknown): string {
  const text = withMessageId(request, id);
  const root = rootSpan(text);
  const params = member(text, root, "params");
  const fields: [string, unknown][] = [
    ["inputResponses", responses],
    ...(typeof requestState === "string" ? [["requestState", requestState] as [string, unknown]] : []),
  ];
  if (!params || text.charCodeAt(params.start) !== 0x7b) {
    return splice(text, [appendMemberSplice(text, root, "params", JSON.stringify(Object.fromEntries(fields)))]);
  }
  const edits: Splice[] = [];
  const added: string[] = [];
  for (const [key, value] of fields) {
    const own = member(text, params, key);
    if (own) edits.push({ span: own, raw: JSON.stringify(value) });
    else added.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  }
  if (added.length > 0) {
    const at = params.end - 1; // the closing brace
    edits.push({
      span: { start: at, end: at },
      raw: `${members(text, params).length > 0 ? "," : ""}${added.join(",")}`,
    });
  }
  return splice(text, edits);
}

function bridgeError(id: JsonRpcId, message: string, data?: JsonObject): GatewayError {
  return new GatewayError(200, INTERNAL_ERROR, message, data, id);
}

/** Asks the client one round's requests and returns its results by key. */
async function askClient(
  ctx: CallContext,
  upstream: string,
  id: JsonRpcId,
  requests: JsonObject,
  deadline: number,
): Promise<JsonObject> {
  const declared = ctx.identity.clientCapabilities;
  const keys = Object.keys(requests);
  if (keys.length > MAX_INPUT_REQUESTS_PER_ROUND) {
    throw bridgeError(
      id,
      `upstream "${upstream}" asked for ${keys.length} inputs in one round; the gateway relays at most ${MAX_INPUT_REQUESTS_PER_ROUND}`,
      { upstream },
    );
  }
  for (const key of keys) {
    const asked = requests[key];
    const method = isObject(asked) ? asked["method"] : undefined;
    const capability = typeof method === "string" ? CAPABILITY_OF.get(method) : undefined;
    if (!capability)
      throw bridgeError(
        id,
        `upstream "${upstream}" asked for input the gateway cannot relay (${JSON.stringify(method)})`,
        { upstream },
      );
    if (!isObject(declared[capability])) {
      throw bridgeError(
        id,
        `upstream "${upstream}" needs ${method} to finish this call, and this client did not declare the "${capability}" capability at initialize`,
        { upstream, requiredCapabilities: { [capability]: {} } },
      );
    }
  }
  if (!ctx.services.inputRendezvous) {
    throw bridgeError(
      id,
      `upstream "${upstream}" asked this client for input, which needs the INPUT_RENDEZVOUS Durable Object binding (wrangler.toml); it is not configured`,
      { upstream },
    );
  }
  const round = crypto.randomUUID();
  const meeting = rendezvous(ctx, round);
  const ttlMs = Math.max(1, deadline - Date.now());
  try {
    for (const key of keys) {
      const asked = requests[key] as JsonObject;
      const ticket: InputTicket = { round, key };
      const requestId =
        INPUT_ID_PREFIX +
        (await sealState(ctx.services.sessionSecret, INPUT_PURPOSE, ctx.identity.principal, ttlMs, ticket));
      await ctx.emit(
        JSON.stringify({
          jsonrpc: "2.0",
          id: requestId,
          method: asked["method"],
          ...(isObject(asked["params"]) ? { params: asked["params"] } : {}),
        }),
      );
    }
    const answers = await meeting.wait(keys, Math.min(INPUT_ROUND_TIMEOUT_MS, ttlMs));
    if (!answers)
      throw bridgeError(id, `the client did not answer upstream "${upstream}"'s request for input in time`, {
        upstream,
      });
    const results: JsonObject = {};
    // An error answer ends the round before the others are in (the rendezvous returns what it has).
    for (const key of keys) {
      const text = answers[key];
      if (text === undefined) continue;
      const response: unknown = JSON.parse(text);
      if (!isObject(response) || !isObject(response["result"])) {
        const error = isObject(response) && isObject(response["error"]) ? response["error"]["message"] : undefined;
        throw bridgeError(
          id,
          `the client refused upstream "${upstream}"'s ${String((requests[key] as JsonObject)["method"])}: ${typeof error === "string" ? error : "no result"}`,
          { upstream },
        );
      }
      results[key] = response["result"];
    }
    if (keys.some((key) => results[key] === undefined))
      throw bridgeError(id, `the client did not answer upstream "${upstream}"'s request for input in time`, {
        upstream,
      });
    return results;
  } finally {
    ctx.waitUntil(meeting.finish().catch(() => {}));
  }
}

/**
 * Completes a call a 2026-07-28 upstream answered with `input_required`, for a 2025
 * client: `send` retries `request` upstream (by the id given) and returns the answer.
 * The final answer carries the client's own request id.
 *
 * @example
 * if (inputRequired(answer)) return bridgeInput(ctx, upstream.name, request, id, answer, (text, retryId) => forwardOnce(ctx, upstream, text, retryId));
 */
export async function bridgeInput(
  ctx: CallContext,
  upstream: string,
  request: string,
  id: JsonRpcId,
  first: string,
  send: (text: string, id: string) => Promise<string>,
): Promise<string> {
  const deadline = Date.now() + INPUT_BRIDGE_DEADLINE_MS;
  let answer = first;
  for (let round = 1; ; round++) {
    const result = inputRequired(answer);
    if (!result) return withMessageId(answer, id);
    if (round > MAX_INPUT_ROUNDS)
      throw bridgeError(
        id,
        `upstream "${upstream}" still asked for input after ${MAX_INPUT_ROUNDS} rounds; the call was ended`,
        { upstream },
      );
    const requests = isObject(result["inputRequests"]) ? result["inputRequests"] : {};
    const responses = Object.keys(requests).length > 0 ? await askClient(ctx, upstream, id, requests, deadline) : {};
    const retryId = `gw-retry-${round}-${crypto.randomUUID()}`;
    answer = await send(retryText(request, retryId, responses, result["requestState"]), retryId);
  }
}

/**
 * Whether a response id is one of the gateway's input requests (cheap: no decryption).
 *
 * @example
 * isInputRequestId("gw-input.s1.abc"); // true
 */
export function isInputRequestId(id: JsonRpcId | null): id is string {
  return typeof id === "string" && id.startsWith(INPUT_ID_PREFIX);
}

/**
 * Leaves the client's answer to an input request where the waiting call picks it up.
 * Refuses an id the gateway did not seal for this principal, or one that expired.
 *
 * @example
 * if (isInputRequestId(wire.message.id)) return deliverInput(ctx, wire);
 */
export async function deliverInput(ctx: CallContext, wire: WireMessage<JsonRpcResponse>): Promise<void> {
  const id = wire.message.id;
  if (!isInputRequestId(id)) return;
  const opened = await openState(
    ctx.services.sessionSecret,
    INPUT_PURPOSE,
    ctx.identity.principal,
    id.slice(INPUT_ID_PREFIX.length),
  );
  const ticket = opened.ok ? opened.value : undefined;
  if (!isObject(ticket) || typeof ticket["round"] !== "string" || typeof ticket["key"] !== "string") {
    throw new GatewayError(
      400,
      INVALID_REQUEST,
      "Bad Request: the response answers no input request of this gateway (unknown, tampered or expired id)",
    );
  }
  if (!ctx.services.inputRendezvous)
    throw new GatewayError(500, INTERNAL_ERROR, "The INPUT_RENDEZVOUS Durable Object binding is not configured");
  const meeting = rendezvous(ctx, ticket["round"]);
  if (wire.text.length > MAX_INPUT_ANSWER_CHARS) {
    // The waiting call is told at once (it would otherwise wait out its round for an answer never stored).
    const why = `its answer has ${wire.text.length} characters, past the ${MAX_INPUT_ANSWER_CHARS} the gateway carries`;
    await meeting.answer(
      ticket["key"],
      JSON.stringify({ jsonrpc: "2.0", id, error: { code: INTERNAL_ERROR, message: why } }),
    );
    throw new GatewayError(
      413,
      INVALID_REQUEST,
      `Request too large: the answer to an input request has ${wire.text.length} characters; the gateway carries at most ${MAX_INPUT_ANSWER_CHARS}`,
    );
  }
  await meeting.answer(ticket["key"], wire.text);
}
