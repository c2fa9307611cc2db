/**
 * Finding an upstream's authorization server the way the MCP authorization spec
 * (2025-11-25) has a client do it: the upstream's 401 names its protected resource
 * metadata in `WWW-Authenticate` (`resource_metadata`), else the well-known URI of RFC 9728
 * is tried; that metadata names the authorization servers, whose own metadata comes from
 * RFC 8414 (`oauth-authorization-server`), else OpenID Connect discovery. The protocol
 * work (URLs, checks of `resource` and `issuer`) is oauth4webapi's.
 */
import {
  checkProtocol,
  discoveryRequest,
  processDiscoveryResponse,
  processResourceDiscoveryResponse,
  resourceDiscoveryRequest,
  processDynamicClientRegistrationResponse,
  WWWAuthenticateChallengeError,
  type AuthorizationServer,
} from "oauth4webapi";
import { fail, ok, type Result } from "../../core/errors";
import type { UpstreamConfig } from "../../config/upstreams";
import { httpOptions, isLoopback } from "./http-options";

/** What an upstream's 401 or 403 said about signing in. */
export type Challenge = { readonly resourceMetadata?: string; readonly scope?: string; readonly error?: string };

/** Where an upstream's users sign in: its authorization server, the resource to name, the scopes to ask for. */
export type SignInServer = { readonly as: AuthorizationServer; readonly resource: string; readonly scopes: readonly string[] };

export type DiscoveryProblem = { reason: "discovery-failed"; detail: string };

/**
 * The Bearer challenge in a `WWW-Authenticate` header value, parsed by oauth4webapi
 * (it reads challenges off a response it is given; this one carries only the header).
 */
export async function parseChallenge(header: string | null): Promise<Challenge> {
  if (!header) return {};
  try {
    await processDynamicClientRegistrationResponse(new Response(null, { status: 401, headers: { "www-authenticate": header } }));
  } catch (error) {
    if (error instanceof WWWAuthenticateChallengeError) {
      const bearer = error.cause.find((c) => c.scheme === "bearer");
      const p = bearer?.parameters ?? {};
      return { ...(p["resource_metadata"] ? { resourceMetadata: p["resource_metadata"] } : {}), ...(p["scope"] ? { scope: p["scope"] } : {}), ...(p["error"] ? { error: p["error"] } : {}) };
    }
  }
  return {};
}

async function resourceMetadata(upstream: UpstreamConfig, hint: Challenge): Promise<Result<{ servers: string[]; scopes: string[] }, DiscoveryProblem>> {
  const resource = new URL(upstream.url);
  let response: Response;
  try {
    if (hint.resourceMetadata !== undefined) {
      const url = new URL(hint.resourceMetadata);
      checkProtocol(url, !isLoopback(url)); // https, as resourceDiscoveryRequest requires of the URL it builds
      response = await fetch(url, { headers: { accept: "application/json" }, redirect: "manual", signal: httpOptions(url).signal });
    } else {
      response = await resourceDiscoveryRequest(resource, httpOptions(resource));
    }
    const metadata = await processResourceDiscoveryResponse(resource, response);
    return ok({ servers: metadata.authorization_servers ?? [], scopes: metadata.scopes_supported ?? [] });
  } catch (error) {
    return fail({ reason: "discovery-failed", detail: `the upstream's protected resource metadata (RFC 9728) could not be read: ${(error as Error).message}` });
  }
}

/** The metadata of the authorization server `issuer` (RFC 8414, else OpenID Connect discovery). */
export async function authorizationServerAt(issuer: URL): Promise<AuthorizationServer> {
  const oauth = await discoveryRequest(issuer, { ...httpOptions(issuer), algorithm: "oauth2" });
  if (oauth.ok) return processDiscoveryResponse(issuer, oauth);
  await oauth.body?.cancel();
  return processDiscoveryResponse(issuer, await discoveryRequest(issuer, { ...httpOptions(issuer), algorithm: "oidc" }));
}

/**
 * The authorization server `upstream`'s users sign in with, from the configured
 * `authorizationServer` or by discovery starting at the upstream's challenge.
 *
 * @example
 * const found = await discoverSignInServer(upstream, await parseChallenge(response.headers.get("www-authenticate")));
 */
export async function discoverSignInServer(upstream: UpstreamConfig, hint: Challenge): Promise<Result<SignInServer, DiscoveryProblem>> {
  const configured = upstream.auth?.authorizationServer;
  let issuer = configured;
  let scopes: string[] = [];
  const metadata = await resourceMetadata(upstream, hint);
  if (metadata.ok) {
    scopes = metadata.value.scopes;
    if (issuer === undefined) issuer = metadata.value.servers[0];
  } else if (issuer === undefined) return metadata;
  if (issuer === undefined) return fail({ reason: "discovery-failed", detail: "the upstream's protected resource metadata names no authorization server; set auth.authorizationServer" });
  try {
    const as = await authorizationServerAt(new URL(issuer));
    const asked = hint.scope !== undefined ? hint.scope.split(" ") : scopes;
    const all = new Set([...(upstream.auth?.scopes ?? []), ...asked].filter((s) => s !== ""));
    return ok({ as, resource: upstream.url, scopes: [...all] });
  } catch (error) {
    return fail({ reason: "discovery-failed", detail: `the authorization server ${issuer} has no readable metadata (RFC 8414 or OpenID Connect discovery): ${(error as Error).message}` });
  }
}
