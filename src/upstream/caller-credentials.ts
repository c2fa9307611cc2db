/**
 * A caller's credentials toward upstreams, built once per call from the Worker's bindings:
 * the identity assertion (upstream/identity-assertion.ts) and, for upstreams each user
 * signs in to, the caller's own token (upstream/oauth/access-token.ts). Used by the
 * pipeline's calls and by the Durable Object that holds bridged calls alike.
 */
import { fail } from "../core/errors";
import { sessionSecret } from "../config/secrets";
import { identityAssertion, type AssertedIdentity } from "./identity-assertion";
import { accessTokenFor, forgetTokens } from "./oauth/access-token";
import type { CallerCredentials } from "./upstream-session";

/** What the credentials need besides the caller: where tokens are kept, what configuration names, and where refresh failures are audited. */
export type CredentialServices = {
  /** The Worker's bindings, for the secrets configuration names (signing keys, OAuth client secrets). */
  readonly env: Readonly<Record<string, unknown>>;
  /** Where users' tokens are kept; undefined when none is bound. */
  readonly kv: KVNamespace | undefined;
  readonly auditQueue?: Queue;
  readonly waitUntil?: (promise: Promise<unknown>) => void;
};

/**
 * The credentials of `caller` toward upstreams.
 *
 * @example
 * const identity = callerCredentials({ env, kv }, { principal: "alice", roles: [] });
 */
export function callerCredentials(services: CredentialServices, caller: AssertedIdentity): CallerCredentials {
  const { env, kv } = services;
  return {
    assertion: (upstream) => identityAssertion(env, upstream, caller),
    userToken: async (upstream) => {
      if (!kv)
        return fail({
          reason: "sign-in-required",
          detail: "the gateway has no KV namespace (GATEWAY_KV) to keep users' tokens in",
        });
      return accessTokenFor(upstream, caller.principal, {
        kv,
        secret: sessionSecret(env),
        env,
        ...(services.auditQueue ? { auditQueue: services.auditQueue } : {}),
        ...(services.waitUntil ? { waitUntil: services.waitUntil } : {}),
      });
    },
    rejected: async (upstream) => {
      if (kv) await forgetTokens(upstream, caller.principal, { kv, secret: sessionSecret(env), env });
    },
  };
}
