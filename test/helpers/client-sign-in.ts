/**
 * Client sign-in in the workerd tests (AUTH.signIn): vars that turn it on against the
 * operator's identity provider (test/fixtures/operator-idp.ts), an MCP client's side of
 * OAuth (dynamic registration, PKCE, the token request) and a scripted browser that follows
 * redirects, logs in at the provider's form and answers the gateway's consent page.
 */
import { inject } from "vitest";
import { ClientSignInBrowser, type Decision, type WalkEnd } from "./node/client-sign-in-browser";
import { gatewayFetch, type Vars } from "./gateway";
import { ADMIN_TOKEN } from "./auth";
import { operatorSignIn } from "./operator-sign-in";

/** The gateway as its clients reach it (https: the library refuses an http issuer off loopback). */
export const GATEWAY = "https://gateway.test";
/** A native client's loopback redirect URI (never opened: the browser stops there). */
export const CLIENT_REDIRECT = "http://127.0.0.1:33418/callback";
const GATEWAY_HOST = "gateway.test";

/** Vars with API keys and sign-in on; `signIn` fields override the defaults. */
export function signInVars(signIn: Record<string, unknown> = {}, more: Vars = {}): Vars {
  const idp = inject("operatorIdp");
  const auth = {
    apiKeys: true,
    signIn: { ...operatorSignIn(idp.issuer), ...signIn },
  };
  return {
    AUTH: JSON.stringify(auth),
    SIGN_IN_CLIENT_ID: idp.clientId,
    SIGN_IN_CLIENT_SECRET: idp.clientSecret,
    ADMIN_TOKEN,
    FILTER_CACHE_TTL_MS: "0",
    ...more,
  };
}

/** Registers a public client (RFC 7591) as an MCP client without a metadata document does; returns its id. */
export async function registerClient(
  vars: Vars,
  redirectUris = [CLIENT_REDIRECT],
  name = "Test client",
): Promise<string> {
  const body = {
    client_name: name,
    redirect_uris: redirectUris,
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  };
  const response = await gatewayFetch(
    `${GATEWAY}/oauth/register`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
    vars,
  );
  if (response.status !== 201) throw new Error(`registration: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { client_id: string }).client_id;
}

export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = `${crypto.randomUUID()}${crypto.randomUUID()}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const challenge = btoa(String.fromCharCode(...digest))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
  return { verifier, challenge };
}

export type AuthorizeParams = {
  clientId: string;
  redirectUri?: string;
  challenge?: string;
  method?: string;
  resource?: string;
  state?: string;
};

/** The authorization request URL; `challenge: undefined` leaves PKCE out. */
export function authorizeUrl({
  clientId,
  redirectUri = CLIENT_REDIRECT,
  challenge,
  method = "S256",
  resource = `${GATEWAY}/mcp`,
  state = "client-state-1",
}: AuthorizeParams): string {
  const url = new URL(`${GATEWAY}/oauth/authorize`);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("state", state);
  url.searchParams.set("resource", resource);
  if (challenge !== undefined) {
    url.searchParams.set("code_challenge", challenge);
    url.searchParams.set("code_challenge_method", method);
  }
  return url.href;
}

/** A person in a browser reaching the gateway in workerd (see ClientSignInBrowser). */
export class SignInUser extends ClientSignInBrowser {
  constructor(vars: Vars, user: string, decision: Decision = "allow") {
    super(user, decision, (href, init) =>
      new URL(href).host === GATEWAY_HOST
        ? gatewayFetch(href, { ...init, redirect: "manual" }, vars, undefined, true)
        : fetch(href, { ...init, redirect: "manual" }),
    );
  }

  override walk(url: string, stopAt = CLIENT_REDIRECT): Promise<WalkEnd> {
    return super.walk(url, stopAt);
  }
}

/** The token request of the authorization code grant (a public client: no secret). */
export function tokenRequest(vars: Vars, fields: Record<string, string>): Promise<Response> {
  return tokenEndpoint(vars, { grant_type: "authorization_code", redirect_uri: CLIENT_REDIRECT, ...fields });
}

/** The whole flow for `user`: registration, authorization with PKCE, consent, the code exchanged; the token response. */
export async function signedInToken(
  vars: Vars,
  user: string,
  resource = `${GATEWAY}/mcp`,
): Promise<{ access_token: string; refresh_token?: string; clientId: string }> {
  const clientId = await registerClient(vars);
  const { verifier, challenge } = await pkcePair();
  const end = await new SignInUser(vars, user).walk(authorizeUrl({ clientId, challenge, resource }));
  const code = end.redirect?.searchParams.get("code");
  if (!code) throw new Error(`no code: ${JSON.stringify(end.page ?? end.redirect?.href)}`);
  const response = await tokenRequest(vars, { client_id: clientId, code, code_verifier: verifier, resource });
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return { ...((await response.json()) as { access_token: string; refresh_token?: string }), clientId };
}

/** A request to the token endpoint with `fields` (a refresh, a revocation: RFC 7009 shares the endpoint). */
export function tokenEndpoint(vars: Vars, fields: Record<string, string>): Promise<Response> {
  const body = new URLSearchParams(fields).toString();
  return gatewayFetch(
    `${GATEWAY}/oauth/token`,
    { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body },
    vars,
  );
}
