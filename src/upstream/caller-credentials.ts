/**
 * A caller's credentials toward upstreams, built once per call from the Worker's bindings
 * (the caller's own token is read once for all the exchanges of the call):
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
import { accessTokenFor, forgetTokens, REFRESH_MARGIN_MS } from "./oauth/access-token";
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

/**
 * How long a caller's own credential, once read (unsealed from KV, or fetched), serves the
 * exchanges of one call (the era probe, the handshake, the call, a resumption) before it is
 * read again: the refresh margin, so a token read is still valid for that long (it had at
 * least that much left, or it was refreshed).
 */
export const CREDENTIAL_REUSE_MS = REFRESH_MARGIN_MS;

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
  /** The caller's own credential per upstream, read for this call (see CREDENTIAL_REUSE_MS). */
  const read = new Map<
    string,
    { readonly at: number; readonly token: Promise<Result<string, UserCredentialProblem>> }
  >();
  const userToken = async (upstream: UpstreamConfig): Promise<Result<string, UserCredentialProblem>> => {
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
  };
  return {
    assertion: (upstream) => identityAssertion(env, upstream, caller),
    userToken: (upstream) => {
      const now = Date.now();
      const known = read.get(upstream.name);
      if (known && now - known.at < CREDENTIAL_REUSE_MS) return known.token;
      const token = userToken(upstream);
      read.set(upstream.name, { at: now, token });
      // Only a credential is kept: a caller without one may sign in while the call waits.
      void token.then((found) => {
        if (!found.ok && read.get(upstream.name)?.token === token) read.delete(upstream.name);
      });
      return token;
    },
    rejected: async (upstream) => {
      read.delete(upstream.name);
      if (kv && upstream.auth?.type !== "oauth")
        await userCredentials?.rejected(upstream, caller, { ...services, kv, secret: sessionSecret(env) });
      else if (kv) await forgetTokens(upstream, caller.principal, { kv, secret: sessionSecret(env), env });
    },
  };
}
