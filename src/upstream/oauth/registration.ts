/**
 * Which OAuth client the gateway is to an upstream's authorization server, in the order
 * the MCP authorization spec (2025-11-25) gives: a client registered by hand when the
 * operator configured one (`auth.clientId`, its secret by a Worker secret's name); else a
 * Client ID Metadata Document, where the server advertises support — the client id is
 * the URL of the gateway's own document (`/oauth/upstream/client-metadata.json`); else
 * dynamic client registration (RFC 7591), kept sealed in KV per upstream.
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
import { GATEWAY_INFO } from "../../core/gateway-info";
import type { UpstreamConfig } from "../../config/upstreams";
import { readClient, writeClient } from "../../storage/upstream-tokens";
import { httpOptions } from "./http-options";

/** Where the gateway answers the sign-in redirect, relative to its origin. */
export const CALLBACK_PATH = "/oauth/upstream/callback";
/** The gateway's Client ID Metadata Document, relative to its origin. */
export const CLIENT_METADATA_PATH = "/oauth/upstream/client-metadata.json";

/** The client the gateway is, with how it authenticates at the token endpoint. */
export type GatewayClient = { readonly client: Client; readonly auth: ClientAuth };

export type RegistrationProblem = { reason: "registration-failed"; detail: string };

/** What the gateway needs to reach its secrets and its KV. */
export type OAuthServices = { readonly kv: KVNamespace; readonly secret: string; readonly env: Readonly<Record<string, unknown>> };

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
    redirect_uris: [`${origin}${CALLBACK_PATH}`],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

function authFor(as: AuthorizationServer, secret: string | undefined, method?: unknown): ClientAuth {
  if (secret === undefined) return None();
  const methods = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  if (method === "client_secret_post" || (method === undefined && !methods.includes("client_secret_basic") && methods.includes("client_secret_post"))) return ClientSecretPost(secret);
  return ClientSecretBasic(secret);
}

/**
 * The client to use with `as` for `upstream`, registering one when needed.
 *
 * @example
 * const client = await gatewayClient(upstream, as, "https://gw.example", services);
 */
export async function gatewayClient(upstream: UpstreamConfig, as: AuthorizationServer, origin: string, services: OAuthServices): Promise<Result<GatewayClient, RegistrationProblem>> {
  const configured = upstream.auth?.clientId;
  if (configured !== undefined) {
    const name = upstream.auth?.clientSecret;
    const secret = name === undefined ? undefined : services.env[name];
    if (name !== undefined && (typeof secret !== "string" || secret === "")) return fail({ reason: "registration-failed", detail: `secret ${name} is not set (wrangler secret put ${name})` });
    return ok({ client: { client_id: configured }, auth: authFor(as, secret as string | undefined) });
  }
  if (as["client_id_metadata_document_supported"] === true) return ok({ client: { client_id: `${origin}${CLIENT_METADATA_PATH}` }, auth: None() });
  const redirectUri = `${origin}${CALLBACK_PATH}`;
  const kept = await readClient(services.kv, services.secret, upstream.name);
  if (kept && kept.issuer === as.issuer && kept.redirectUri === redirectUri) return ok(asClient(as, kept.client));
  if (as.registration_endpoint === undefined) {
    return fail({ reason: "registration-failed", detail: `the authorization server ${as.issuer} offers neither Client ID Metadata Documents nor dynamic registration; register a client by hand and set auth.clientId` });
  }
  try {
    const { client_id: _id, ...metadata } = clientMetadataDocument(origin);
    const response = await dynamicClientRegistrationRequest(as, metadata as Record<string, string | string[]>, httpOptions(new URL(as.registration_endpoint)));
    const client = await processDynamicClientRegistrationResponse(response);
    await writeClient(services.kv, services.secret, upstream.name, { issuer: as.issuer, redirectUri, client });
    return ok(asClient(as, client));
  } catch (error) {
    return fail({ reason: "registration-failed", detail: `dynamic client registration at ${as.issuer} failed: ${(error as Error).message}` });
  }
}

function asClient(as: AuthorizationServer, client: Readonly<Record<string, unknown>>): GatewayClient {
  const secret = typeof client["client_secret"] === "string" ? client["client_secret"] : undefined;
  return { client: { client_id: String(client["client_id"]) }, auth: authFor(as, secret, client["token_endpoint_auth_method"]) };
}
