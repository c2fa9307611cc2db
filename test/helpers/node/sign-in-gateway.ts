/**
 * Client sign-in against the gateway started as README says (`npm start`, AUTH.signIn on),
 * its users logging in at oidc-provider on loopback (test/fixtures/operator-idp.ts): for the
 * e2e tests of client sign-in and `npm run bench:auth`. Also what a client's side of the
 * flow needs in Node: an SDK `OAuthClientProvider` whose browser is scripted
 * (ClientSignInBrowser: the provider's login, the gateway's consent), and a token for a user
 * got the way a client without an SDK gets one (RFC 7591 registration, PKCE, the code).
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { createHash, randomBytes } from "node:crypto";
import { freePort, startGateway } from "../../../scripts/lib/gateway-process.mjs";
import { GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET, startOperatorIdp } from "../../fixtures/operator-idp.ts";
import { ClientSignInBrowser } from "./client-sign-in-browser.ts";
import { operatorSignIn } from "../operator-sign-in.ts";

export type SignInGateway = { url: string; stop: () => Promise<void> };

export type SignInGatewayOptions = {
  adminToken: string;
  persistTo: string;
  /** Stored as the persona `signed-in`: users have the role `gateway-users` (`admin…` logins `gateway-admins`). */
  persona: Record<string, unknown>;
  vars?: Record<string, unknown>;
  cwd?: string;
};

/** Starts the provider and the gateway (example.test users may sign in, roles from `groups`), stores the persona. */
export async function startSignInGateway(options: SignInGatewayOptions): Promise<SignInGateway> {
  const port = await freePort();
  const idp = await startOperatorIdp([`http://127.0.0.1:${port}/oauth/sign-in/callback`]);
  const signIn = operatorSignIn(idp.issuer);
  const vars = {
    ...options.vars,
    ADMIN_TOKEN: options.adminToken,
    AUTH: { apiKeys: true, signIn },
    SIGN_IN_CLIENT_ID: GATEWAY_CLIENT_ID,
    SIGN_IN_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
  };
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({
      port,
      vars,
      persistTo: options.persistTo,
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
  } catch (error) {
    await idp.close();
    throw error;
  }
  const stop = async () => {
    await gateway.stop();
    await idp.close();
  };
  const put = await fetch(`${gateway.url}/admin/personas/signed-in`, {
    method: "PUT",
    headers: { authorization: `Bearer ${options.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(options.persona),
  });
  if (put.status !== 200) {
    await stop();
    throw new Error(`the persona was not stored: ${put.status} ${await put.text()}`);
  }
  return { url: gateway.url, stop };
}

/** What an SDK client keeps, and the person its browser is; `clientId` given for a metadata document client. */
export class ScriptedProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  /** Where the browser was sent back to the client (its redirect URI, with the code). */
  callback?: URL;

  private readonly user: string;
  private readonly redirect: string;
  private readonly name: string;

  constructor(user: string, redirect: string, name: string, clientId?: string) {
    this.user = user;
    this.redirect = redirect;
    this.name = name;
    if (clientId !== undefined) this.client = { client_id: clientId };
  }

  get code(): string | undefined {
    return this.callback?.searchParams.get("code") ?? undefined;
  }
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  /** The person's browser: the provider's login, the gateway's consent, back to the client with a code. */
  async redirectToAuthorization(url: URL) {
    const end = await new ClientSignInBrowser(this.user).walk(url.href, this.redirect);
    if (!end.redirect?.searchParams.get("code")) throw new Error(`no code: ${JSON.stringify(end.page)}`);
    this.callback = end.redirect;
  }
}

/** A token of `user` for `resource`: the client registers, the person signs in and allows, the code is exchanged. */
export async function signInToken(
  gatewayUrl: string,
  user: string,
  resource: string,
): Promise<{ access_token: string }> {
  const redirect = "http://127.0.0.1:33422/callback";
  const registered = await fetch(`${gatewayUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "bench client",
      redirect_uris: [redirect],
      token_endpoint_auth_method: "none",
    }),
  });
  if (registered.status !== 201) throw new Error(`registration: ${registered.status} ${await registered.text()}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL(`${gatewayUrl}/oauth/authorize`);
  const params = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirect,
    state: randomBytes(8).toString("hex"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource,
  };
  for (const [key, value] of Object.entries(params)) authorize.searchParams.set(key, value);
  const end = await new ClientSignInBrowser(user).walk(authorize.href, redirect);
  const code = end.redirect?.searchParams.get("code");
  if (!code) throw new Error(`no code: ${JSON.stringify(end.page)}`);
  const form = { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier };
  const token = await fetch(`${gatewayUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ ...form, redirect_uri: redirect, resource }),
  });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${await token.text()}`);
  return (await token.json()) as { access_token: string };
}
