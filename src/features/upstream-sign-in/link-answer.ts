/**
 * Pointing a caller at a page a person must open before the call can go on (a sign-in, an
 * approval), in the idiom its client can act on: `input_required` with a URL-mode
 * `elicitation/create` for a 2026-07-28 client that declared URL elicitation, the `-32042`
 * URL-elicitation-required error for another that declared it, else a tool error (tools/call)
 * or an error naming the link. Upstream sign-in (sign-in-required.ts) and approvals
 * (features/approvals/) answer through it.
 */
import { GatewayError } from "../../core/errors";
import { isObject, resultText, type JsonObject, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import type { CallContext } from "../../context/call-context";
import { MULTI_ROUND_TRIP_METHODS } from "../../eras/request-state";
import { methodFacts } from "../../core/methods";
import { UPSTREAM_ERROR } from "../../upstream/failures";

/** MCP's "URL elicitation required" (2025-11-25). */
export const URL_ELICITATION_REQUIRED = -32042;

/** The page, and what the caller is told of it. */
export type LinkQuestion = {
  /** The key of the question in an input_required answer. */
  readonly key: string;
  /** The elicitation's message (the client shows it beside the link). */
  readonly message: string;
  readonly url: string;
  readonly elicitationId: string;
  /** The whole text for a client without URL elicitation (the link written in it). */
  readonly instructions: string;
  /** The error's data for a request other than tools/call. */
  readonly data: JsonObject;
};

/** True when the client declared URL-mode elicitation (`capabilities.elicitation.url`). */
export function asksByUrl(ctx: CallContext): boolean {
  const elicitation = ctx.identity.clientCapabilities["elicitation"];
  return isObject(elicitation) && isObject(elicitation["url"]);
}

/** The URL-mode elicitation of `question`. */
export function urlElicitation(question: LinkQuestion): JsonObject {
  return { mode: "url", message: question.message, url: question.url, elicitationId: question.elicitationId };
}

/**
 * The answer pointing the caller of `request` at `question`'s page (a thrown GatewayError for the error idioms).
 *
 * @example
 * return answerWithLink(ctx, request, { key: "approval", message, url, elicitationId, instructions, data });
 */
export function answerWithLink(ctx: CallContext, request: WireMessage<JsonRpcRequest>, question: LinkQuestion): string {
  const { id, method } = request.message;
  const elicitation = urlElicitation(question);
  if (asksByUrl(ctx) && ctx.identity.era === "modern" && MULTI_ROUND_TRIP_METHODS.has(method)) {
    return resultText(id, {
      resultType: "input_required",
      inputRequests: { [question.key]: { method: "elicitation/create", params: elicitation } },
    });
  }
  if (asksByUrl(ctx))
    throw new GatewayError(200, URL_ELICITATION_REQUIRED, question.message, { elicitations: [elicitation] }, id);
  if (methodFacts(method).invokes === "tool")
    return resultText(id, { content: [{ type: "text", text: question.instructions }], isError: true });
  throw new GatewayError(200, UPSTREAM_ERROR, question.instructions, question.data, id);
}
