/**
 * One tools/call under the guardrails: the rules that apply to (upstream, tool, persona)
 * read the arguments before anything is forwarded (a `block` rule answers with a tool error
 * and nothing leaves; `redact` forwards the arguments with the findings replaced) and the
 * result before the client sees it (likewise). Hits are written on the call record for the
 * audit event: rule, detector, kind, action and side, never the matched text; the arguments
 * audit records are the ones with every finding replaced.
 *
 * A result too large to hold is checked as it streams to offload, or withheld without
 * offload (large-results.ts). A rule's webhook or model is asked before its detectors run
 * (outside-checks.ts).
 */
import { resultText, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import { pathSpan, type Span } from "../../core/raw-json";
import { withLargeAnswers, type CallContext, type MethodHandler } from "../../context/call-context";
import { Answer } from "../../context/answer";
import type { NamedAt } from "../../context/call-target";
import { matchesGlob } from "../../core/glob";
import type { DetectorContext } from "./detectors";
import type { ApprovalRule, GuardRule, GuardSide, Guardrails } from "./document";
import { guardValue, readStrings, TooDeepError, type GuardHit, type GuardVerdict } from "./guard-json";
import { askOutside, asksOutside } from "./outside-checks";
import { largeResults, MAX_GUARDED_RESULT_BYTES } from "./large-results";

export { MAX_GUARDED_RESULT_BYTES };
/** At most this many distinct hits go on a call's record (and so its audit event). */
export const MAX_RECORDED_HITS = 32;

/** Who and what a call is, as rules are scoped. */
export type GuardScope = { readonly upstream: string; readonly tool: string; readonly persona?: string };

/** Whether `rule`'s scope (upstreams, tools, personas) covers `scope`. */
function inScope(rule: GuardRule | ApprovalRule, scope: GuardScope): boolean {
  return (
    (!rule.upstreams || rule.upstreams.some((glob) => matchesGlob(glob, scope.upstream))) &&
    (!rule.tools || rule.tools.some((glob) => matchesGlob(glob, scope.tool))) &&
    (!rule.personas || (scope.persona !== undefined && rule.personas.includes(scope.persona)))
  );
}

/** The rules of `guardrails` that apply to `scope` on `side`. */
export function rulesFor(guardrails: Guardrails, scope: GuardScope, side: GuardSide): GuardRule[] {
  return guardrails.rules.filter((rule) => rule.on.includes(side) && inScope(rule, scope));
}

/** What the first `approve` rule in scope asks of a call. */
export type ApprovalNeed = { readonly rule: string; readonly roles: readonly string[]; readonly holdSeconds: number };

/**
 * The approvals feature's gate (plugged in by src/chain.ts): the answer that holds, refuses
 * or reports the call (nothing is forwarded), or undefined once an approval lets it run.
 * `shownArguments` are the arguments with the guardrails' findings marked, for approvers' eyes.
 */
export type ApprovalGate = (
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  need: ApprovalNeed & GuardScope,
  shownArguments: unknown,
) => Promise<string | undefined>;

function toolError(id: JsonRpcId, message: string): string {
  return resultText(id, { content: [{ type: "text", text: message }], isError: true });
}

/** Why `rule` blocked one side (`what` names it: "its arguments", "it"), for the client's tool error. */
function blockReason(verdict: GuardVerdict, rule: GuardRule, what: string): string {
  const hits = verdict.hits.filter((hit) => hit.rule === rule.name && hit.action === "block");
  const failure = hits.find((hit) => /-(?:deadline|failed)$/.test(hit.kind));
  if (failure) {
    const late = failure.kind.endsWith("-deadline");
    return `its ${failure.detector} check ${late ? "did not answer in time" : "failed"}, and the rule fails closed`;
  }
  const checked = hits.find((hit) => hit.detector === "webhook" || hit.detector === "model");
  const kinds = [...new Set(hits.map((hit) => hit.kind))].join(", ");
  return checked
    ? `its ${checked.detector} check found ${kinds} in ${what}`
    : `${what} hold${what === "it" ? "s" : ""} ${kinds}`;
}

function record(ctx: CallContext, hits: readonly GuardHit[]): void {
  const all = [...(ctx.record.guardrails ?? []), ...hits];
  ctx.record.guardrails = all.slice(0, MAX_RECORDED_HITS);
}

/** Tells an operator reading logs what was found (names and kinds only) for `warn` rules. */
function logWarnings(scope: GuardScope, hits: readonly GuardHit[]): void {
  const warned = hits.filter((hit) => hit.action === "warn");
  if (warned.length > 0)
    console.warn(JSON.stringify({ event: "guardrail-warn", upstream: scope.upstream, tool: scope.tool, hits: warned }));
}

/** What one side is checked with: the detectors' context, and what the webhooks and models are told. */
type SideChecks = {
  readonly context: DetectorContext;
  readonly scope: GuardScope;
  readonly env: CallContext["services"]["env"];
};

/** The rules' verdict on the value at `span`: the webhooks and models asked first (when rules have them), then the detectors. */
async function checkSide(
  text: string,
  span: Span,
  rules: readonly GuardRule[],
  side: GuardSide,
  checks: SideChecks,
): Promise<GuardVerdict> {
  const asking = rules.filter(asksOutside);
  const outside =
    asking.length === 0
      ? undefined
      : await askOutside(
          asking,
          readStrings(text, span, rules, checks.context.secretKeys),
          side,
          checks.scope,
          checks.env,
        );
  return guardValue(text, span, rules, side, checks.context, outside);
}

/** The arguments side: the request to forward (maybe redacted), or the answer that blocks it. */
async function guardArguments(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  rules: readonly GuardRule[],
  checks: SideChecks,
): Promise<{ request: WireMessage<JsonRpcRequest> } | { answer: string }> {
  const { id } = request.message;
  const span = pathSpan(request.text, ["params", "arguments"]);
  if (!span || rules.length === 0) return { request };
  let verdict: GuardVerdict;
  try {
    verdict = await checkSide(request.text, span, rules, "arguments", checks);
  } catch (error) {
    if (!(error instanceof TooDeepError)) throw error;
    return {
      answer: toolError(
        id,
        `The gateway's guardrails could not check this call's arguments (${error.message}); ` +
          "nothing was sent to the upstream.",
      ),
    };
  }
  if (verdict.hits.length === 0) return { request };
  record(ctx, verdict.hits);
  ctx.record.guardedArguments = JSON.parse(verdict.markedValue) as unknown;
  if (verdict.blockedBy) {
    const rule = verdict.blockedBy;
    return {
      answer: toolError(
        id,
        `The gateway's guardrail "${rule.name}" blocked this call: ${blockReason(verdict, rule, "its arguments")}. ` +
          "Nothing was sent to the upstream.",
      ),
    };
  }
  if (verdict.text === request.text) return { request };
  return { request: { text: verdict.text, message: JSON.parse(verdict.text) as JsonRpcRequest } };
}

/** The result side: the answer as the client gets it. */
async function guardResult(
  ctx: CallContext,
  id: JsonRpcId,
  text: string,
  rules: readonly GuardRule[],
  checks: SideChecks,
): Promise<string> {
  const span = pathSpan(text, ["result"]);
  if (!span || rules.length === 0) return text;
  let verdict: GuardVerdict;
  try {
    verdict = await checkSide(text, span, rules, "result", checks);
  } catch (error) {
    if (!(error instanceof TooDeepError)) throw error;
    if (rules.every((rule) => rule.action === "warn")) return text;
    return toolError(id, `The gateway withheld this result: its guardrails could not check it (${error.message}).`);
  }
  if (verdict.hits.length === 0) return text;
  record(ctx, verdict.hits);
  if (verdict.blockedBy) {
    const rule = verdict.blockedBy;
    return toolError(
      id,
      `The gateway's guardrail "${rule.name}" withheld this result: ${blockReason(verdict, rule, "it")}.`,
    );
  }
  return verdict.text;
}

/**
 * Runs one tools/call of `at` through `guardrails` (the document valid; see the middleware
 * for a broken one).
 *
 * @example
 * return guardCall(ctx, request, next, guardrails, namedAt(ctx.target)!, secretKeys);
 */
export async function guardCall(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  next: MethodHandler,
  guardrails: Guardrails,
  at: NamedAt,
  secretKeys: readonly string[],
  approvals?: ApprovalGate,
): Promise<Answer> {
  const scope: GuardScope = {
    upstream: at.upstream,
    tool: at.name,
    ...(ctx.record.persona !== undefined ? { persona: ctx.record.persona } : {}),
  };
  const checks: SideChecks = {
    context: { secretKeys, patterns: guardrails.patterns },
    scope,
    env: ctx.services.env,
  };
  const { id } = request.message;
  const checked = await guardArguments(ctx, request, rulesFor(guardrails, scope, "arguments"), checks);
  if ("answer" in checked) return Answer.ofText(checked.answer);
  const resultRules = rulesFor(guardrails, scope, "result");
  const enforcing = resultRules.some((rule) => rule.action !== "warn");
  if (enforcing && request.message.params?.["task"] !== undefined) {
    return Answer.ofText(
      toolError(
        id,
        "The gateway's guardrails read this tool's results, and a task's result comes back without its tool's name; " +
          "call the tool without a task.",
      ),
    );
  }
  // After every refusal: asking uses up an approval given for this exact call.
  const approve = guardrails.approvals.find((rule) => inScope(rule, scope));
  if (approve) {
    const need = { rule: approve.name, ...approve.approval, ...scope };
    const shown = ctx.record.guardedArguments ?? request.message.params?.["arguments"];
    const held = approvals
      ? await approvals(ctx, request, need, shown)
      : toolError(id, `The gateway's guardrail "${approve.name}" needs approval, and approvals are not set up.`);
    if (held !== undefined) return Answer.ofText(held);
  }
  const { consumer, outcome } = largeResults(ctx, resultRules, checks.context, (hits) => record(ctx, hits));
  let inner: CallContext = withLargeAnswers(ctx, { guard: consumer ?? "none" });
  // A 2026-07-28 client's own Mcp-Param-* headers mirror the arguments as it sent them: once they are redacted,
  // the gateway mirrors the headers from what it forwards instead (upstream/modern-send.ts), never the client's.
  if (checked.request !== request && inner.paramHeaders !== undefined) {
    const { paramHeaders: _mirroredOriginals, ...withoutHeaders } = inner;
    inner = withoutHeaders;
  }
  const answer = await next(inner, checked.request);
  if (outcome.withheld) return answer; // the tool error, as the relay gave it the client's id
  // A result checked as it streamed to offload comes back as offload's compact answer, made of what the rules allowed.
  const out = outcome.streamed ? answer : answer.withText(await guardResult(ctx, id, answer.text, resultRules, checks));
  logWarnings(scope, ctx.record.guardrails ?? []);
  return out;
}
