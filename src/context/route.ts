/**
 * The route of a message as a value: which endpoint it came to (/mcp, every upstream
 * behind one name space, or /mcp/<upstream>, one upstream as it is), the upstreams it
 * serves and the origin the client reached. Built once by the front that classified
 * the request; layers switch on `kind`. It carries the catalog mode the client asked for
 * (`?catalog=`, front/http/request-checks.ts; the modes: grant.ts), which the
 * catalog (features/catalog/) implements.
 */
import type { UpstreamConfig } from "../config/upstreams";
import type { CatalogMode } from "./grant";

/**
 * The endpoint a message came to: `aggregated` (/mcp, where names carry their upstream's
 * prefix) or one `upstream` (/mcp/<upstream>, transparent). Set once by the front that
 * classified the request (`routeFor`).
 */
export type Route = RouteEndpoint & {
  /** "" for /mcp, the upstream of /mcp/<upstream>, or a feature's endpoint name (a named server's `servers/<name>`). */
  readonly name: string;
  /** The named server an aggregated route serves (features/named-servers), absent on /mcp and /mcp/<upstream>. */
  readonly server?: string;
  /** The upstreams this route serves: all of them on /mcp (those the caller reaches, once authorization narrowed them), its one on /mcp/<upstream>. */
  readonly upstreams: readonly UpstreamConfig[];
  /** The gateway's own origin as the client reached it (for URLs handed to the client). */
  readonly origin: string;
  /** The catalog mode the request URL asked for (`?catalog=`); absent: the persona's, else full. */
  readonly catalog?: CatalogMode;
};

/** Which endpoint: every upstream behind one name space, or one upstream as it is. */
export type RouteEndpoint =
  | { readonly kind: "aggregated" }
  | { readonly kind: "upstream"; readonly upstream: UpstreamConfig };

/**
 * The route of a request to `name` ("" for /mcp) serving `upstreams` (the shell resolves
 * /mcp/<upstream> to exactly its one upstream); with `server`, the aggregated route of that named server.
 *
 * @example
 * routeFor("", all, "https://gw.example"); // { kind: "aggregated", name: "", upstreams: all, ... }
 */
export function routeFor(
  name: string,
  upstreams: readonly UpstreamConfig[],
  origin: string,
  catalog?: CatalogMode,
  server?: string,
): Route {
  const common = { name, upstreams, origin, ...(catalog ? { catalog } : {}) };
  if (server !== undefined) return { kind: "aggregated", ...common, server };
  if (name === "") return { kind: "aggregated", ...common };
  const upstream = upstreams[0];
  if (upstreams.length !== 1 || upstream?.name !== name)
    throw new Error(`unreachable: the route /mcp/${name} must serve exactly its own upstream`);
  return { kind: "upstream", upstream, ...common };
}
