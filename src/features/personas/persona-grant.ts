/**
 * The persona grant of a caller: the personas document (KV, read through the cached
 * document store) matched to the caller's roles. A call context carries it resolved at
 * most once (`CallContext.grant`), so authorization, rate limits and catalog modes read
 * the same grant; the shell uses the same lookup for the upstreams a caller reaches.
 */
import { PERSONAS_KEY } from "../../storage/document-keys";
import { loadDocument } from "../../storage/document-store";
import type { Grant } from "../../context/grant";
import { checkPersonas, grantFor, type Personas } from "./persona";

/** Why a caller has no persona, as the audit event and the log name it. */
export type NoPersonaCause =
  | "no persona defined"
  | "no persona for roles"
  | "personas document invalid"
  | "no KV binding";

/**
 * Why no persona applies to a caller with `roles` (when `loadGrant` found none): no persona
 * is defined at all, none selects one of the roles and none is the default, or the
 * personas document is invalid (which denies every caller).
 */
export function noGrantCause(personas: Personas | undefined, roles: readonly string[]): NoPersonaCause | undefined {
  if (personas === undefined) return "personas document invalid";
  if (Object.keys(personas).length === 0) return "no persona defined";
  return grantFor(personas, roles) === undefined ? "no persona for roles" : undefined;
}

/** Why a caller with `roles` gets no grant (read through the same cached document); undefined when it gets one. */
export async function whyNoGrant(
  kv: KVNamespace | undefined,
  roles: readonly string[],
  cacheTtlMs: number,
): Promise<NoPersonaCause | undefined> {
  if (!kv) return "no KV binding";
  const stored = await loadDocument(kv, PERSONAS_KEY, cacheTtlMs, checkPersonas);
  return noGrantCause(stored.state === "absent" ? {} : stored.state === "valid" ? stored.value : undefined, roles);
}

/**
 * The grant of a caller with `roles`: undefined when no persona applies (default deny),
 * the personas document is invalid, or there is no KV.
 *
 * @example
 * const grant = await loadGrant(kv, caller.roles, 30_000);
 */
export async function loadGrant(
  kv: KVNamespace | undefined,
  roles: readonly string[],
  cacheTtlMs: number,
): Promise<Grant | undefined> {
  if (!kv) return undefined;
  const stored = await loadDocument(kv, PERSONAS_KEY, cacheTtlMs, checkPersonas);
  return stored.state === "valid" ? grantFor(stored.value, roles) : undefined;
}

/**
 * The grant of a caller with `roles`, looked up on first use and then remembered (a
 * failed lookup is not: the next use tries again).
 *
 * @example
 * const grant = grantOnce(kv, caller.roles, 30_000);
 * const persona = (await grant())?.persona;
 */
export function grantOnce(
  kv: KVNamespace | undefined,
  roles: readonly string[],
  cacheTtlMs: number,
): () => Promise<Grant | undefined> {
  let pending: Promise<Grant | undefined> | undefined;
  return () =>
    (pending ??= loadGrant(kv, roles, cacheTtlMs).catch((error: unknown) => {
      pending = undefined;
      throw error;
    }));
}
