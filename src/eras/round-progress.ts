/**
 * Progress of a bridged call, round by round. The 2025 upstream was sent the first
 * request's `progressToken` and reports progress under it until the call ends; a
 * 2026-07-28 client's retry is a new request with a progress token of its own (the SDK
 * v2 client uses each request's id), and drops progress for a token no request of its
 * own is waiting on (basic/utilities/progress: notifications reference only tokens of
 * active requests). So the call's progress goes to the client under the token of the
 * round's request, and not at all for a retry that asked for none.
 */
import { isId, isObject, type JsonRpcId, type WireMessage } from "../core/jsonrpc";
import { parseSpan, pathSpan, splice } from "../core/raw-json";

const PROGRESS_METHOD = "notifications/progress";
const TOKEN_PATH = ["params", "_meta", "progressToken"] as const;

/**
 * The `progressToken` of a request text (params._meta), or undefined when it has none
 * that a progress notification could name.
 *
 * @example
 * progressTokenOf('{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"_meta":{"progressToken":"p"}}}') // "p"
 */
export function progressTokenOf(text: string): JsonRpcId | undefined {
  const span = pathSpan(text, TOKEN_PATH);
  const token: unknown = span && parseSpan(text, span);
  return isId(token) ? token : undefined;
}

/**
 * What the client of round `roundToken` gets of an upstream message: the text as it is,
 * unless it is the call's own progress (token `upstreamToken`), which is renamed to the
 * round's token (only that value changes), or dropped (undefined) when the round's
 * request asked for no progress.
 *
 * @example
 * progressForRound(wire, 0, 1)
 * // '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3}}'
 */
export function progressForRound(
  wire: WireMessage,
  upstreamToken: JsonRpcId | undefined,
  roundToken: JsonRpcId | undefined,
): string | undefined {
  const { message, text } = wire;
  if (upstreamToken === undefined || !("method" in message) || message.method !== PROGRESS_METHOD) return text;
  const params: unknown = message.params;
  if (!isObject(params) || params["progressToken"] !== upstreamToken) return text;
  if (roundToken === undefined) return undefined;
  if (roundToken === upstreamToken) return text;
  const span = pathSpan(text, ["params", "progressToken"]);
  return span ? splice(text, [{ span, raw: JSON.stringify(roundToken) }]) : text;
}
