/**
 * `server/discover` as 2026-07-28 answers it (server/discover.mdx): what the relay says
 * of the route (relay/discover.ts, run through the pipeline) with the revisions the
 * gateway serves, the capabilities a modern client may rely on, caching hints and the
 * server info in `_meta`.
 */
import { isObject, type JsonObject } from "../../core/jsonrpc";
import { UNAVAILABLE_META_KEY } from "../../relay/merge-lists";
import type { Identity } from "../../context/call-context";
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
 * The 2026-07-28 `server/discover` answer built from the route's description; an error
 * answer passes unchanged.
 *
 * @example
 * const text = discoverAnswer(await pipeline(ctx, { kind: "request", wire }), ctx.identity);
 */
export function discoverAnswer(text: string, identity: Pick<Identity, "authMethod">): string {
  const response: unknown = JSON.parse(text);
  if (!isObject(response) || !isObject(response["result"])) return text;
  const route = response["result"];
  const meta = isObject(route["_meta"]) ? route["_meta"] : {};
  const result: JsonObject = {
    resultType: "complete",
    supportedVersions: [...SERVED_PROTOCOL_VERSIONS],
    capabilities: modernCapabilities(isObject(route["capabilities"]) ? route["capabilities"] : {}),
    ...(typeof route["instructions"] === "string" ? { instructions: route["instructions"] } : {}),
    ...cachingHints(identity),
    _meta: {
      [SERVER_INFO_META_KEY]: route["serverInfo"],
      ...(meta[UNAVAILABLE_META_KEY] !== undefined ? { [UNAVAILABLE_META_KEY]: meta[UNAVAILABLE_META_KEY] } : {}),
    },
  };
  return JSON.stringify({ jsonrpc: "2.0", id: response["id"], result });
}
