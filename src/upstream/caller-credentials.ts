/**
 * A caller's credentials toward upstreams, built once per call from the Worker's bindings:
 * the identity assertion (upstream/identity-assertion.ts) and, for upstreams each user
 * signs in to, the caller's own token (upstream/oauth/access-token.ts); for the other `auth`
 * types (a pasted key, token exchange) the source the composition root plugs in with
 * `onUserCredential` (features/user-credentials/). Used by the
 * pipeline's calls and by the Durable Object that holds bridged calls alike.
 */
import { fail, type Result } from "../core/errors";
import type { UpstreamConfig } from "../config/upstreams";
import { sessionSecret } from "../config/secrets";
import { identityAssertion, type AssertedIdentity } from "./identity-assertion";
import { accessTokenFor, forgetTokens } from "./oauth/access-token";
import type { CallerCredentials, UserCredentialProblem } from "./upstream-session";

/**
 * The caller as a credential source sees it: who, how the request authenticated ("api-key",
 * "jwt", "sign-in", "none") and, for this request only, its own bearer token (a JWT or a
 * sign-in token: what token exchange exchanges). Never stored, logged or sent upstream.
 */
export type CredentialCaller = AssertedIdentity & { readonly method?: string; readonly token?: string };

/** Where users' own credentials come from for the `auth` types other than `oauth`. */
export type UserCredentialSource = {
  readonly credential: (
    upstream: UpstreamConfig,
    caller: CredentialCaller,
    services: CredentialServices & { readonly kv: KVNamespace; readonly secret: string },
  ) => Promise<Result<string, UserCredentialProblem>>;
  /** The upstream refused what `credential` gave (HTTP 401): forget it. */
  readonly rejected: (
    upstream: UpstreamConfig,
    caller: CredentialCaller,
    services: CredentialServices & { readonly kv: KVNamespace; readonly secret: string },
  ) => Promise<void>;
};

/** The source the composition root plugged in (src/gateway.ts); none until then. */
let userCredentials: UserCredentialSource | undefined;

/**
 * Plugs in where `userKey` and `tokenExchange` credentials come from.
 *
 * @example
 * onUserCredential({ credential: async () => ok("key"), rejected: async () => {} });
 */
export function onUserCredential(source: UserCredentialSource): void {
  userCredentials = source;
}

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
export function callerCredentials(services: CredentialServices, caller: CredentialCaller): CallerCredentials {
  const { env, kv } = services;
  return {
    assertion: (upstream) => identityAssertion(env, upstream, caller),
    userToken: async (upstream) => {
      if (!kv)
        return fail({
          reason: "sign-in-required",
          detail: "the gateway has no KV namespace (GATEWAY_KV) to keep users' tokens in",
        });
      if (upstream.auth?.type !== "oauth") {
        if (!userCredentials)
          return fail({
            reason: "credential-unavailable",
            detail: "no source of users' own credentials is plugged in",
          });
        return userCredentials.credential(upstream, caller, { ...services, kv, secret: sessionSecret(env) });
      }
      return accessTokenFor(upstream, caller.principal, {
        kv,
        secret: sessionSecret(env),
        env,
        ...(services.auditQueue ? { auditQueue: services.auditQueue } : {}),
        ...(services.waitUntil ? { waitUntil: services.waitUntil } : {}),
      });
    },
    rejected: async (upstream) => {
      if (kv && upstream.auth?.type !== "oauth")
        await userCredentials?.rejected(upstream, caller, { ...services, kv, secret: sessionSecret(env) });
      else if (kv) await forgetTokens(upstream, caller.principal, { kv, secret: sessionSecret(env), env });
    },
  };
}
