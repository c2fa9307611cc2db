/**
 * Finding an upstream's authorization server the way the MCP authorization spec
 * (2025-11-25) has a client do it: the upstream's 401 names its protected resource
 * metadata in `WWW-Authenticate` (`resource_metadata`), else the well-known URI of RFC 9728
 * is tried with the upstream's path, then at its origin's root; that metadata names the
 * authorization servers, whose own metadata comes from RFC 8414
 * (`oauth-authorization-server`), else OpenID Connect discovery. The protocol work (URLs,
 * checks of `resource` and `issuer`) is oauth4webapi's.
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
import type { SignInChallenge } from "../../core/failures";
import type { UpstreamConfig } from "../../config/upstreams";
import { httpOptions, isLoopback } from "./http-options";

/** What an upstream's 401 or 403 said about signing in (a sign-in-required failure carries it). */
export type Challenge = SignInChallenge;

/** Where an upstream's users sign in: its authorization server, the resource to name, the scopes to ask for. */
export type SignInServer = {
  readonly as: AuthorizationServer;
  readonly resource: string;
  readonly scopes: readonly string[];
};

export type DiscoveryProblem = { reason: "discovery-failed"; detail: string };

/**
 * The Bearer challenge in a `WWW-Authenticate` header value, parsed by oauth4webapi
 * (it reads challenges off a response it is given; this one carries only the header).
 */
export async function parseChallenge(header: string | null): Promise<Challenge> {
  if (!header) return {};
  try {
    await processDynamicClientRegistrationResponse(
      new Response(null, { status: 401, headers: { "www-authenticate": header } }),
    );
  } catch (error) {
    if (error instanceof WWWAuthenticateChallengeError) {
      const bearer = error.cause.find((c) => c.scheme === "bearer");
      const p = bearer?.parameters ?? {};
      return {
        ...(p["resource_metadata"] ? { resourceMetadata: p["resource_metadata"] } : {}),
        ...(p["scope"] ? { scope: p["scope"] } : {}),
        ...(p["error"] ? { error: p["error"] } : {}),
      };
    }
  }
  return {};
}

type ResourceMetadata = { readonly resource: string; readonly servers: string[]; readonly scopes: string[] };

/** Where metadata may be: how to ask for it, and the resource it must name (RFC 9728 §3.3). */
type Place = { readonly where: string; readonly request: () => Promise<Response>; readonly expected: URL };

/** The metadata at the URL a challenge named (`resource_metadata`), about `resource`. */
function named(url: URL, resource: URL): Place {
  const request = async () => {
    checkProtocol(url, !isLoopback(url)); // https, as resourceDiscoveryRequest requires of the URL it builds
    return fetch(url, { headers: { accept: "application/json" }, redirect: "manual", signal: httpOptions(url).signal });
  };
  return { where: url.href, request, expected: resource };
}

/** The metadata at `resource`'s well-known URI (RFC 9728 §3.1, built by oauth4webapi). */
function wellKnown(resource: URL): Place {
  const request = () => resourceDiscoveryRequest(resource, httpOptions(resource));
  return { where: `the well-known URI of ${resource.href}`, request, expected: resource };
}

/**
 * The upstream's protected resource metadata, where the MCP authorization spec has a client
 * look: the `resource_metadata` URL of its 401's WWW-Authenticate, else the well-known URI
 * with the upstream's path, else the one at the root of its origin (which then describes the
 * origin: the resource to name is the one that metadata publishes).
 */
async function resourceMetadata(
  upstream: UpstreamConfig,
  hint: Challenge,
): Promise<Result<ResourceMetadata, DiscoveryProblem>> {
  const resource = new URL(upstream.url);
  const root = new URL(resource.origin);
  const atRoot = resource.pathname === "/" && resource.search === "";
  let places: Place[];
  try {
    places =
      hint.resourceMetadata !== undefined
        ? [named(new URL(hint.resourceMetadata), resource)]
        : [wellKnown(resource), ...(atRoot ? [] : [wellKnown(root)])];
  } catch {
    const detail = "the upstream's challenge names a resource_metadata that is not a URL";
    return fail({ reason: "discovery-failed", detail });
  }
  const failures: string[] = [];
  for (const { where, request, expected } of places) {
    try {
      const metadata = await processResourceDiscoveryResponse(expected, await request());
      const { resource: named, authorization_servers: servers = [], scopes_supported: scopes = [] } = metadata;
      return ok({ resource: named, servers, scopes });
    } catch (error) {
      failures.push(`${where}: ${(error as Error).message}`);
    }
  }
  const detail = `the upstream's protected resource metadata (RFC 9728) could not be read (${failures.join("; ")})`;
  return fail({ reason: "discovery-failed", detail });
}

/** The metadata of the authorization server `issuer` (RFC 8414, else OpenID Connect discovery). */
export async function authorizationServerAt(issuer: URL): Promise<AuthorizationServer> {
  const oauth = await discoveryRequest(issuer, { ...httpOptions(issuer), algorithm: "oauth2" });
  if (oauth.ok) return processDiscoveryResponse(issuer, oauth);
  await oauth.body?.cancel();
  return processDiscoveryResponse(
    issuer,
    await discoveryRequest(issuer, { ...httpOptions(issuer), algorithm: "oidc" }),
  );
}

/**
 * The authorization server `upstream`'s users sign in with, from the configured
 * `authorizationServer` or by discovery starting at the upstream's challenge; `granted`:
 * the scope the caller holds, asked for again on a step-up (SEP-2350: the union).
 *
 * @example
 * const found = await discoverSignInServer(upstream, await parseChallenge(response.headers.get("www-authenticate")));
 */
export async function discoverSignInServer(
  upstream: UpstreamConfig,
  hint: Challenge,
  granted: readonly string[] = [],
): Promise<Result<SignInServer, DiscoveryProblem>> {
  const configured = upstream.auth?.type === "oauth" ? upstream.auth.authorizationServer : undefined;
  let issuer = configured;
  let scopes: string[] = [];
  let resource = upstream.url;
  const metadata = await resourceMetadata(upstream, hint);
  if (metadata.ok) {
    scopes = metadata.value.scopes;
    resource = metadata.value.resource;
    if (issuer === undefined) issuer = metadata.value.servers[0];
  } else if (issuer === undefined) return metadata;
  if (issuer === undefined)
    return fail({
      reason: "discovery-failed",
      detail: "the upstream's protected resource metadata names no authorization server; set auth.authorizationServer",
    });
  try {
    const as = await authorizationServerAt(new URL(issuer));
    // The challenge's scope first, else the metadata's; with what was granted before (SEP-2350).
    const asked = hint.scope !== undefined ? hint.scope.split(" ") : scopes;
    const all = new Set(
      [...((upstream.auth?.type === "oauth" ? upstream.auth.scopes : undefined) ?? []), ...granted, ...asked].filter(
        (s) => s !== "",
      ),
    );
    return ok({ as, resource, scopes: [...all] });
  } catch (error) {
    return fail({
      reason: "discovery-failed",
      detail: `the authorization server ${issuer} has no readable metadata (RFC 8414 or OpenID Connect discovery): ${(error as Error).message}`,
    });
  }
}
