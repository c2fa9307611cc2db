/**
 * Asking a caller to sign in to an upstream that acts as each user (UPSTREAMS[].auth):
 * when a request fails because the caller has no usable token (none yet, refused, or too
 * narrow a scope), the answer points the user at a fresh, single-use sign-in link
 * (features/upstream-sign-in/sign-in-link.ts) in the way the client can act on —
 *
 * - a 2025 session whose client declared URL elicitation (`elicitation.url`), on a call
 *   (tools/call, prompts/get, resources/read): a URL-mode `elicitation/create` on the call's
 *   stream (through the input bridge, eras/input-bridge.ts); once the user accepted, the
 *   call waits for the sign-in's callback (features/upstream-sign-in/sign-in-wait.ts), tells the client
 *   `notifications/elicitation/complete` and runs again, answering the original request;
 * - a 2026-07-28 client that declared URL elicitation: `input_required` with a URL-mode
 *   `elicitation/create`; its retry (with the sealed `requestState`) runs the call again;
 * - otherwise a client that declared URL elicitation (initialize, other methods, no
 *   INPUT_RENDEZVOUS binding): the `-32042` URL-elicitation-required error (2025-11-25);
 *   the client retries once the user is done;
 * - any other client: a tool error (for tools/call) or an error naming the link and what to do.
 *
 * Both routes pass here (relay.ts), and so do a transparent route's initialize and server/discover.
 */
import { GatewayError } from "../../core/errors";
import {
  isObject,
  resultText,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type WireMessage,
} from "../../core/jsonrpc";
import { readingAnswer, type CallContext, type SignInElicitation } from "../../context/call-context";
import { Answer } from "../../context/answer";
import { UPSTREAM_ERROR } from "../../upstream/failures";
import { mintSignInLink, SIGN_IN_LINK_TTL_MS } from "./sign-in-link";
import { SIGN_IN_FLOW_TTL_MS } from "./authorization-flow";
import { bridgeInput } from "../../eras/input-bridge";
import { awaitSignIn } from "./sign-in-wait";
import type { Challenge } from "../../upstream/oauth/discovery";
import { failureOf } from "../../core/failures";
import { MULTI_ROUND_TRIP_METHODS } from "../../eras/request-state";
import { methodFacts } from "../../core/methods";
import { answerWithLink, asksByUrl, URL_ELICITATION_REQUIRED, urlElicitation } from "./link-answer";

export { URL_ELICITATION_REQUIRED };

/** The key of the sign-in question in an input_required answer. */
export const SIGN_IN_INPUT_KEY = "sign-in";

/** Sign-ins one call may ask for in a row (a step-up right after a first sign-in, say). */
const MAX_SIGN_INS_PER_CALL = 3;
/** How long a call waits for its user's sign-in once they accepted (the rendezvous caps it at 15 minutes). */
export const SIGN_IN_WAIT_MS = SIGN_IN_LINK_TTL_MS + SIGN_IN_FLOW_TTL_MS;

/** The client's action in its answer to the sign-in question (the retry `bridgeInput` builds). */
function actionOf(retry: string): unknown {
  const params: unknown = (JSON.parse(retry) as { params?: unknown }).params;
  const responses = isObject(params) ? params["inputResponses"] : undefined;
  const answer = isObject(responses) ? responses[SIGN_IN_INPUT_KEY] : undefined;
  return isObject(answer) ? answer["action"] : undefined;
}

function errorText(id: JsonRpcId, code: number, message: string, data?: JsonObject): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } });
}

/** The answer when the user declined (or cancelled) signing in. */
function declined(id: JsonRpcId, method: string, upstream: string): string {
  const text = `The call needs you to sign in to upstream "${upstream}", and the sign-in was declined; call again to be asked again.`;
  return methodFacts(method).invokes === "tool"
    ? resultText(id, { content: [{ type: "text", text }], isError: true })
    : errorText(id, UPSTREAM_ERROR, text, { upstream, reason: "sign-in-declined" });
}

/** The sign-in a failed call needs: its failure's type says so, whatever its message. */
function signInData(error: unknown): { upstream: string; challenge: Challenge } | undefined {
  const failure = failureOf(error);
  return failure?.reason === "sign-in-required" ? failure : undefined;
}

/** What a client that cannot be asked reads: the sign-in's message with its link. */
function instructionsOf(message: string, url: string): string {
  return `${message.slice(0, -"; then retry.".length)}: ${url} (the link works once, for 10 minutes); then call again.`;
}

/**
 * The answer of a call that ran to its end but some of whose inner calls needed the user
 * to sign in (a code-mode run): the links go to the client as a direct call's would — a
 * 2026-07-28 client that declared URL elicitation gets `input_required` with one URL-mode
 * `elicitation/create` per upstream (its retry runs the call again), a 2025 one the
 * -32042 error, any other client the answer as a tool error followed by each link.
 *
 * @example
 * return links.length > 0 ? signInLinksAnswer(ctx, id, answer, links) : answer;
 */
