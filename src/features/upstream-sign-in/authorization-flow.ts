/**
 * The browser's part of signing in to an upstream: `start` (a sign-in link was opened)
 * redirects to the authorization server with PKCE (S256), `resource` (RFC 8707) and a
 * `state` sealed by the gateway; `callback` checks that state (sealed, unexpired, taken
 * once, made for this browser), that the answer came to the flow's own redirect URI and,
 * for the shared one, from a server that sends `iss` (redirect-uri.ts: OAuth mix-up), and
 * the `iss` of the response (RFC 9207, oauth4webapi); it exchanges the code and stores the
 * user's tokens with the client they were issued to. A cookie set at start binds the flow
 * to the browser that began it: a callback carrying another flow's state (another
 * principal's, say) is refused.
 */
import {
  authorizationCodeGrantRequest,
  calculatePKCECodeChallenge,
  generateRandomCodeVerifier,
  processAuthorizationCodeResponse,
  validateAuthResponse,
} from "oauth4webapi";
import { fail, ok, type Result } from "../../core/errors";
import { isObject } from "../../core/jsonrpc";
import { randomHexId } from "../../core/ids";
import { openState, sealState } from "../../core/sealed-state";
import type { UpstreamConfig } from "../../config/upstreams";
import { openFlow, readTokens, takeFlow, writeTokens } from "../../storage/upstream-tokens";
import { authorizationServerAt, discoverSignInServer } from "../../upstream/oauth/discovery";
import { gatewayClient, type OAuthServices } from "../../upstream/oauth/registration";
import { advertisesIss, arrivedAt, sharedRedirectUri } from "../../upstream/oauth/redirect-uri";
import { httpOptions } from "../../upstream/oauth/http-options";
import type { SignInRequest } from "./sign-in-link";

/** How long the user may take at the authorization server. */
export const SIGN_IN_FLOW_TTL_MS = 10 * 60_000;
const STATE_PURPOSE = "upstream-sign-in-state";
/** The cookie binding a flow to its browser. */
export const FLOW_COOKIE = "mcp_gw_upstream_signin";

/** What the sealed `state` carries across the authorization server. */
type FlowState = {
  readonly principal: string;
  readonly upstream: string;
  readonly verifier: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly origin: string;
  /** Where the server was told to send the user back: the callback takes this flow there only. */
  readonly redirectUri?: string;
  /** The resource the authorization request named (RFC 8707), named again in the token request. */
  readonly resource?: string;
  readonly nonce: string;
  /** The sign-in link's nonce: the elicitation a waiting call is told of. */
  readonly link: string;
};

export type FlowProblem = {
  reason:
    | "discovery-failed"
    | "registration-failed"
    | "state-invalid"
    | "state-replayed"
    | "wrong-redirect-uri"
    | "authorization-failed"
    | "token-exchange-failed";
  detail: string;
};

async function browserBinding(cookie: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`browser:${cookie}`)));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * On a step-up (403 `insufficient_scope`), the scope the caller already holds, to ask for
 * again with the wider one (SEP-2350): a new grant replaces the old, and must not narrow it.
 */
async function grantedScope(
  upstream: UpstreamConfig,
  request: SignInRequest,
  services: OAuthServices,
): Promise<string[]> {
  if (request.challenge.error !== "insufficient_scope") return [];
  const tokens = await readTokens(services.kv, services.secret, request.principal, upstream.name);
  return tokens?.scope?.split(" ") ?? [];
}

/**
 * Where to send the browser for `request` (a link just taken), and the cookie to set.
 *
 * @example
 * const begun = await beginSignIn(upstream, request, origin, services);
 * if (begun.ok) return new Response(null, { status: 302, headers: { location: begun.value.location, "set-cookie": begun.value.cookie } });
 */
export async function beginSignIn(
  upstream: UpstreamConfig,
  request: SignInRequest,
  origin: string,
  services: OAuthServices,
): Promise<Result<{ location: string; cookie: string }, FlowProblem>> {
  const granted = await grantedScope(upstream, request, services);
  const server = await discoverSignInServer(upstream, request.challenge, granted);
  if (!server.ok) return server;
  const { as, resource, scopes } = server.value;
  const client = await gatewayClient(upstream, as, origin, services);
  if (!client.ok) return client;
  if (as.authorization_endpoint === undefined)
    return fail({
      reason: "discovery-failed",
      detail: `the authorization server ${as.issuer} names no authorization endpoint`,
    });
  const verifier = generateRandomCodeVerifier();
  const cookie = randomHexId();
  const nonce = randomHexId();
  const flow: FlowState = {
    principal: request.principal,
    upstream: upstream.name,
    verifier,
    issuer: as.issuer,
    clientId: client.value.client.client_id,
    origin,
    redirectUri: client.value.redirectUri,
    resource,
    nonce,
    link: request.nonce,
  };
  const state = await sealState(
    services.secret,
    STATE_PURPOSE,
    await browserBinding(cookie),
    SIGN_IN_FLOW_TTL_MS,
    flow,
  );
  await openFlow(services.kv, `state/${nonce}`, SIGN_IN_FLOW_TTL_MS);
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", client.value.client.client_id);
  url.searchParams.set("redirect_uri", client.value.redirectUri);
  url.searchParams.set("code_challenge", await calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", resource);
  if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "));
  const secure = origin.startsWith("https:") ? "; Secure" : "";
  return ok({
    location: url.href,
    cookie: `${FLOW_COOKIE}=${cookie}; Path=/oauth/upstream/; HttpOnly; SameSite=Lax; Max-Age=${SIGN_IN_FLOW_TTL_MS / 1000}${secure}`,
  });
}

function cookieValue(header: string | null): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === FLOW_COOKIE && value) return value;
  }
  return undefined;
}

