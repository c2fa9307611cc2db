/**
 * The URL of each named server, `/mcp/servers/<name>`, served beside /mcp and
 * /mcp/<upstream> through the shell's `endpoints` plug. An upstream's name is one path
 * segment (letters, digits, '-', '_': config/upstreams.ts), so a path of two segments under
 * /mcp is never read as /mcp/<upstream>, even beside an upstream named `servers`.
 *
 * A name resolves, once the caller authenticated as on /mcp, to the aggregated route of the
 * upstreams its picks may reach, bound to the route name `servers/<name>` (a 2025 session
 * opened here is refused elsewhere). A server that is absent, broken, or not for the caller's
 * roles answers the same 404, so a caller learns no server it may not use.
 */
import { GatewayError } from "../../core/errors";
import type { FeatureEndpoint } from "../../shell/app";
import { SERVER_NAME } from "./document";
import { compileServer } from "./picks";
import { loadServer } from "./store";

/** The path of a named server, with hono's `:name`. */
export const SERVER_PATH = "/mcp/servers/:name";

/** A named server's route name: never an upstream's, which holds no '/'. */
export function serverRoute(name: string): string {
  return `servers/${name}`;
}

/** The endpoint the composition root plugs into the shell. */
export const NAMED_SERVER_ENDPOINT: FeatureEndpoint = {
  path: SERVER_PATH,
  async resolve(name, caller, services, all) {
    const config = services.config;
    const server = SERVER_NAME.test(name) ? await loadServer(services.kv, name, config.documentCacheTtlMs) : undefined;
    const authOff = config.auth.ok && config.auth.value.mode === "off";
    const allowed = server && (authOff || !server.roles || server.roles.some((role) => caller.roles.includes(role)));
    if (!server || !allowed) throw new GatewayError(404, -32000, `Not Found: no server named "${name}"`);
    return {
      route: serverRoute(name),
      server: name,
      upstreams: compileServer(server).upstreams(all),
      ...(server.catalog ? { catalog: server.catalog } : {}),
    };
  },
};
