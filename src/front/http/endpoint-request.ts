/**
 * What the shell hands a protocol front for one HTTP request on an MCP route: the
 * request, the route as resolved, the caller, the services and the pipeline. Every era's
 * front takes the same.
 */
import type { Caller, Handler, Services } from "../../context/call-context";
import type { UpstreamConfig } from "../../config/upstreams";
import type { CatalogMode, GrantLookup } from "../../context/grant";

/**
 * What a session remembers of the filters when it begins (features/filters/listed-shapes.ts):
 * per upstream of `route`, the shape of its listed tools, which a later list compares with.
 */
export type SessionShapes = (
  services: Services,
  route: string,
  upstreams: readonly string[],
) => Promise<Readonly<Record<string, string>>>;

/** One route of the endpoint as the shell resolved it. */
export type EndpointRequest = {
  readonly env: Readonly<Record<string, unknown>>;
  readonly kv: KVNamespace | undefined;
  /** "" for /mcp, the upstream of /mcp/<upstream>, or a feature endpoint's route name (a session is bound to it). */
  readonly route: string;
  /** The named server the route serves, when it is one (`ShellParts.endpoints`). */
  readonly server?: string;
  /** The principal the request authenticated as. */
  readonly principal: string;
  /** The upstreams the route serves. */
  readonly upstreams: readonly UpstreamConfig[];
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
  readonly request: Request;
  readonly services: Services;
  /** Who this HTTP request authenticated as (its principal is `principal`, which the session is bound to). */
  readonly caller: Caller;
  /** The pipeline every client message goes through. */
  readonly pipeline: Handler;
  /** The filters' shapes a 2025 session seals when it begins. */
  readonly sessionShapes: SessionShapes;
  /** How the caller's persona grant is found (`ShellParts.grants`). */
  readonly grants: GrantLookup;
  /** The catalog mode the URL asked for (`?catalog=`), checked by the shell. */
  readonly catalog?: CatalogMode;
  readonly waitUntil: (promise: Promise<unknown>) => void;
};

/**
 * `new URL(url).origin` of a request's URL as the runtime serialized it (a Request's `url`):
 * the "http(s)://host[:port]" before its path, not parsed again for every message. Any
 * other URL (another scheme, credentials in it) is parsed.
 *
 * @example
 * requestOrigin("https://gw.example/mcp/alpha?catalog=search") // "https://gw.example"
 */
export function requestOrigin(url: string): string {
  const hostAt = url.startsWith("https://") ? 8 : url.startsWith("http://") ? 7 : -1;
  const pathAt = hostAt === -1 ? -1 : url.indexOf("/", hostAt);
  if (pathAt === -1 || url.lastIndexOf("@", pathAt) !== -1) return new URL(url).origin;
  return url.slice(0, pathAt);
}
