/**
 * The approvals gate: a tools/call under a guardrails `approve` rule (guard-call.ts calls it,
 * after the arguments' own rules passed) is held in its object until a person holding one of
 * the rule's roles, not the caller, approves it. Each attempt of the call asks its object:
 *
 * - held: nothing is forwarded; the caller is pointed at the approval's link in its era's
 *   idiom (upstream-sign-in/link-answer.ts: `input_required` with a URL elicitation, the
 *   -32042 error, or a tool error). A 2025 client's answer turns into an SSE stream instead
 *   (a log message with the link first, keepalives while nothing is written) and waits for
 *   the decision, up to APPROVAL_WAIT_MS; a code-mode program's inner call never waits;
 * - approved: the call runs, once (the approval is used up);
 * - denied, or approved too long ago: a tool error saying so; the next attempt asks anew.
 */
import { resultText, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import { pathSpan } from "../../core/raw-json";
import type { CallContext } from "../../context/call-context";
import type { CallApprovalRpc, HeldCall } from "../../context/object-rpc";
import type { ApprovalNeed, GuardScope } from "../guardrails/guard-call";
import { redactParameters } from "../audit/redact-parameters";
import { secretKeyMatcher } from "../audit/secret-keys";
import { answerWithLink } from "../upstream-sign-in/link-answer";
import { approvalEvent, auditApproval, type ApprovalEventKind } from "./approval-events";
import { callDigest, EXACT_DECIMAL_DIGITS, inexactNumber, TooDeepArgumentsError } from "./digest";
import { indexHeldCall } from "./desk";

/** How long a 2025 client's call waits for its decision on an open stream before it is answered with the link. */
export const APPROVAL_WAIT_MS = 5 * 60_000;
/**
 * Arguments larger than this (bytes of their JSON) are not kept for approvers to read: the
 * object stores a note of their size instead, and the approval still binds every byte.
 */
export const MAX_SHOWN_ARGUMENTS_BYTES = 64 * 1024;
/** The key of the approval question in an input_required answer. */
export const APPROVAL_INPUT_KEY = "approval";

function toolError(id: JsonRpcId, text: string): string {
  return resultText(id, { content: [{ type: "text", text }], isError: true });
}

function audit(ctx: CallContext, kind: ApprovalEventKind, call: HeldCall): void {
  const route = ctx.route.kind === "aggregated" ? "/mcp" : `/mcp/${ctx.route.upstream}`;
  auditApproval(ctx.services.auditQueue, ctx.waitUntil, [approvalEvent(kind, call, ctx.identity.principal, route)]);
}

/** The arguments as approvers read them, or a note of their size when past MAX_SHOWN_ARGUMENTS_BYTES. */
function shownToApprovers(value: unknown): unknown {
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes <= MAX_SHOWN_ARGUMENTS_BYTES) return value;
  const note = `more than ${MAX_SHOWN_ARGUMENTS_BYTES} shown to approvers; the approval binds them all`;
  return `[arguments of ${bytes} bytes, ${note}]`;
}

