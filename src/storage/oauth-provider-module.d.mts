/**
 * The types of oauth-provider-module.mjs, which scripts/build-yaml-module.mjs generates (it
 * is not committed): Cloudflare's workers-oauth-provider bundled as a module of its own, so
 * the Worker loads it only when AUTH.signIn is on (oauth-library.ts), with client sign-in's
 * view of its namespace for loopback client ids (features/client-sign-in/loopback-client.ts).
 */
export * from "@cloudflare/workers-oauth-provider";
export function withLoopbackClients(
  kv: KVNamespace,
  refuse: (clientId: string, cause: unknown) => Promise<Error>,
): KVNamespace;
