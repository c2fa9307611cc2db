/**
 * Which configured upstreams a caller's persona reaches, for what the gateway tells about
 * itself (`GET /`, the 404 of an unknown `/mcp/<upstream>`): an authenticated caller learns
 * the names it may use, never the others.
 */
import { PERSONAS_KEY } from "../storage/document-keys";
import { loadDocument } from "../storage/document-store";
import { checkPersonas, grantFor, permitsUpstream } from "./persona";

/**
 * The upstreams of `upstreams` that the grant of a caller with `roles` reaches; none when
 * no persona applies, the personas document is invalid, or there is no KV.
 *
 * @example
 * const names = (await reachableUpstreams(kv, 30_000, caller.roles, upstreams)).map((u) => u.name);
 */
export async function reachableUpstreams<U extends { readonly name: string }>(kv: KVNamespace | undefined, cacheTtlMs: number, roles: readonly string[], upstreams: readonly U[]): Promise<U[]> {
  if (!kv) return [];
  const stored = await loadDocument(kv, PERSONAS_KEY, cacheTtlMs, checkPersonas);
  const grant = stored.state === "valid" ? grantFor(stored.value, roles) : undefined;
  return upstreams.filter((upstream) => permitsUpstream(grant, upstream.name));
}
