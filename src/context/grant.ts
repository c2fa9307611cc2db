/**
 * What the call context carries of a caller's persona grant, and the catalog modes a route
 * and a persona choose between: the skeleton's side of personas. The personas document,
 * its checks and how a grant is found live in features/personas/.
 */
/**
 * Catalog modes: how a caller sees the tools it may use. `full` lists every tool as its
 * upstream defines it (the default); `compact` lists them with short descriptions and
 * schemas without property descriptions; `search` lists only the gateway's own tools,
 * which find and call the others (features/catalog/). The operator chooses per persona
 * (features/personas/persona.ts), the client per request with `?catalog=` on the endpoint URL (front/http/request-checks.ts).
 */
export const CATALOG_MODES = ["full", "compact", "search", "code"] as const;
export type CatalogMode = (typeof CATALOG_MODES)[number];

/** True for the name of a catalog mode. */
export function isCatalogMode(value: unknown): value is CatalogMode {
  return typeof value === "string" && (CATALOG_MODES as readonly string[]).includes(value);
}

/** What a caller may do: the personas that apply and their patterns together. */
export type Grant = {
  /** The personas' names, joined with "+" (for the call record). */
  readonly persona: string;
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly rateLimit?: string;
  /** The catalog mode of the first persona (by name) that chooses one. */
  readonly catalog?: CatalogMode;
};

/**
 * How the skeleton finds a caller's grant: the personas feature's lookup, plugged in by the
 * composition root (`ShellParts.grants`, src/gateway.ts). No KV means no grant.
 */
export type GrantLookup = {
  /** The grant of a caller with `roles`, looked up on its first use and then remembered (a failure is not). */
  readonly once: (
    kv: KVNamespace | undefined,
    roles: readonly string[],
    cacheTtlMs: number,
  ) => () => Promise<Grant | undefined>;
  /** The upstreams of `upstreams` that the grant of a caller with `roles` reaches. */
  readonly reachable: <U extends { readonly name: string }>(
    kv: KVNamespace | undefined,
    cacheTtlMs: number,
    roles: readonly string[],
    upstreams: readonly U[],
  ) => Promise<U[]>;
};
