/**
 * Logging a user in at the operator's OpenID Connect provider, as the upstream sign-in
 * does for upstreams (upstream/oauth/), through oauth4webapi: discovery from the issuer
 * URL, PKCE (S256), a nonce, `iss` of the answer checked (RFC 9207, when the provider
 * says it sends it), the code exchanged and the ID token's claims validated (issuer,
 * audience, expiry, nonce). Then who it is: an email of an allowed domain or list (and
 * not one the provider says is unverified), and the user's roles from the configured claim.
 *
 * The `state` sent to the provider is the library's (`beginUpstream`): the approved
 * authorization request is kept server-side, encrypted, used once, bound to this browser
 * by a cookie; the PKCE verifier and nonce travel with it, never to the provider.
 */
import {
  authorizationCodeGrantRequest,
  calculatePKCECodeChallenge,
  ClientSecretBasic,
  ClientSecretPost,
  generateRandomCodeVerifier,
  generateRandomNonce,
  getValidatedIdTokenClaims,
  None,
  processAuthorizationCodeResponse,
  validateAuthResponse,
  type AuthorizationServer,
  type Client,
  type ClientAuth,
} from "oauth4webapi";
import { fail, ok, type Result } from "../../core/errors";
import { claimAt, rolesFrom } from "../../auth/jwt";
import { authorizationServerAt } from "../../upstream/oauth/discovery";
import { httpOptions } from "../../upstream/oauth/http-options";
import type { SignInConfig } from "./config";
import type { SignedInUser } from "./authorization-server";
import type { LoginProblem } from "./login-problem";
import { GITHUB_SCOPES, githubIdentity, githubServer, type GithubIdentity } from "./github";

/** The most values of the roles claim a grant keeps (Entra ID sends up to 200 groups in a token). */
const MAX_KEPT_GROUPS = 256;

/** What the library keeps for the callback beside the approved request. */
export type LoginData = { readonly verifier: string; readonly nonce: string };

export type { LoginProblem };

type Provider = { as: AuthorizationServer; client: Client; auth: ClientAuth };

async function provider(
  signIn: SignInConfig,
  env: Readonly<Record<string, unknown>>,
): Promise<Result<Provider, LoginProblem>> {
  const clientId = env[signIn.clientIdSecret];
  if (typeof clientId !== "string" || clientId === "")
    return fail({
      reason: "not-set-up",
      detail: `the Worker secret ${signIn.clientIdSecret} (AUTH.signIn.clientId) is not set`,
    });
  let secret: unknown;
  if (signIn.clientSecretSecret !== undefined) {
    secret = env[signIn.clientSecretSecret];
    if (typeof secret !== "string" || secret === "")
      return fail({
        reason: "not-set-up",
        detail: `the Worker secret ${signIn.clientSecretSecret} (AUTH.signIn.clientSecret) is not set`,
      });
  }
  if (signIn.provider === "github") {
    return ok({
      as: githubServer(signIn),
      client: { client_id: clientId },
      auth: ClientSecretPost(typeof secret === "string" ? secret : ""),
    });
  }
  try {
    const as = await authorizationServerAt(new URL(signIn.issuer));
    return ok({
      as,
      client: { client_id: clientId },
      auth: typeof secret === "string" ? ClientSecretBasic(secret) : None(),
    });
  } catch (error) {
    return fail({
      reason: "provider-unavailable",
      detail: `the identity provider ${signIn.issuer} has no readable metadata: ${(error as Error).message}`,
    });
  }
}