/** A duration for people: "90 seconds", "10 minutes". */
function duration(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}` : `${seconds} seconds`;
}

/** The decision, or the call as it stood when the wait ended (timeout) or the client went away (undefined). */
async function waitOrLeave(object: CallApprovalRpc, signal: AbortSignal): Promise<HeldCall | undefined> {
  if (signal.aborted) return undefined;
  const left = new Promise<undefined>((resolve) => signal.addEventListener("abort", () => resolve(undefined)));
  return Promise.race([object.wait(APPROVAL_WAIT_MS), left]);
}

/**
 * Holds, runs or refuses one attempt of a call under `need` (see the header): the answer
 * that ends the call here, or undefined to forward it.
 *
 * @example
 * const need = { rule: "payments", roles: ["finance"], holdSeconds: 600, upstream: "bank", tool: "pay" };
 * const held = await holdForApproval(ctx, request, need, args);
 */
export async function holdForApproval(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  need: ApprovalNeed & GuardScope,
  shownArguments: unknown,
): Promise<string | undefined> {
  const { id } = request.message;
  const namespace = ctx.services.approvals;
  if (!namespace)
    return toolError(
      id,
      `The gateway's guardrail "${need.rule}" needs a person's approval for this call, and the gateway has no ` +
        "APPROVALS binding to hold it in; an operator must add it (wrangler.toml). Nothing was sent to the upstream.",
    );
  const args = request.message.params?.["arguments"] ?? {};
  const span = pathSpan(request.text, ["params", "arguments"]);
  const inexact = inexactNumber(span ? request.text.slice(span.start, span.end) : JSON.stringify(args));
  if (inexact !== undefined)
    return toolError(
      id,
      `The gateway cannot hold this call for approval: the number ${inexact.slice(0, 40)} in its arguments has more ` +
        `than ${EXACT_DECIMAL_DIGITS} significant digits (or is out of range), so an approval of it could run ` +
        "another number. Send it as a string. Nothing was sent to the upstream.",
    );
  const caller = ctx.identity.principal;
  let digest: string;
  try {
    digest = await callDigest(ctx.services.sessionSecret, {
      caller,
      upstream: need.upstream,
      tool: need.tool,
      arguments: args,
    });
  } catch (error) {
    if (!(error instanceof TooDeepArgumentsError)) throw error;
    return toolError(id, `The gateway cannot hold this call for approval: its ${error.message}.`);
  }
  const isSecret = secretKeyMatcher(ctx.services.config.audit.redactKeys);
  const call = {
    id: digest,
    caller,
    upstream: need.upstream,
    tool: need.tool,
    rule: need.rule,
    roles: need.roles,
    holdSeconds: need.holdSeconds,
    arguments: shownToApprovers(redactParameters(shownArguments ?? {}, isSecret)),
    requestedAt: Date.now(),
  };
  const object = namespace.get(namespace.idFromName(digest));
  const mayWait = ctx.identity.era === "legacy" && ctx.codeRun === undefined;
  return attempt(ctx, request, object, call, mayWait);
}

async function attempt(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  object: CallApprovalRpc,
  call: Parameters<CallApprovalRpc["ask"]>[0],
  mayWait: boolean,
): Promise<string | undefined> {
  const { id } = request.message;
  const asked = await object.ask(call);
  const held = asked.call;
  switch (asked.kind) {
    case "run":
      audit(ctx, "ran", held);
      return undefined;
    case "denied":
      audit(ctx, "denial-seen", held);
      return toolError(
        id,
        `${held.decidedBy} denied this call (guardrail "${held.rule}"); nothing was sent to the upstream. ` +
          "Calling again asks for a new approval.",
      );
    case "expired":
      audit(ctx, "expired", held);
      return toolError(
        id,
        `The approval of this call by ${held.decidedBy} ` +
          `expired at ${new Date(held.approvedUntil ?? 0).toISOString()} ` +
          `(an approval holds ${duration(held.holdSeconds)}); nothing was sent to the upstream. ` +
          "Calling again asks for a new approval.",
      );
    case "created":
      await indexHeldCall(ctx.services.kv, held);
      audit(ctx, "held", held);
      break;
    case "pending":
      break;
  }
  const url = `${ctx.route.origin}/approvals/${held.id}`;
  const roles = held.roles.join(" or ");
  const message =
    `The gateway holds this call until a person with the role ${roles}, other than you, approves it ` +
    `(guardrail "${held.rule}"): the approval is at the link. Once approved, call again with the same arguments ` +
    `within ${duration(held.holdSeconds)}: the approval runs this exact call once.`;
  if (mayWait) {
    await ctx.emit(
      JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: {
          level: "notice",
          logger: "gateway.approvals",
          data: {
            message: `${message} This call waits up to ${duration(APPROVAL_WAIT_MS / 1000)} for the decision.`,
            url,
            approval: held.id,
          },
        },
      }),
    );
    const decided = await waitOrLeave(object, ctx.signal);
    if (decided?.state === "approved" || decided?.state === "denied") return attempt(ctx, request, object, call, false);
  }
  const instructions = `${message.replace("at the link", `at ${url}`)} Nothing was sent to the upstream yet.`;
  // A program's call (code mode) cannot ask its client: the tool error it gets names the link, to return.
  if (ctx.codeRun !== undefined) return toolError(id, instructions);
  return answerWithLink(ctx, request, {
    key: APPROVAL_INPUT_KEY,
    message,
    url,
    elicitationId: held.id,
    instructions,
    data: { upstream: held.upstream, reason: "approval-required", approval: held.id },
  });
}
