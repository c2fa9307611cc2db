/**
 * Tasks on the aggregated endpoint (MCP 2025-11-25): `tasks/get`, `tasks/result` and
 * `tasks/cancel` go to the upstream the task id names (see core/task-ids), with the
 * upstream's own id, and the answer comes back with the id the client knows.
 * (`tasks/list` is a merged list; task-augmented `tools/call` is routed by tool name.)
 */
import { GatewayError } from "../core/errors";
import { INVALID_PARAMS, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { pathSpan, splice } from "../core/raw-json";
import { decodeTaskId, toGatewayTaskIds } from "./task-ids";
import type { CallContext } from "../context/call-context";
import { forward } from "./forward";

/** The methods that name one task by `params.taskId`. */
export const TASK_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/result", "tasks/cancel"]);

/**
 * Answers a task method on /mcp. An id the gateway did not hand out, or naming an
 * upstream this route does not serve, is a nonexistent task: -32602, as the
 * specification prescribes for an invalid or nonexistent `taskId`.
 */
export async function routeTask(ctx: CallContext, request: WireMessage<JsonRpcRequest>): Promise<string> {
  const { id, method } = request.message;
  const taskId = request.message.params?.["taskId"];
  const decoded = decodeTaskId(taskId);
  const upstream = decoded && ctx.route.upstreams.find((u) => u.name === decoded.upstream);
  const span = pathSpan(request.text, ["params", "taskId"]);
  if (!decoded || !upstream || !span) {
    const shown = typeof taskId === "string" ? JSON.stringify(taskId.slice(0, 80)) : "params.taskId";
    throw new GatewayError(200, INVALID_PARAMS, `Invalid params: task not found: ${shown} is not a task id this gateway handed out`, undefined, id);
  }
  const text = splice(request.text, [{ span, raw: JSON.stringify(decoded.taskId) }]);
  return toGatewayTaskIds(await forward(ctx, upstream, text, id), upstream.name, method);
}
