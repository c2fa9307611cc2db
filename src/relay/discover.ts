/**
 * What a route is, for `server/discover` (2026-07-28): the capabilities, instructions
 * and server info of the route's upstreams, as the 2025 initialize merges them on /mcp
 * (relay/initialize.ts) and as the upstream declared them on /mcp/<upstream>. It runs in
 * the pipeline like any request, so text overrides, authorization, rate limits and audit
 * apply; the 2026 front turns this result into the revision's own answer. The handshakes
 * behind it are the client's own upstream sessions (upstream/pool.ts `upstreamHandshake`),
 * so a discover costs no handshake its later requests would not have made anyway.
 */
import { GATEWAY_INFO } from "../core/gateway-info";
import { isObject, resultText, type JsonObject, type JsonRpcRequest, type WireMessage } from "../core/jsonrpc";
import { poolRequest, type CallContext } from "../context/call-context";
import { failureError } from "../upstream/failures";
import { upstreamHandshake, type Handshake } from "../upstream/pool";
import { aggregatedInstructions, mergedCapabilities } from "./initialize";
import { UNAVAILABLE_META_KEY } from "./merge-lists";

/**
 * The route's `{capabilities, instructions?, serverInfo}` as a result text; on /mcp an
 * upstream that cannot be reached is named in `_meta` and left out.
 *
 * @example
 * const text = await describeRoute(ctx, request); // {"jsonrpc":"2.0","id":1,"result":{"capabilities":{...},"serverInfo":{...}}}
 */
export async function describeRoute(ctx: CallContext, request: WireMessage<JsonRpcRequest>): Promise<string> {
  const { id } = request.message;
  const results = await Promise.all(
    ctx.route.upstreams.map(
      async (upstream) => [upstream.name, await upstreamHandshake(upstream, poolRequest(ctx))] as const,
    ),
  );
  const succeeded: [string, Handshake][] = [];
  const unavailable: { upstream: string; error: string }[] = [];
  for (const [name, result] of results) {
    if (result.ok) succeeded.push([name, result.value]);
    else {
      ctx.record.upstream = name;
      const error = failureError(result, ctx.services.env);
      if (ctx.route.kind === "upstream") throw error.withId(id);
      unavailable.push({ upstream: name, error: error.message });
    }
  }
  let capabilities: JsonObject;
  let instructions: string | undefined;
  let serverInfo: unknown = GATEWAY_INFO;
  if (ctx.route.kind === "aggregated") {
    capabilities = mergedCapabilities(succeeded.map(([, h]) => h));
    instructions = aggregatedInstructions(succeeded);
  } else {
    ctx.record.upstream = succeeded[0]![0];
    const declared = succeeded[0]![1].initializeResult;
    capabilities = isObject(declared["capabilities"]) ? declared["capabilities"] : {};
    instructions = typeof declared["instructions"] === "string" ? declared["instructions"] : undefined;
    serverInfo = isObject(declared["serverInfo"]) ? declared["serverInfo"] : GATEWAY_INFO;
  }
  return resultText(id, {
    capabilities,
    ...(instructions ? { instructions } : {}),
    serverInfo,
    ...(unavailable.length > 0 ? { _meta: { [UNAVAILABLE_META_KEY]: unavailable } } : {}),
  });
}
