/**
 * Initialize, relayed: the gateway opens a session with each upstream of the route on
 * the client's behalf (its capabilities and info passed on) and answers for them. On
 * /mcp the answer is the gateway's own, with capabilities merged from the upstreams and an
 * upstream that fails (down, or stalled past its deadline) left out and named in `_meta`
 * (retried on later requests); on /mcp/<upstream> it is the upstream's own result, and its
 * failure is the answer. The sessions opened are handed to `ctx.opened`.
 */
import { GATEWAY_INFO } from "../core/gateway-info";
import { type JsonObject, isObject, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { member, rootSpan, splice } from "../core/raw-json";
import { poolRequest, type CallContext } from "../context/call-context";
import { failureError } from "../upstream/failures";
import { handshake, type Handshake } from "../upstream/pool";
import type { UpstreamSession } from "../upstream/upstream-session";
import { UNAVAILABLE_META_KEY } from "./merge-lists";

/**
 * The `tasks` capability on /mcp: task-augmented tool calls, `tasks/list` and
 * `tasks/cancel` where any upstream offers them (each task is served by its own
 * upstream; the merged list asks only those that list). Absent when no upstream has tasks.
 */
function mergedTasks(handshakes: readonly Handshake[]): JsonObject | undefined {
  const tasks = handshakes
    .map((h) =>
      isObject(h.initializeResult["capabilities"]) ? h.initializeResult["capabilities"]["tasks"] : undefined,
    )
    .filter(isObject);
  if (tasks.length === 0) return undefined;
  const offered = (has: (t: JsonObject) => unknown) => tasks.some((t) => isObject(has(t)));
  const toolCalls = offered((t) => {
    const requests = t["requests"];
    const tools = isObject(requests) ? requests["tools"] : undefined;
    return isObject(tools) ? tools["call"] : undefined;
  });
  return {
    ...(offered((t) => t["list"]) ? { list: {} } : {}),
    ...(offered((t) => t["cancel"]) ? { cancel: {} } : {}),
    ...(toolCalls ? { requests: { tools: { call: {} } } } : {}),
  };
}

/** The capabilities the gateway declares on /mcp, merged from the upstreams that answered. */
export function mergedCapabilities(handshakes: readonly Handshake[]): JsonObject {
  const subscribe = handshakes.some((h) => h.session.subscribe === true);
  const tasks = mergedTasks(handshakes);
  return {
    logging: {},
    completions: {},
    prompts: { listChanged: true },
    resources: { subscribe, listChanged: true },
    tools: { listChanged: true },
    ...(tasks ? { tasks } : {}),
  };
}

/** Between two upstreams' parts of the instructions on /mcp. */
export const INSTRUCTIONS_SEPARATOR = "\n\n";

/** The heading of an upstream's part of the instructions on /mcp. */
export function instructionsHeading(upstream: string): string {
  return `## ${upstream} (tools and prompts named ${upstream}___*)\n`;
}

/** Joins the upstreams' instructions on /mcp, each under its heading, in the order given. */
export function joinInstructions(parts: readonly (readonly [string, string])[]): string | undefined {
  const texts = parts.filter(([, text]) => text !== "").map(([name, text]) => `${instructionsHeading(name)}${text}`);
  return texts.length > 0 ? texts.join(INSTRUCTIONS_SEPARATOR) : undefined;
}

/** The instructions of every upstream on /mcp, each under its name. */
export function aggregatedInstructions(handshakes: readonly [string, Handshake][]): string | undefined {
  return joinInstructions(
    handshakes.map(
      ([name, h]) =>
        [
          name,
          typeof h.initializeResult["instructions"] === "string" ? h.initializeResult["instructions"] : "",
        ] as const,
    ),
  );
}

/** The initialize answer on /mcp/<upstream>: the upstream's own result, with the version we agreed with the client. */
function transparentResult(id: JsonRpcRequest["id"], result: JsonObject, protocolVersion: string): string {
  const text = JSON.stringify({ jsonrpc: "2.0", id, result });
  const span = member(text, member(text, rootSpan(text), "result")!, "protocolVersion")!;
  return splice(text, [{ span, raw: JSON.stringify(protocolVersion) }]);
}

/** Answers `initialize` for the route, opening the upstream sessions. */
export async function initializeUpstreams(ctx: CallContext, request: WireMessage<JsonRpcRequest>): Promise<string> {
  const { id } = request.message;
  const results = await Promise.all(
    ctx.route.upstreams.map(async (upstream) => [upstream, await handshake(upstream, poolRequest(ctx))] as const),
  );
  const upstreams: Record<string, UpstreamSession> = {};
  const succeeded: [string, Handshake][] = [];
  const unavailable: { upstream: string; error: string }[] = [];
  for (const [upstream, result] of results) {
    if (result.ok) {
      upstreams[upstream.name] = result.value.session;
      succeeded.push([upstream.name, result.value]);
    } else {
      ctx.record.upstream = upstream.name;
      if (ctx.route.kind === "upstream") throw failureError(result, ctx.services.env).withId(id);
      const error = failureError(result, ctx.services.env).message;
      unavailable.push({ upstream: upstream.name, error });
      console.warn(`mcp-edge-gateway: initialize: ${error}; its tools are left out until it answers`);
    }
  }
  ctx.opened?.(upstreams);
  const { protocolVersion } = ctx.identity;
  if (ctx.route.kind === "upstream") {
    ctx.record.upstream = succeeded[0]![0];
    return transparentResult(id, succeeded[0]![1].initializeResult, protocolVersion);
  }
  const instructions = aggregatedInstructions(succeeded);
  const result: JsonObject = {
    protocolVersion,
    capabilities: mergedCapabilities(succeeded.map(([, h]) => h)),
    serverInfo: GATEWAY_INFO,
    ...(instructions ? { instructions } : {}),
    // Named as a merged list names them: the client learns which upstreams are missing and why.
    ...(unavailable.length > 0 ? { _meta: { [UNAVAILABLE_META_KEY]: unavailable } } : {}),
  };
  return JSON.stringify({ jsonrpc: "2.0", id, result });
}
