/**
 * Rules and hints (the reference platform's rule enforcement): appends guidance to tool
 * results from the rules document (features/shaping/rules-document.ts). Each message is a text content
 * block added after the result's own blocks; the original blocks, `structuredContent`
 * and every other byte of the answer stay as they were, so a tool with an
 * `outputSchema` still validates. JSON-RPC errors have no content to add to and pass
 * unchanged, and so do input_required answers (the question is not the result). The
 * rules fired are written on the call record.
 */
import { RULES_KEY } from "../../storage/document-keys";
import { isObject } from "../../core/jsonrpc";
import { appendMemberSplice, elements, member, pathSpan, splice, type Splice } from "../../core/raw-json";
import { SYS_PREFIX } from "../../core/names";
import { onRequests, readingAnswer, type Middleware } from "../../context/call-context";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { loadDocument } from "../../storage/document-store";
import { isInputRequired } from "../../eras/request-state";
import { checkRules, conditionHolds, hintsFor, rulesFor, type Rule } from "./rules-document";
import { namedAt } from "../../context/call-target";

export type RuleOptions = { readonly cacheTtlMs?: number };

/** The result with `texts` appended as text blocks to its content; undefined for an answer without a result. */
function appendTexts(answer: string, texts: readonly string[]): string | undefined {
  const result = pathSpan(answer, ["result"]);
  if (!result || answer.charCodeAt(result.start) !== 0x7b) return undefined;
  const blocks = texts.map((text) => JSON.stringify({ type: "text", text })).join(",");
  const content = member(answer, result, "content");
  let edit: Splice;
  if (content && answer.charCodeAt(content.start) === 0x5b) {
    const close = content.end - 1;
    edit = { span: { start: close, end: close }, raw: `${elements(answer, content).length > 0 ? "," : ""}${blocks}` };
  } else if (!content) edit = appendMemberSplice(answer, result, "content", `[${blocks}]`);
  else return undefined;
  return splice(answer, [edit]);
}

function needsResult(rules: readonly Rule[]): boolean {
  return rules.some((rule) => rule.when !== undefined && !("argument" in rule.when));
}

/**
 * The rules middleware, for tool calls (src/chain.ts declares it for them only).
 *
 * @example
 * const handler = composeMiddleware([rules({ cacheTtlMs: 30_000 })], relay);
 */
export function rules({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: RuleOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function rules(ctx, request) {
        const { params } = request.message;
        const key = namedAt(ctx.target);
        if (!key || key.key.startsWith(SYS_PREFIX)) return next(ctx, request);
        const kv = ctx.services.kv;
        const stored = kv ? await loadDocument(kv, RULES_KEY, cacheTtlMs, checkRules) : undefined;
        if (stored?.state !== "valid") return next(ctx, request);
        const matching = rulesFor(stored.value, key.key);
        const hints = hintsFor(stored.value, key.key);
        if (matching.length === 0 && hints.length === 0) return next(ctx, request);
        // The answer is read below: it is held whole, never passed on as it flows.
        const answered = await next(readingAnswer(ctx), request);
        const answer = answered.text;
        // A question for the client (multi-round-trip) is not the tool's result: guidance goes on the answer to its retry.
        if (isInputRequired(answer)) return answered;
        let result: unknown;
        if (needsResult(matching)) {
          const parsed: unknown = JSON.parse(answer);
          result = isObject(parsed) ? parsed["result"] : undefined;
        } else result = pathSpan(answer, ["result"]) ? {} : undefined;
        if (!isObject(result)) return answered; // a JSON-RPC error: nothing to append to
        const subject = { arguments: params?.["arguments"], result, failed: result["isError"] === true };
        const fired = matching.filter((rule) => conditionHolds(rule.when, subject));
        if (fired.length === 0 && hints.length === 0) return answered;
        const out = appendTexts(answer, [...fired.map((rule) => rule.message), ...hints]);
        if (out === undefined) return answered;
        if (fired.length > 0) ctx.record.rulesFired = fired.map((rule) => rule.name);
        return answered.withText(out);
      },
  );
}
