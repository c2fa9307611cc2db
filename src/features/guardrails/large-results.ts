/**
 * What the guardrails do with a result too large to hold (the relay hands it over as a
 * stream once it passes the consumer's `minBytes`). With offload taking large answers, the
 * stream is checked on its way to offload (stream-guard.ts), so what is stored, previewed
 * and read back is what the rules allow; a `block` finding aborts the upload and withholds
 * the result. A webhook or model cannot be sent such a result: each rule that asks one
 * fails as it says (`closed` withholds the result, `open` records and lets it by). Without
 * offload a large result cannot be checked in memory: `block` or `redact` rules withhold
 * it, naming MAX_GUARDED_RESULT_BYTES (under warn-only rules the relay refuses an answer
 * past its own bound, the same 16 MiB, as it does without guardrails).
 */
import { resultText, type JsonRpcId } from "../../core/jsonrpc";
import { shapedLargeAnswer, type CallContext, type LargeAnswerTaker } from "../../context/call-context";
import type { DetectorContext } from "./detectors";
import type { GuardRule } from "./document";
import type { GuardHit } from "./guard-json";
import { asksOutside } from "./outside-checks";
import { guardedStream, StreamBlocked } from "./stream-guard";

/** Results larger than this (UTF-8 bytes, as the upstream sent them) are not checked in memory. */
export const MAX_GUARDED_RESULT_BYTES = 16 * 1024 * 1024;

/** How a large result went: withheld (the relay's answer is then the tool error), or checked while streamed to offload. */
export type LargeOutcome = { withheld: boolean; streamed: boolean };

function toolError(id: JsonRpcId, message: string): string {
  return resultText(id, { content: [{ type: "text", text: message }], isError: true });
}

/**
 * The consumer of large results under `rules` (none: the relay's default), and what became
 * of the one taken.
 *
 * @example
 * const { consumer, outcome } = largeResults(ctx, rules, context, (hits) => record(ctx, hits));
 */
export function largeResults(
  ctx: CallContext,
  rules: readonly GuardRule[],
  context: DetectorContext,
  record: (hits: GuardHit[]) => void,
): { consumer: LargeAnswerTaker | undefined; outcome: LargeOutcome } {
  const outcome: LargeOutcome = { withheld: false, streamed: false };
  // What the filters or offload, outside, decided for a large answer: the guard sits in front of it.
  const outer = shapedLargeAnswer(ctx.largeAnswers);
  // The tool error answers the request the relay reads (`id`: for a 2026-07-28 client, the gateway's own).
  const withheld = (id: JsonRpcId, message: string) => {
    outcome.withheld = true;
    return toolError(id, message);
  };
  const withhold = async (body: ReadableStream<Uint8Array>, id: JsonRpcId, message: string) => {
    await body.cancel();
    return withheld(id, message);
  };
  if (!outer) {
    if (!rules.some((rule) => rule.action !== "warn")) return { consumer: undefined, outcome };
    const tooLarge =
      `The gateway withheld this result: it is larger than ${MAX_GUARDED_RESULT_BYTES} bytes, ` +
      "too large for its guardrails to check.";
    return {
      consumer: { minBytes: MAX_GUARDED_RESULT_BYTES, take: (body, id) => withhold(body, id, tooLarge) },
      outcome,
    };
  }
  const minBytes = Math.min(outer.minBytes, MAX_GUARDED_RESULT_BYTES);
  const take = async (body: ReadableStream<Uint8Array>, id: JsonRpcId) => {
    for (const rule of rules.filter(asksOutside)) {
      const detector = rule.webhook ? "webhook" : "model";
      const failure = (rule.webhook ?? rule.model)?.failure;
      if (failure === "closed" && rule.action !== "warn")
        return withhold(
          body,
          id,
          `The gateway's guardrail "${rule.name}" withheld this result: it is too large (over ${minBytes} bytes) ` +
            `to send to its ${detector} check, and the rule fails closed.`,
        );
      record([{ rule: rule.name, action: "warn", detector, kind: `${detector}-failed`, where: "result", count: 1 }]);
    }
    try {
      const answer = await outer.take(guardedStream(body, rules, context, record), id);
      outcome.streamed = true;
      return answer;
    } catch (error) {
      if (!(error instanceof StreamBlocked)) throw error;
      return withheld(id, `The gateway's guardrail "${error.rule.name}" withheld this result: it holds ${error.kind}.`);
    }
  };
  return { consumer: { minBytes, take }, outcome };
}