/** Where to send the browser to log in (with `state` from the library), and what the callback needs. */
export async function loginRedirect(
  signIn: SignInConfig,
  env: Readonly<Record<string, unknown>>,
  redirectUri: string,
): Promise<Result<{ url: (state: string) => Promise<string>; data: LoginData }, LoginProblem>> {
  const found = await provider(signIn, env);
  if (!found.ok) return found;
  const { as, client } = found.value;
  if (as.authorization_endpoint === undefined)
    return fail({
      reason: "provider-unavailable",
      detail: `the identity provider ${as.issuer} names no authorization endpoint`,
    });
  const data: LoginData = { verifier: generateRandomCodeVerifier(), nonce: generateRandomNonce() };
  const url = async (state: string) => {
    const to = new URL(as.authorization_endpoint!);
    to.searchParams.set("response_type", "code");
    to.searchParams.set("client_id", client.client_id);
    to.searchParams.set("redirect_uri", redirectUri);
    to.searchParams.set("scope", (signIn.provider === "github" ? GITHUB_SCOPES : signIn.scopes).join(" "));
    to.searchParams.set("code_challenge", await calculatePKCECodeChallenge(data.verifier));
    to.searchParams.set("code_challenge_method", "S256");
    if (signIn.provider !== "github") to.searchParams.set("nonce", data.nonce);
    to.searchParams.set("state", state);
    return to.href;
  };
  return ok({ url, data });
}

/** True when `email` may sign in: its domain or itself is allowed. */
export function emailAllowed(signIn: SignInConfig, email: string): boolean {
  const lower = email.toLowerCase();
  const at = lower.lastIndexOf("@");
  return signIn.allowedEmails.includes(lower) || (at > 0 && signIn.allowedDomains.includes(lower.slice(at + 1)));
}

/** The user who logged in, from the provider's answer at the callback (`url`). */
export async function finishLogin(
  signIn: SignInConfig,
  env: Readonly<Record<string, unknown>>,
  url: URL,
  redirectUri: string,
  data: LoginData,
): Promise<Result<SignedInUser, LoginProblem>> {
  const found = await provider(signIn, env);
  if (!found.ok) return found;
  const { as, client, auth } = found.value;
  let who: GithubIdentity;
  try {
    // The state was checked (and used up) by the library before this runs.
    const params = validateAuthResponse(as, client, url.searchParams, url.searchParams.get("state") ?? undefined);
    const tokenUrl = new URL(as.token_endpoint ?? signIn.issuer);
    const response = await authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      redirectUri,
      data.verifier,
      httpOptions(tokenUrl),
    );
    if (signIn.provider === "github") {
      const result = await processAuthorizationCodeResponse(as, client, response);
      const found = await githubIdentity(signIn, result.access_token);
      if (!found.ok) return found;
      who = found.value;
    } else {
      const result = await processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: data.nonce,
        requireIdToken: true,
      });
      const claims = getValidatedIdTokenClaims(result)!;
      const groups = signIn.rolesClaim === undefined ? [] : rolesFrom(claimAt(claims, signIn.rolesClaim));
      who = { sub: claims.sub, email: claims["email"], emailVerified: claims["email_verified"], groups };
    }
  } catch (error) {
    // oauth4webapi's messages name the failed check, never a code or a token.
    return fail({
      reason: "refused",
      detail: `the identity provider's answer was refused: ${(error as Error).message}`,
    });
  }
  const email = who.email;
  if (typeof email !== "string" || email === "")
    return fail({
      reason: "not-allowed",
      detail: "the identity provider did not say your email address (is the email scope allowed for this app?)",
    });
  if (who.emailVerified === false)
    return fail({ reason: "not-allowed", detail: "the identity provider says your email address is not verified" });
  if (!emailAllowed(signIn, email))
    return fail({
      reason: "not-allowed",
      detail: `${email} may not sign in to this gateway (its domain or address is not on the gateway's list)`,
    });
  const groups = who.groups.slice(0, MAX_KEPT_GROUPS);
  // The groups are roles with rolesClaim (for GitHub, "orgs"); the live role mapping reads them either way.
  const roles = [...new Set([...signIn.roles, ...(signIn.rolesClaim === undefined ? [] : groups)])];
  return ok({ principal: who.sub, email: email.toLowerCase(), roles, groups });
}
