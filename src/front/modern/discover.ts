/**
 * `server/discover`, answered by the gateway itself (server/discover.mdx): the
 * revisions it serves, the capabilities of the route and instructions. On /mcp those
 * are merged from the upstreams as the 2025 initialize merges them (relay/initialize.ts);
 * on /mcp/<upstream> they are what that upstream declared. The handshakes behind it are
 * the client's own upstream sessions (upstream/pool.ts `upstreamHandshake`), so a
 * discover costs no handshake its later requests would not have made anyway.
 */
import { GATEWAY_INFO } from "../../core/gateway-info";
import { isObject, type JsonObject, type JsonRpcId } from "../../core/jsonrpc";
import { poolRequest, type CallContext } from "../../context/call-context";
import { aggregatedInstructions, mergedCapabilities } from "../../relay/initialize";
import { UNAVAILABLE_META_KEY } from "../../relay/merge-lists";
import { failureError } from "../../upstream/failures";
import { upstreamHandshake, type Handshake } from "../../upstream/pool";
import { cachingHints } from "./caching";
import { SERVED_PROTOCOL_VERSIONS, SERVER_INFO_META_KEY } from "./protocol";

/**
 * What a modern client may rely on from merged capabilities: no resource subscriptions
 * (removed in 2026-07-28) and no tasks (an extension the gateway does not bridge yet).
 */
function modernCapabilities(capabilities: JsonObject): JsonObject {
  const { tasks: _tasks, resources, ...rest } = capabilities;
  if (!isObject(resources)) return rest;
  const { subscribe: _subscribe, ...resourceRest } = resources;
  return { ...rest, resources: resourceRest };
}

/**
 * The `server/discover` response text for the route of `ctx`.
 *
 * @example
 * const text = await discover(ctx, request.id);
 */
export async function discover(ctx: CallContext, id: JsonRpcId): Promise<string> {
  const results = await Promise.all(ctx.route.upstreams.map(async (upstream) => [upstream.name, await upstreamHandshake(upstream, poolRequest(ctx))] as const));
  const succeeded: [string, Handshake][] = [];
  const unavailable: { upstream: string; error: string }[] = [];
  for (const [name, result] of results) {
    if (result.ok) succeeded.push([name, result.value]);
    else {
      const error = failureError(result, ctx.services.env);
      if (!ctx.route.aggregated) throw error.withId(id);
      unavailable.push({ upstream: name, error: error.message });
    }
  }
  let capabilities: JsonObject;
  let instructions: string | undefined;
  let serverInfo: unknown = GATEWAY_INFO;
  if (ctx.route.aggregated) {
    capabilities = mergedCapabilities(succeeded.map(([, h]) => h));
    instructions = aggregatedInstructions(succeeded);
  } else {
    const declared = succeeded[0]![1].initializeResult;
    capabilities = isObject(declared["capabilities"]) ? declared["capabilities"] : {};
    instructions = typeof declared["instructions"] === "string" ? declared["instructions"] : undefined;
    serverInfo = isObject(declared["serverInfo"]) ? declared["serverInfo"] : GATEWAY_INFO;
  }
  const result: JsonObject = {
    resultType: "complete",
    supportedVersions: [...SERVED_PROTOCOL_VERSIONS],
    capabilities: modernCapabilities(capabilities),
    ...(instructions ? { instructions } : {}),
    ...cachingHints(ctx.identity),
    _meta: { [SERVER_INFO_META_KEY]: serverInfo, ...(unavailable.length > 0 ? { [UNAVAILABLE_META_KEY]: unavailable } : {}) },
  };
  return JSON.stringify({ jsonrpc: "2.0", id, result });
}