export function signInLinksAnswer(
  ctx: CallContext,
  id: JsonRpcId,
  answer: string,
  links: readonly SignInElicitation[],
): string {
  const elicitations = links.map(({ upstream: _, ...elicitation }) => elicitation);
  if (asksByUrl(ctx) && ctx.identity.era === "modern") {
    const keyed = elicitations.map((params, i) => [
      i === 0 ? SIGN_IN_INPUT_KEY : `${SIGN_IN_INPUT_KEY}-${i + 1}`,
      { method: "elicitation/create", params },
    ]);
    return resultText(id, { resultType: "input_required", inputRequests: Object.fromEntries(keyed) });
  }
  const message = elicitations.map((elicitation) => elicitation.message).join(" ");
  if (asksByUrl(ctx)) throw new GatewayError(200, URL_ELICITATION_REQUIRED, message, { elicitations }, id);
  const parsed: unknown = JSON.parse(answer);
  const result = isObject(parsed) && isObject(parsed["result"]) ? parsed["result"] : {};
  const content = Array.isArray(result["content"]) ? result["content"] : [];
  const told = links.map((link) => ({ type: "text", text: instructionsOf(link.message, link.url) }));
  return resultText(id, { ...result, content: [...content, ...told], isError: true });
}

/**
 * Runs `route`; a sign-in-required failure becomes the question to the user.
 *
 * @example
 * return askToSignIn(ctx, request, (ctx) => forward(ctx, upstream, request.text, id));
 */
export async function askToSignIn(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  route: (ctx: CallContext) => Promise<Answer>,
  asked = 0,
): Promise<Answer> {
  try {
    return await route(ctx);
  } catch (error) {
    const needed = signInData(error);
    const kv = ctx.services.kv;
    if (!needed || !kv) throw error;
    const { id, method } = request.message;
    const { principal, roles } = ctx.identity;
    const auth = ctx.route.upstreams.find((u) => u.name === needed.upstream)?.auth;
    const link = { principal, roles, upstream: needed.upstream, challenge: needed.challenge };
    const byKey = auth?.type === "userKey";
    const page = byKey ? "key" : "start";
    const { url, nonce } = await mintSignInLink(kv, ctx.services.sessionSecret, ctx.route.origin, link, page);
    ctx.record.upstream = needed.upstream;
    // The question is the upstream's to ask: a modern client's retry of it goes back there (eras/multi-round-trip.ts).
    const answered = (text: string) => Answer.ofText(text, { upstream: needed.upstream });
    const wider = needed.challenge.error === "insufficient_scope";
    const ask = byKey
      ? `Upstream "${needed.upstream}" takes your own API key`
      : wider
        ? `Upstream "${needed.upstream}" needs more access (${needed.challenge.scope ?? "a wider scope"})`
        : `Sign in to upstream "${needed.upstream}" to use it`;
    const action = byKey ? "paste your key there" : "sign in";
    const message = `${ask}: open the link in a browser and ${action}; then retry.`;
    const question = {
      key: SIGN_IN_INPUT_KEY,
      message,
      url,
      elicitationId: nonce,
      instructions: instructionsOf(message, url),
      data: { upstream: needed.upstream, reason: "sign-in-required" },
    };
    if (ctx.signInNeeded && methodFacts(method).invokes === "tool") {
      // A code-mode program's call: the link goes to the client with the run's answer (signInLinksAnswer).
      ctx.signInNeeded({ upstream: needed.upstream, mode: "url", message, url, elicitationId: nonce });
      const text = `${ask}: the link went to the client (a program cannot open it): run it again once signed in.`;
      return answered(resultText(id, { content: [{ type: "text", text }], isError: true }));
    }
    const rendezvous = ctx.services.inputRendezvous;
    if (
      asksByUrl(ctx) &&
      ctx.identity.session !== undefined &&
      MULTI_ROUND_TRIP_METHODS.has(method) &&
      rendezvous &&
      asked < MAX_SIGN_INS_PER_CALL
    ) {
      const params = { ...urlElicitation(question), message: `${message.slice(0, -"; then retry.".length)}.` };
      const first = resultText(id, {
        resultType: "input_required",
        inputRequests: { [SIGN_IN_INPUT_KEY]: { method: "elicitation/create", params } },
      });
      // The call run again after the sign-in answers as itself: what served it stays said (`from`).
      let retried: Answer | undefined;
      const bridged = await bridgeInput(ctx, needed.upstream, request.text, id, first, async (retry) => {
        if (actionOf(retry) !== "accept") return declined(id, method, needed.upstream);
        if (!(await awaitSignIn(rendezvous, nonce, SIGN_IN_WAIT_MS, ctx.signal)))
          return errorText(id, URL_ELICITATION_REQUIRED, message, { elicitations: [urlElicitation(question)] });
        await ctx.emit(
          JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/elicitation/complete",
            params: { elicitationId: nonce },
          }),
        );
        // Its answer is read here: it is held whole.
        retried = await askToSignIn(readingAnswer(ctx), request, route, asked + 1);
        return retried.text;
      });
      return retried?.withText(bridged) ?? answered(bridged);
    }
    return answered(await answerWithLink(ctx, request, question));
  }
}
