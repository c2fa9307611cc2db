/**
 * The guardrails middleware: every tools/call to an upstream (direct, or through
 * `sys___call_tool`, which enters the pipeline as a direct call) goes
 * through the rules of the guardrails document (guard-call.ts), in both protocol eras. It
 * sits innermost, next to the relay: it reads the arguments as the upstream will get them
 * and the result as the upstream sent it, before output filters shape it and before
 * offload stores it, so an offloaded result's preview and reads are what the rules allow.
 *
 * Without a document nothing happens (and the engine is never loaded). With an invalid one
 * every tools/call is refused with a tool error: rules that do not apply must not let data
 * through silently.
 */
import { resultText } from "../../core/jsonrpc";
import { SYS_PREFIX } from "../../core/names";
import { onRequests, type Middleware } from "../../context/call-context";
import { Answer } from "../../context/answer";
import { namedAt } from "../../context/call-target";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { loadGuardrails } from "./store";
import type { ApprovalGate } from "./guard-call";

export type GuardrailsOptions = {
  readonly cacheTtlMs?: number;
  /** Holds calls under `approve` rules (features/approvals/); without it such calls are refused. */
  readonly approvals?: ApprovalGate;
};

/**
 * Withholds, in tools/list, the `outputSchema` of tools whose results a `redact` rule may
 * change for this caller (list-schemas.ts says why). It sits beside the output filters,
 * which withhold a filtered tool's schema, outside pinned lists: pins judge the upstream's
 * own definitions, never one the gateway shaped.
 *
 * @example
 * const list = [outputFilters(), redactedSchemas({ cacheTtlMs: 30_000 }), pinnedLists()];
 */
export function redactedSchemas({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: GuardrailsOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function redactedSchemas(ctx, request) {
        const answer = await next(ctx, request);
        const loaded = await loadGuardrails(ctx.services.kv, cacheTtlMs);
        if (loaded.state !== "valid") return answer;
        return answer.withText(await loaded.engine.withholdRedactedSchemas(ctx, answer.text, loaded.value));
      },
  );
}

/**
 * The guardrails middleware.
 *
 * @example
 * const handler = composeMiddleware([guardrails({ cacheTtlMs: 30_000 })], relay);
 */
export function guardrails({
  cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS,
  approvals,
}: GuardrailsOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function guardrails(ctx, request) {
        const at = namedAt(ctx.target);
        if (!at || at.key.startsWith(SYS_PREFIX)) return next(ctx, request);
        const loaded = await loadGuardrails(ctx.services.kv, cacheTtlMs);
        if (loaded.state === "absent") return next(ctx, request);
        if (loaded.state === "broken") {
          // The problems are the operator's to read (GET /admin/guardrails, the log), not the client's.
          const text =
            "The gateway withheld this call: its guardrails document is invalid, so no rule can be applied. " +
            "An operator must fix it.";
          return Answer.ofText(resultText(request.message.id, { content: [{ type: "text", text }], isError: true }));
        }
        const { redactKeys } = ctx.services.config.audit;
        return loaded.engine.guardCall(ctx, request, next, loaded.value, at, redactKeys, approvals);
      },
  );
}
