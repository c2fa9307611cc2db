/**
 * Tasks (MCP 2025-11-25; the 2026-07-28 tasks extension's `tasks/get`, `tasks/update`,
 * `tasks/cancel`) on both routes. The ids a client sees are the gateway's, bound to the
 * caller's principal (task-ids.ts): `tasks/get`, `tasks/result`, `tasks/cancel` and
 * `tasks/update` go to the upstream the id names, with the upstream's own id, and only for
 * the principal the id was handed to. A task-augmented `tools/call` records the created
 * task as its caller's (task-owners.ts), and a task list shows only the caller's
 * own tasks, whatever the upstream's task store lets anyone list.
 */
import { GatewayError } from "../../core/errors";
import { INVALID_PARAMS, type JsonRpcId, type JsonRpcRequest, type WireMessage } from "../../core/jsonrpc";
import { keepListed } from "../../core/raw-json-lists";
import { elements, member, parseSpan, pathSpan, splice } from "../../core/raw-json";
import { recordTaskOwner, ownedTasks } from "./task-owners";
import { decodeTaskId, ownerTag, taskIdBinding, taskTag, toGatewayTaskIds, toUpstreamTaskIds } from "./task-ids";
import type { CallContext } from "../../context/call-context";
import type { Answer } from "../../context/answer";
import type { RelayTasks, SendToUpstream } from "../../relay/plugs";

/** The methods that name one task by `params.taskId`. */
export const TASK_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/result", "tasks/cancel", "tasks/update"]);
/** How much of an unknown task id the error repeats. */
const MAX_SHOWN_ID_CHARS = 80;

/**
 * The answer to a task id that names no task of the caller's (not the gateway's, another
 * principal's, or of an upstream the caller does not reach): -32602, as the specification
 * prescribes for an invalid or nonexistent `taskId`, and the same whichever it is.
 */
export function unknownTask(taskId: unknown, id: JsonRpcId): GatewayError {
  const shown = typeof taskId === "string" ? JSON.stringify(taskId.slice(0, MAX_SHOWN_ID_CHARS)) : "params.taskId";
  return new GatewayError(
    200,
    INVALID_PARAMS,
    `Invalid params: task not found: ${shown} is not a task id this gateway handed out`,
    undefined,
    id,
  );
}

/** Answers a task method: sent to the upstream the id names, as that upstream's own id. */
export async function routeTask(
  ctx: CallContext,
  request: WireMessage<JsonRpcRequest>,
  forward: SendToUpstream,
): Promise<Answer> {
  const { id, method } = request.message;
  const taskId = request.message.params?.["taskId"];
  const binding = taskIdBinding(ctx);
  const decoded = await decodeTaskId(binding, taskId);
  const upstream = decoded && ctx.route.upstreams.find((u) => u.name === decoded.upstream);
  const span = pathSpan(request.text, ["params", "taskId"]);
  if (!decoded || !upstream || !span) throw unknownTask(taskId, id);
  const text = splice(request.text, [{ span, raw: JSON.stringify(decoded.taskId) }]);
  const answer = await forward(ctx, upstream, text, id);
  return answer.withText(await toGatewayTaskIds(answer.text, upstream.name, binding, method));
}

/**
 * The answer to a task-augmented request (`method`, a `tools/call`) sent to `upstream`: the task it created is
 * recorded as the caller's, and its id given in the caller's form.
 */
export async function createdTask(
  ctx: CallContext,
  upstream: string,
  created: Answer,
  method: string,
): Promise<Answer> {
  const answer = created.text;
  const binding = taskIdBinding(ctx);
  const task = pathSpan(answer, ["result", "task"]);
  const idSpan = task && answer.charCodeAt(task.start) === 0x7b ? member(answer, task, "taskId") : undefined;
  const taskId = idSpan ? parseSpan(answer, idSpan) : undefined;
  const kv = ctx.services.kv;
  if (typeof taskId === "string" && kv) {
    const ttlSpan = member(answer, task!, "ttl");
    const ttl = ttlSpan ? parseSpan(answer, ttlSpan) : null;
    try {
      await recordTaskOwner(
        kv,
        await ownerTag(binding),
        await taskTag(binding, upstream, taskId),
        typeof ttl === "number" && ttl >= 0 ? ttl : null,
      );
    } catch (error) {
      // The task still runs and its id works; only lists will not show it.
      console.warn(
        `mcp-edge-gateway: a task of "${upstream}" was not recorded for task lists: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return created.withText(await toGatewayTaskIds(answer, upstream, binding, method));
}

/** The tags of the caller's own tasks, read from KV at most once however often it is called (one per list request). */
export function ownTasksOf(ctx: CallContext): () => Promise<ReadonlySet<string>> {
  let owned: Promise<ReadonlySet<string>> | undefined;
  return () => {
    const kv = ctx.services.kv;
    // Without the index no task can be shown as the caller's.
    owned ??= kv
      ? ownerTag(taskIdBinding(ctx)).then((owner) => ownedTasks(kv, owner))
      : Promise.resolve(new Set<string>());
    return owned;
  };
}

/** One upstream's `tasks/list` answer with only the caller's own tasks (`owned`), their ids in the caller's form. */
export async function ownTaskList(
  ctx: CallContext,
  upstream: string,
  answer: string,
  owned: () => Promise<ReadonlySet<string>>,
): Promise<string> {
  const binding = taskIdBinding(ctx);
  const list = pathSpan(answer, ["result", "tasks"]);
  if (!list || answer.charCodeAt(list.start) !== 0x5b) return toGatewayTaskIds(answer, upstream, binding, "tasks/list");
  const mine = await owned();
  const kept = new Set<number>();
  await Promise.all(
    elements(answer, list).map(async (item) => {
      const idSpan = answer.charCodeAt(item.start) === 0x7b ? member(answer, item, "taskId") : undefined;
      const taskId = idSpan ? parseSpan(answer, idSpan) : undefined;
      if (typeof taskId === "string" && mine.has(await taskTag(binding, upstream, taskId))) kept.add(item.start);
    }),
  );
  return toGatewayTaskIds(
    keepListed(answer, "tasks", (_name, item) => kept.has(item.start)),
    upstream,
    binding,
    "tasks/list",
  );
}

/** Tasks as the relay needs them (relay/plugs.ts), handed to `createRelay` by src/chain.ts. */
export const relayTasks: RelayTasks = {
  methods: TASK_METHODS,
  route: routeTask,
  created: createdTask,
  ownedBy: ownTasksOf,
  ownList: ownTaskList,
  toClient: (ctx, text, upstream) => toGatewayTaskIds(text, upstream, taskIdBinding(ctx)),
  toUpstream: (ctx, text, upstream) => toUpstreamTaskIds(text, upstream, taskIdBinding(ctx)),
};
