/**
 * Results by reference, for clients without code mode: `sys___call_tool` takes arguments
 * read from payloads the gateway offloaded for the same caller, so a large result feeds
 * the next call without passing through the model:
 *
 *   {"name": "github___close_issues", "arguments": {"reason": "stale"},
 *    "argumentsFrom": {"/numbers": {"payload": "<payloadId>", "pointer": "/items"}}}
 *
 * Each key of `argumentsFrom` is a JSON Pointer into the arguments (missing objects on
 * the way are made); each value names a payload and a pointer into it. Only payloads the
 * caller could read with `sys___read_payload` are found (storage/payload-store.ts), and
 * only payloads small enough to read whole; a missing payload or pointer is a tool error
 * that says which.
 */
import { isObject, type JsonObject, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import { child, parsePointer, pointerProblem } from "../../core/json-pointer";
import { payloadCaller, type CallContext } from "../../context/call-context";
import { findPayload, payloadNotFoundMessage, readPayload } from "../../storage/payload-store";

/** References one call may take. */
export const MAX_ARGUMENT_REFERENCES = 10;
/** Bytes of a payload read whole for a reference; a larger one is refused (slice it with sys___read_payload). */
export const MAX_REFERENCED_PAYLOAD_BYTES = 1024 * 1024;

const FIELD = "argumentsFrom";

/** The value at `pointer` in a payload the caller owns, or why not. */
async function referenced(ctx: CallContext, source: unknown): Promise<{ value: unknown } | string> {
  const bucket = ctx.services.payloads;
  if (!isObject(source) || typeof source["payload"] !== "string" || typeof (source["pointer"] ?? "") !== "string") {
    return 'each reference is {"payload": "<payloadId>", "pointer": "/path/in/it"}';
  }
  const id = source["payload"];
  const pointer = (source["pointer"] ?? "") as string;
  const problem = pointerProblem(pointer);
  if (problem) return `pointer ${problem}`;
  const found = bucket ? await findPayload(bucket, id, { owner: payloadCaller(ctx) }) : { state: "not-found" as const };
  if (!bucket || found.state !== "found") return payloadNotFoundMessage(id, payloadCaller(ctx));
  if (found.metadata.size > MAX_REFERENCED_PAYLOAD_BYTES) {
    const size = found.metadata.size;
    return `payload ${id} is ${size} bytes, more than ${MAX_REFERENCED_PAYLOAD_BYTES} that a reference reads whole`;
  }
  const object = await readPayload(bucket, id);
  if (!object) return payloadNotFoundMessage(id, payloadCaller(ctx));
  let value: unknown;
  try {
    value = JSON.parse(await object.text());
  } catch {
    return `payload ${id} is not JSON`;
  }
  for (const token of parsePointer(pointer)) {
    const next = child(value, token);
    if (!next.found) return `payload ${id} has nothing at ${JSON.stringify(pointer)}`;
    value = next.value;
  }
  return { value };
}

/** Sets `value` at `pointer` in `target`, making objects on the way; or why not. */
function setAt(target: JsonObject, pointer: string, value: unknown): string | undefined {
  const problem = pointerProblem(pointer);
  if (problem) return `the key ${problem}`;
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return 'a key points into the arguments, e.g. "/items"';
  let at: JsonObject = target;
  for (const [index, token] of tokens.entries()) {
    if (token === "__proto__") return `the key ${JSON.stringify(pointer)} names __proto__`;
    if (index === tokens.length - 1) {
      at[token] = value as JsonObject[string];
      break;
    }
    const next = Object.hasOwn(at, token) ? at[token] : undefined;
    if (next !== undefined && !isObject(next))
      return `the key ${JSON.stringify(pointer)} passes through a value that is not an object`;
    if (next === undefined) {
      const created: JsonObject = {};
      at[token] = created;
      at = created;
    } else at = next as JsonObject;
  }
  return undefined;
}

/**
 * The `sys___call_tool` request with its `argumentsFrom` read into its arguments (and
 * removed); the request itself when it has none; or why it cannot be.
 *
 * @example
 * const resolved = await withReferencedArguments(ctx, request);
 * if (typeof resolved === "string") return toolAnswer(id, resolved, true);
 */
export async function withReferencedArguments(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
): Promise<WireMessage<JsonRpcRequest> | string> {
  const outer = request.message.params?.["arguments"];
  if (!isObject(outer) || outer[FIELD] === undefined) return request;
  const references = outer[FIELD];
  if (!isObject(references) || Object.keys(references).length > MAX_ARGUMENT_REFERENCES) {
    const shape = '{"payload": "<payloadId>", "pointer": "/path"}';
    return `${FIELD} maps at most ${MAX_ARGUMENT_REFERENCES} argument pointers to ${shape}`;
  }
  const given = outer["arguments"] ?? {};
  if (!isObject(given)) return "arguments is an object (the tool's arguments)";
  const args = structuredClone(given);
  for (const [target, source] of Object.entries(references)) {
    const read = await referenced(ctx, source);
    if (typeof read === "string") return `${FIELD} ${JSON.stringify(target)}: ${read}`;
    const problem = setAt(args, target, read.value);
    if (problem) return `${FIELD} ${JSON.stringify(target)}: ${problem}`;
  }
  const { [FIELD]: _, ...rest } = outer;
  const params = { ...request.message.params, arguments: { ...rest, arguments: args } };
  const message: JsonRpcRequest = { ...request.message, params };
  return { text: JSON.stringify(message), message };
}
