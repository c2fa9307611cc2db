/**
 * Marks of ended conversations in KV, kept until the conversation would have expired:
 * a 2025 client's session ended by DELETE (`session-ended/<session id>`) and a signed-out
 * admin console session (`console-signed-out/<digest>`). Both are sealed tokens the
 * gateway cannot revoke otherwise. The only module that knows those keys.
 */

/** What ended. */
export type EndedKind = "session" | "console-session";

const PREFIXES: Readonly<Record<EndedKind, string>> = {
  session: "session-ended/",
  "console-session": "console-signed-out/",
};
/** KV keeps a key at least this long. */
const MIN_KV_TTL_S = 60;

/** True when `id` of `kind` was marked ended. */
export async function isEnded(kv: KVNamespace, kind: EndedKind, id: string): Promise<boolean> {
  return (await kv.get(PREFIXES[kind] + id)) !== null;
}

/** Marks `id` of `kind` ended for `ttlS` seconds (at least KV's minimum). */
export async function markEnded(kv: KVNamespace, kind: EndedKind, id: string, ttlS: number): Promise<void> {
  await kv.put(PREFIXES[kind] + id, "1", { expirationTtl: Math.max(MIN_KV_TTL_S, ttlS) });
}
