/**
 * Where named servers are kept: one KV document per server, `servers/<name>`, read through
 * the cached document store (this isolate's copy lives `FILTER_CACHE_TTL_MS`; a write through
 * the admin API drops it here at once), and listed by prefix for the admin API.
 */
import { loadDocument, type Checked } from "../../storage/document-store";
import type { NamedServer } from "./document";
import { MAX_LISTED_SERVERS } from "./server-name";

const KEY_PREFIX = "servers/";

/** The KV key of the server `name`. */
export function serverKey(name: string): string {
  return `${KEY_PREFIX}${name}`;
}

/**
 * The server `name` when stored and valid (`check`: the document's checker, from the lazily
 * loaded module); undefined when absent or broken (the store logs a broken one).
 */
export async function loadServer(
  kv: KVNamespace | undefined,
  name: string,
  ttlMs: number,
  check: (value: unknown) => Checked<NamedServer>,
): Promise<NamedServer | undefined> {
  if (!kv) return undefined;
  const stored = await loadDocument(kv, serverKey(name), ttlMs, check);
  return stored.state === "valid" ? stored.value : undefined;
}

/** The stored servers in key order, at most `MAX_LISTED_SERVERS`, each with the metadata written beside it. */
export async function listServers<M>(
  kv: KVNamespace,
): Promise<{ servers: { name: string; metadata: M | null }[]; truncated: boolean }> {
  const page = await kv.list<M>({ prefix: KEY_PREFIX, limit: MAX_LISTED_SERVERS });
  const servers = page.keys.map((key) => ({ name: key.name.slice(KEY_PREFIX.length), metadata: key.metadata ?? null }));
  return { servers, truncated: !page.list_complete };
}
