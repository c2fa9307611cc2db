/**
 * What named servers load only when a server is used or edited, or an alias is stored,
 * bundled into a module of its own, src/storage/named-servers-module.mjs
 * (scripts/build-yaml-module.mjs): the document's checker, the compiled picks, the serving
 * of a server's route and of /mcp's aliases, and the admin API's handlers. The main module
 * keeps the glue (endpoint.ts, serve.ts, admin-routes.ts, store.ts); nothing here imports
 * the document store, the relay or the configuration, whose state is the main module's.
 */
import type { UpstreamConfig } from "../../config/upstreams";
import type { NamedServer } from "./document";
import { compileServer } from "./picks";

export { checkNamedServer } from "./document";
export { serveMcpAliases, serveServer } from "./serve-server";
export { deleteServer, getServer, getServers, putServer } from "./admin-handlers";

/** A server serving nothing (one deleted since its request was routed). */
export const NO_PICKS: NamedServer = { tools: [], prompts: [], resources: [] };

/** The upstreams `server`'s picks may reach, of `all`. */
export function serverUpstreams(server: NamedServer, all: readonly UpstreamConfig[]): UpstreamConfig[] {
  return compileServer(server).upstreams(all);
}
export { saveServerFromConsole, serverEditor, serversPage } from "./console-page";
