/**
 * Which OAuth client the gateway is to an upstream's authorization server, in the order
 * the MCP authorization spec (2025-11-25) gives: a client registered by hand when the
 * operator configured one (`auth.clientId`, its secret by a Worker secret's name); else a
 * Client ID Metadata Document, where the server advertises support and RFC 9207 `iss` —
 * the client id is the URL of the gateway's own document (`/oauth/upstream/client-metadata.json`);
 * else dynamic client registration (RFC 7591), kept sealed in KV per upstream and redirect
 * URI. Each comes with its redirect URI (redirect-uri.ts: the server's own, or the shared
 * one where the server's `iss` tells its answers apart). A refresh uses the client its
 * tokens were issued to (issuedClient), whatever registrations later sign-ins made.
 */
import {
  ClientSecretBasic,
  ClientSecretPost,
  dynamicClientRegistrationRequest,
  None,
  processDynamicClientRegistrationResponse,
  type AuthorizationServer,
  type Client,
  type ClientAuth,
} from "oauth4webapi";
import { fail, ok, type Result } from "../../core/errors";
import { readTextUpTo } from "../../core/bounded-text";
import { isObject, type JsonObject } from "../../core/jsonrpc";
import { GATEWAY_INFO } from "../../core/gateway-info";
import type { UpstreamConfig } from "../../config/upstreams";
import { readClient, readLegacyClient, writeClient } from "../../storage/upstream-tokens";
import { httpOptions } from "./http-options";
import { advertisesIss, serverRedirectUri, sharedRedirectUri } from "./redirect-uri";

/** The gateway's Client ID Metadata Document, relative to its origin. */
export const CLIENT_METADATA_PATH = "/oauth/upstream/client-metadata.json";

/**
 * What the gateway is to an authorization server (SEP-837: a client names it): a web
 * application, a server whose redirect URIs are its own web addresses.
 */
export const APPLICATION_TYPE = "web";
/** The largest registration answer read (a client's metadata is a few hundred bytes). */
export const MAX_REGISTRATION_ANSWER_BYTES = 64 * 1024;

/** The client the gateway is, with how it authenticates at the token endpoint. */
export type GatewayClient = { readonly client: Client; readonly auth: ClientAuth };

/**
 * The client a sign-in starts with: its redirect URI, and the dynamic registration when it
 * is one (kept with the user's tokens, for their refreshes).
 */
export type SignInClient = GatewayClient & {
  readonly redirectUri: string;
  readonly registration?: Readonly<Record<string, unknown>>;
};

/** Which client tokens were issued to, as stored with them. */
export type IssuedTo = { readonly clientId: string; readonly client?: Readonly<Record<string, unknown>> };

export type RegistrationProblem = { reason: "registration-failed"; detail: string };

/** What the gateway needs to reach its secrets and its KV. */
export type OAuthServices = {
  readonly kv: KVNamespace;
  readonly secret: string;
  readonly env: Readonly<Record<string, unknown>>;
};

/**
 * The gateway's Client ID Metadata Document for `origin` (served at CLIENT_METADATA_PATH).
 *
 * @example
 * clientMetadataDocument("https://gw.example"); // { client_id: "https://gw.example/oauth/upstream/client-metadata.json", ... }
 */
