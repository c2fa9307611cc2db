/**
 * Where a caller's own credential for a `userKey` or `tokenExchange` upstream comes from,
 * plugged into the skeleton's caller credentials (`onUserCredential` in src/gateway.ts): the
 * key the user pasted (sealed per principal and upstream, storage/upstream-tokens.ts), sent
 * only to the URL it was pasted for; or the caller's token exchanged (token-exchange.ts, in
 * the module loaded on demand). What is exchanged is decided here: a JWT of AUTH.jwt's
 * issuer as it came; for a caller of the gateway's own sign-in (whose token only the gateway
 * reads) the gateway's identity assertion for the upstream; an API key caller has nothing.
 */
import { fail, ok, type Result } from "../../core/errors";
import type { UpstreamConfig } from "../../config/upstreams";
import { deleteConnection, readUserKey } from "../../storage/upstream-tokens";
import type { CredentialCaller, UserCredentialSource } from "../../upstream/caller-credentials";
import { identityAssertion } from "../../upstream/identity-assertion";
import type { UserCredentialProblem } from "../../upstream/upstream-session";
import { loadUserCredentialsLibrary } from "./library-loader";

const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
const JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt";

/** The subject token and its RFC 8693 type, or why the caller has none to exchange. */
async function subjectOf(
  upstream: UpstreamConfig,
  caller: CredentialCaller,
  env: Readonly<Record<string, unknown>>,
): Promise<Result<{ token: string; type: string }, UserCredentialProblem>> {
  if (caller.method === "jwt" && caller.token !== undefined)
    return ok({ token: caller.token, type: ACCESS_TOKEN_TYPE });
  try {
    if (caller.method === "sign-in")
      return ok({ token: await identityAssertion(env, upstream.name, caller), type: JWT_TYPE });
  } catch (error) {
    return fail({ reason: "credential-unavailable", detail: (error as Error).message });
  }
  const how = caller.method === "api-key" ? "a gateway API key" : "no access token";
  const detail = `its token is exchanged for the caller's own access token, and this call came with ${how}: call with an access token of the identity provider (AUTH.jwt) or through the gateway's sign-in`;
  return fail({ reason: "credential-unavailable", detail });
}

/** The source of `userKey` and `tokenExchange` credentials. */
export const userCredentialSource: UserCredentialSource = {
  credential: async (upstream, caller, { kv, secret, env }) => {
    const auth = upstream.auth;
    if (auth?.type === "tokenExchange") {
      const subject = await subjectOf(upstream, caller, env);
      if (!subject.ok) return subject;
      return (await loadUserCredentialsLibrary()).exchangedToken(upstream, auth, caller.principal, subject.value, env);
    }
    const stored = await readUserKey(kv, secret, caller.principal, upstream.name);
    if (!stored) return fail({ reason: "sign-in-required", detail: "no key pasted yet" });
    // A key goes only to the URL it was pasted for: an upstream re-pointed elsewhere asks again.
    if (stored.resource !== upstream.url)
      return fail({ reason: "sign-in-required", detail: "the upstream's URL changed since you pasted your key" });
    return ok(stored.key);
  },
  rejected: async (upstream, caller, { kv, env }) => {
    const auth = upstream.auth;
    if (auth?.type !== "tokenExchange") return void (await deleteConnection(kv, caller.principal, upstream.name));
    const subject = await subjectOf(upstream, caller, env);
    if (subject.ok)
      await (await loadUserCredentialsLibrary()).forgetExchanged(upstream, auth, caller.principal, subject.value);
  },
};