function isFlowState(value: unknown): value is FlowState {
  const fields = ["principal", "upstream", "verifier", "issuer", "clientId", "origin", "nonce", "link"];
  if (!isObject(value) || !fields.every((k) => typeof value[k] === "string")) return false;
  return ["redirectUri", "resource"].every((k) => value[k] === undefined || typeof value[k] === "string");
}

/**
 * Completes a sign-in at the callback: checks, exchanges the code, stores the tokens.
 * `upstreams` finds the upstream the state names (it may have left the configuration).
 */
export async function finishSignIn(
  url: URL,
  cookieHeader: string | null,
  upstreams: (name: string) => UpstreamConfig | undefined,
  services: OAuthServices,
): Promise<Result<{ principal: string; upstream: string; link: string }, FlowProblem>> {
  const stateParam = url.searchParams.get("state");
  const cookie = cookieValue(cookieHeader);
  if (stateParam === null || cookie === undefined)
    return fail({
      reason: "state-invalid",
      detail:
        "this sign-in was not started in this browser (no state or no sign-in cookie); open the sign-in link again",
    });
  const opened = await openState(services.secret, STATE_PURPOSE, await browserBinding(cookie), stateParam);
  if (!opened.ok || !isFlowState(opened.value)) {
    return fail({
      reason: "state-invalid",
      detail:
        opened.ok || opened.reason !== "expired"
          ? "this sign-in's state was not issued to this browser, or was altered; open the sign-in link again"
          : "this sign-in took too long; open the sign-in link again",
    });
  }
  const flow = opened.value;
  // A flow begun before redirect URIs were per server was sent back to the shared one.
  const redirectUri = flow.redirectUri ?? sharedRedirectUri(flow.origin);
  if (arrivedAt(url) !== redirectUri) {
    const detail =
      "this answer came back to another sign-in's address (an authorization server other than" +
      " this sign-in's may have sent it); open the sign-in link again";
    return fail({ reason: "wrong-redirect-uri", detail });
  }
  if (!(await takeFlow(services.kv, `state/${flow.nonce}`)))
    return fail({
      reason: "state-replayed",
      detail: "this sign-in was already completed (a callback is used once); open a new sign-in link if needed",
    });
  const upstream = upstreams(flow.upstream);
  if (upstream?.auth?.type !== "oauth")
    return fail({ reason: "state-invalid", detail: `upstream "${flow.upstream}" no longer asks users to sign in` });
  let as: Awaited<ReturnType<typeof authorizationServerAt>>;
  try {
    as = await authorizationServerAt(new URL(flow.issuer));
  } catch (error) {
    return fail({
      reason: "discovery-failed",
      detail: `the authorization server ${flow.issuer} could not be reached: ${(error as Error).message}`,
    });
  }
  if (redirectUri === sharedRedirectUri(flow.origin) && !advertisesIss(as)) {
    const detail =
      `the authorization server ${flow.issuer} does not say it identifies its answers (RFC 9207 iss),` +
      " and this answer came to the redirect URI every server shares; open the sign-in link again";
    return fail({ reason: "wrong-redirect-uri", detail });
  }
  const client = await gatewayClient(upstream, as, flow.origin, services);
  if (!client.ok) return client;
  const changed = client.value.client.client_id !== flow.clientId || client.value.redirectUri !== redirectUri;
  if (changed) {
    const detail = "the gateway's client changed during this sign-in; open the sign-in link again";
    return fail({ reason: "state-invalid", detail });
  }
  let params: URLSearchParams;
  try {
    params = validateAuthResponse(as, client.value.client, url.searchParams, stateParam);
  } catch (error) {
    return fail({
      reason: "authorization-failed",
      detail: `the authorization server's answer was refused: ${(error as Error).message}`,
    });
  }
  try {
    const tokenUrl = new URL(as.token_endpoint ?? flow.issuer);
    const { client: gateway, auth } = client.value;
    const response = await authorizationCodeGrantRequest(as, gateway, auth, params, redirectUri, flow.verifier, {
      ...httpOptions(tokenUrl),
      additionalParameters: { resource: flow.resource ?? upstream.url },
    });
    const tokens = await processAuthorizationCodeResponse(as, client.value.client, response);
    await writeTokens(services.kv, services.secret, flow.principal, upstream.name, {
      accessToken: tokens.access_token,
      ...(tokens.refresh_token !== undefined ? { refreshToken: tokens.refresh_token } : {}),
      ...(tokens.expires_in !== undefined ? { expiresAt: Date.now() + tokens.expires_in * 1000 } : {}),
      ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
      issuer: as.issuer,
      clientId: flow.clientId,
      ...(client.value.registration !== undefined ? { client: client.value.registration } : {}),
      resource: upstream.url,
      ...(flow.resource !== undefined && flow.resource !== upstream.url ? { namedResource: flow.resource } : {}),
      origin: flow.origin,
      connectedAt: Date.now(),
    });
  } catch (error) {
    // oauth4webapi's messages name the failed check, never a token.
    return fail({
      reason: "token-exchange-failed",
      detail: `the authorization code could not be exchanged: ${(error as Error).message}`,
    });
  }
  return ok({ principal: flow.principal, upstream: upstream.name, link: flow.link });
}