export function clientMetadataDocument(origin: string): Record<string, string | string[]> {
  return {
    client_id: `${origin}${CLIENT_METADATA_PATH}`,
    client_name: GATEWAY_INFO.name,
    client_uri: origin,
    application_type: APPLICATION_TYPE,
    redirect_uris: [sharedRedirectUri(origin)],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

function authFor(as: AuthorizationServer, secret: string | undefined, method?: unknown): ClientAuth {
  if (secret === undefined) return None();
  const methods = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  if (
    method === "client_secret_post" ||
    (method === undefined && !methods.includes("client_secret_basic") && methods.includes("client_secret_post"))
  )
    return ClientSecretPost(secret);
  return ClientSecretBasic(secret);
}

function configuredClient(
  upstream: UpstreamConfig,
  as: AuthorizationServer,
  services: OAuthServices,
): Result<GatewayClient, RegistrationProblem> | undefined {
  const auth = upstream.auth?.type === "oauth" ? upstream.auth : undefined;
  const configured = auth?.clientId;
  if (configured === undefined) return undefined;
  const name = auth?.clientSecret;
  const secret = name === undefined ? undefined : services.env[name];
  if (name !== undefined && (typeof secret !== "string" || secret === "")) {
    return fail({ reason: "registration-failed", detail: `secret ${name} is not set (wrangler secret put ${name})` });
  }
  return ok({ client: { client_id: configured }, auth: authFor(as, secret as string | undefined) });
}

/**
 * The client to start a sign-in to `upstream` with at `as`, through `origin`, registering
 * one when needed.
 *
 * @example
 * const client = await gatewayClient(upstream, as, "https://gw.example", services);
 */
export async function gatewayClient(
  upstream: UpstreamConfig,
  as: AuthorizationServer,
  origin: string,
  services: OAuthServices,
): Promise<Result<SignInClient, RegistrationProblem>> {
  const ownUri = await serverRedirectUri(origin, upstream.name, as.issuer);
  const configured = configuredClient(upstream, as, services);
  // By hand: the shared URI operators registered, where the server's iss tells answers apart.
  if (configured) {
    if (!configured.ok) return configured;
    return ok({ ...configured.value, redirectUri: advertisesIss(as) ? sharedRedirectUri(origin) : ownUri });
  }
  const cimd = as["client_id_metadata_document_supported"] === true;
  if (cimd && advertisesIss(as)) {
    const redirectUri = sharedRedirectUri(origin);
    return ok({ client: { client_id: `${origin}${CLIENT_METADATA_PATH}` }, auth: None(), redirectUri });
  }
  const known = await readClient(services.kv, services.secret, upstream.name, ownUri);
  if (known && known.issuer === as.issuer && known.redirectUri === ownUri) {
    return ok({ ...asClient(as, known.client), redirectUri: ownUri, registration: kept(known.client) });
  }
  if (as.registration_endpoint === undefined) {
    const why = cimd
      ? "takes Client ID Metadata Documents but does not advertise RFC 9207 iss" +
        " (authorization_response_iss_parameter_supported), and offers no dynamic registration"
      : "offers neither Client ID Metadata Documents nor dynamic registration";
    const detail = `the authorization server ${as.issuer} ${why}; register a client by hand and set auth.clientId`;
    return fail({ reason: "registration-failed", detail });
  }
  try {
    const { client_id: _id, ...metadata } = clientMetadataDocument(origin);
    const asked = { ...metadata, redirect_uris: [ownUri] } as Record<string, string | string[]>;
    const response = await dynamicClientRegistrationRequest(as, asked, httpOptions(new URL(as.registration_endpoint)));
    const client = await processDynamicClientRegistrationResponse(await withSecretExpiry(response));
    await writeClient(services.kv, services.secret, upstream.name, { issuer: as.issuer, redirectUri: ownUri, client });
    return ok({ ...asClient(as, client), redirectUri: ownUri, registration: kept(client) });
  } catch (error) {
    return fail({
      reason: "registration-failed",
      detail: `dynamic client registration at ${as.issuer} failed: ${(error as Error).message}`,
    });
  }
}

/**
 * The client tokens were issued to (`issued`, stored with them), to refresh or revoke them:
 * the client configured by hand; else the registration kept with the tokens; else (tokens
 * of before registrations were kept with them) the upstream's one registration of then, if
 * it is that client; else the client id alone (a metadata document, or a public client).
 */
export async function issuedClient(
  upstream: UpstreamConfig,
  as: AuthorizationServer,
  issued: IssuedTo,
  services: OAuthServices,
): Promise<Result<GatewayClient, RegistrationProblem>> {
  const configured = configuredClient(upstream, as, services);
  if (configured) return configured;
  if (issued.client && issued.client["client_id"] === issued.clientId) return ok(asClient(as, issued.client));
  const legacy = await readLegacyClient(services.kv, services.secret, upstream.name);
  if (legacy && legacy.client["client_id"] === issued.clientId) return ok(asClient(as, legacy.client));
  return ok({ client: { client_id: issued.clientId }, auth: None() });
}

/**
 * The registration answer, with `client_secret_expires_at: 0` (never expires) where a
 * secret came without it: RFC 7591 §3.2.1 requires the field with a secret, and many
 * servers leave it out (the MCP conformance suite's do); oauth4webapi refuses such an
 * answer. Anything else (an error, a body that is not a JSON object) is left as it came,
 * for oauth4webapi to judge; a body over MAX_REGISTRATION_ANSWER_BYTES is refused.
 */
async function withSecretExpiry(response: Response): Promise<Response> {
  if (response.status !== 201 || !(response.headers.get("content-type") ?? "").includes("json")) return response;
  const text = await readTextUpTo(response.body, MAX_REGISTRATION_ANSWER_BYTES);
  if (text === undefined) throw new Error(`its answer is larger than ${MAX_REGISTRATION_ANSWER_BYTES} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const noExpiry =
    isObject(body) && typeof body["client_secret"] === "string" && body["client_secret_expires_at"] === undefined;
  const patched = noExpiry ? JSON.stringify({ ...(body as JsonObject), client_secret_expires_at: 0 }) : text;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(patched, { status: response.status, headers });
}

const KEPT_FIELDS = ["client_id", "client_secret", "token_endpoint_auth_method"];

/** What tokens keep of a registration: its id, secret and how it authenticates (not its management token). */
function kept(client: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const fields = KEPT_FIELDS.filter((k) => typeof client[k] === "string");
  return Object.fromEntries(fields.map((k) => [k, client[k]]));
}

function asClient(as: AuthorizationServer, client: Readonly<Record<string, unknown>>): GatewayClient {
  const secret = typeof client["client_secret"] === "string" ? client["client_secret"] : undefined;
  return {
    client: { client_id: String(client["client_id"]) },
    auth: authFor(as, secret, client["token_endpoint_auth_method"]),
  };
}
