/**
 * Which configured upstreams a caller's persona reaches, for what the gateway tells about
 * itself (`GET /`, the 404 of an unknown `/mcp/<upstream>`): an authenticated caller learns
 * the names it may use, never the others.
 */
import { permitsUpstream } from "./persona";
import { loadGrant } from "./persona-grant";

/**
 * The upstreams of `upstreams` that the grant of a caller with `roles` reaches; none when
 * no persona applies, the personas document is invalid, or there is no KV.
 *
 * @example
 * const names = (await reachableUpstreams(kv, 30_000, caller.roles, upstreams)).map((u) => u.name);
 */
export async function reachableUpstreams<U extends { readonly name: string }>(
  kv: KVNamespace | undefined,
  cacheTtlMs: number,
  roles: readonly string[],
  upstreams: readonly U[],
): Promise<U[]> {
  if (!kv) return [];
  const grant = await loadGrant(kv, roles, cacheTtlMs);
  return upstreams.filter((upstream) => permitsUpstream(grant, upstream.name));
}
