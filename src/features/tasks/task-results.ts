/**
 * Task results and output filters. A task-augmented tools/call answers with a task; the
 * tool's result comes later by `tasks/result`, which names the task, not the tool, so
 * the gateway cannot tell which rule of a filter set applies. Rather than let a result
 * pass a filter that way, a `tasks/result` from an upstream whose enforced (or broken)
 * set has a rule that may apply to one of its tools is withheld: the client gets a tool
 * error. Status, listing and cancellation are unaffected, and so are upstreams no rule names.
 */
import { resultText, type JsonRpcId } from "../../core/jsonrpc";
import { pathSpan } from "../../core/raw-json";
import { RELATED_TASK_META_KEY, taskIdUpstream } from "./task-ids";
import { isGlob } from "../../core/glob";
import { activeFilters, type ActiveFilters } from "../filters/filter-store";
import { DEFAULT_DOCUMENT_CACHE_TTL_MS } from "../../config/gateway-config";
import { onRequests, type Middleware } from "../../context/call-context";

export type TaskResultOptions = { readonly cacheTtlMs?: number };

/** True when rule key `key` (`<upstream>___<tool>`, maybe a glob) may match a tool of `upstream`. */
function mayName(key: string, upstream: string): boolean {
  const prefix = `${upstream}___`;
  if (!isGlob(key)) return key.startsWith(prefix);
  const literal = key.split(/[*?]/)[0]!;
  return literal.startsWith(prefix) || prefix.startsWith(literal);
}

/** Why a task result of `upstream` is withheld, or undefined when it may pass. */
function withheldBecause(active: ActiveFilters, upstream: string): string | undefined {
  if (active.state === "broken")
    return !active.toolKeys || active.toolKeys.some((key) => mayName(key, upstream)) ? active.message : undefined;
  if (active.state !== "active" || active.set.mode !== "enforce") return undefined;
  const keys = Object.keys(active.set.tools).filter((key) => mayName(key, upstream));
  if (keys.length === 0) return undefined;
  return `filter set "${active.set.name}" filters tools of "${upstream}" (${keys.slice(0, 3).join(", ")}), and a task's result does not say which tool it comes from; call the tool without a task`;
}

function withheld(id: JsonRpcId, taskId: unknown, reason: string): string {
  return resultText(id, {
    content: [{ type: "text", text: `The gateway withheld this result: ${reason}.` }],
    isError: true,
    _meta: { [RELATED_TASK_META_KEY]: { taskId } },
  });
}

/**
 * The task-result middleware: withholds `tasks/result` answers a filter set may be about.
 *
 * @example
 * const handler = composeMiddleware([taskResults({ cacheTtlMs: 30_000 })], relay);
 */
export function taskResults({ cacheTtlMs = DEFAULT_DOCUMENT_CACHE_TTL_MS }: TaskResultOptions = {}): Middleware {
  return onRequests(
    (next) =>
      async function taskResults(ctx, request) {
        const { id, params } = request.message;
        const taskId = params?.["taskId"];
        // Unverified: an id that is not the caller's is refused by the relay, and nothing is withheld from an error.
        const upstream = ctx.route.kind === "upstream" ? ctx.route.upstream.name : taskIdUpstream(taskId);
        // An id naming no upstream is refused by the relay.
        if (upstream === undefined) return next(ctx, request);
        const route = ctx.route.kind === "upstream" ? upstream : "";
        const active = await activeFilters(ctx.services.kv, route, upstream, cacheTtlMs);
        const reason = withheldBecause(active, upstream);
        // Asked all the same: the answer still waits for the task to end, and an unknown task is still an error.
        const answer = await next(ctx, request);
        if (reason === undefined || !pathSpan(answer.text, ["result"])) return answer;
        console.warn(`mcp-edge-gateway: tasks/result withheld: ${reason}`);
        return answer.withText(withheld(id, taskId, reason));
      },
  );
}
