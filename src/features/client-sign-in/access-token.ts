/**
 * The shell's check of an access token the gateway issued (client sign-in): the library
 * loads its record from KV, checks it is for this route's resource (RFC 8707: a token for
 * `/mcp/a` does not open `/mcp/b`) and unexpired, and decrypts what the grant keeps: the
 * signed-in user, whose principal and roles then flow into personas as an API key's do
 * (the roles with those the live role mapping gives now: role-mapping.ts).
 * A token for `/mcp` also opens `/mcp/<upstream>` (as AUTH.jwt's aggregated audience does):
 * the persona decides which upstreams it reaches there. A token that passed is kept per
 * isolate for the document cache TTL, never past its expiry (token-cache.ts).
 */
import type { AuthConfig } from "../../config/auth-config";
import type { Caller } from "../../context/call-context";
import { resourceUrl } from "../../auth/protected-resource";
import { authorizationServer, isSignedInUser, libraryEnv } from "./authorization-server";
import { currentRoles } from "./role-mapping";
import { gatewayConfig } from "../../config/gateway-config";
import { signInTokens, tokenDigest } from "./token-cache";

/** The library's access tokens are `<user>:<grant>:<secret>`; API keys and JWTs have no colon. */
export function looksLikeSignInToken(token: string): boolean {
  return token.split(":").length === 3;
}

export type SignInTokenCheck = (token: string) => Promise<Caller | undefined>;

/**
 * The check of sign-in tokens on `route` ("" for /mcp), or undefined when sign-in is off.
 *
 * @example
 * const check = signInTokenCheck(env, auth, origin, ["github"], "github");
 * const caller = check && (await check(token));
 */
export function signInTokenCheck(
  env: Readonly<Record<string, unknown>>,
  auth: AuthConfig,
  origin: string,
  upstreams: readonly string[],
  route: string,
): SignInTokenCheck | undefined {
  if (auth.mode !== "on" || !auth.signIn) return undefined;
  const signIn = auth.signIn;
  // The live role mapping is read at each use of a token (role-mapping.ts).
  const kv = env["GATEWAY_KV"] as KVNamespace | undefined;
  const cacheTtlMs = gatewayConfig(env).documentCacheTtlMs;
  return async (token) => {
    const routes = route !== "" && upstreams.includes(route) ? [route, ""] : [""];
    const resources = routes.map((each) => resourceUrl(auth, origin, each));
    const digest = await tokenDigest(token);
    const cached = signInTokens.get(digest, Date.now());
    const known = cached && resources.includes(cached.resource) ? cached.user : await check(token, digest, resources);
    if (!known) return undefined;
    const { principal, email } = known;
    return { principal, email, roles: await currentRoles(known, kv, cacheTtlMs), method: "sign-in" };
  };

  /** The library's check (its KV read of the token's record, the grant decrypted); what passed is kept. */
  async function check(token: string, digest: string, resources: readonly string[]) {
    const begun = signInTokens.begin();
    const server = await authorizationServer(auth, signIn, origin, upstreams);
    for (const resource of resources) {
      const valid = await server.validateToken<unknown>(resource, token, libraryEnv(env));
      if (valid && isSignedInUser(valid.props)) {
        const [, grantId = ""] = token.split(":");
        const checked = {
          user: valid.props,
          userId: valid.userId,
          grantId,
          resource,
          expiresAtMs: valid.expiresAt * 1000,
        };
        signInTokens.store(digest, checked, cacheTtlMs, Date.now(), begun);
        return valid.props;
      }
    }
    return undefined;
  }
}
