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
import { loadNamedServers } from "./loader";
import { SERVER_NAME } from "./server-name";
import { loadServer } from "./store";

/** The path of a named server, with hono's `:name`. */
export const SERVER_PATH = "/mcp/servers/:name";

/** The endpoint the composition root plugs into the shell. */
export const NAMED_SERVER_ENDPOINT: FeatureEndpoint = {
  path: SERVER_PATH,
  async resolve(name, caller, services, all) {
    const config = services.config;
    const library = SERVER_NAME.test(name) ? await loadNamedServers() : undefined;
    const ttl = config.documentCacheTtlMs;
    const server = library && (await loadServer(services.kv, name, ttl, library.checkNamedServer));
    const authOff = config.auth.ok && config.auth.value.mode === "off";
    const allowed = server && (authOff || !server.roles || server.roles.some((role) => caller.roles.includes(role)));
    if (!library || !server || !allowed) throw new GatewayError(404, -32000, `Not Found: no server named "${name}"`);
    return {
      // A route name holding a '/' is never an upstream's: a 2025 session opened here is refused elsewhere.
      route: `servers/${name}`,
      server: name,
      upstreams: library.serverUpstreams(server, all),
      ...(server.catalog ? { catalog: server.catalog } : {}),
    };
  },
};
