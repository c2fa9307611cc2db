/**
 * Where a caller's own credential for a `userKey` or `tokenExchange` upstream comes from,
 * plugged into the skeleton's caller credentials (`onUserCredential` in src/gateway.ts): the
 * key the user pasted (sealed per principal and upstream, storage/upstream-tokens.ts), sent
 * only to the URL it was pasted for; or the caller's token exchanged (token-exchange.ts).
 */
import { fail, ok } from "../../core/errors";
import { deleteConnection, readUserKey } from "../../storage/upstream-tokens";
import type { UserCredentialSource } from "../../upstream/caller-credentials";
import { exchangedToken, forgetExchanged } from "./token-exchange";

/** The source of `userKey` and `tokenExchange` credentials. */
export const userCredentialSource: UserCredentialSource = {
  credential: async (upstream, caller, { kv, secret, env }) => {
    const auth = upstream.auth;
    if (auth?.type === "tokenExchange") return exchangedToken(upstream, auth, caller, env);
    const stored = await readUserKey(kv, secret, caller.principal, upstream.name);
    if (!stored) return fail({ reason: "sign-in-required", detail: "no key pasted yet" });
    // A key goes only to the URL it was pasted for: an upstream re-pointed elsewhere asks again.
    if (stored.resource !== upstream.url)
      return fail({ reason: "sign-in-required", detail: "the upstream's URL changed since you pasted your key" });
    return ok(stored.key);
  },
  rejected: async (upstream, caller, { kv, env }) => {
    const auth = upstream.auth;
    if (auth?.type === "tokenExchange") await forgetExchanged(upstream, auth, caller, env);
    else await deleteConnection(kv, caller.principal, upstream.name);
  },
};
