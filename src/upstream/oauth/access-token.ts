/**
 * The access token a call sends to an upstream on its caller's behalf: the caller's own,
 * from the sealed store (storage/upstream-tokens.ts), refreshed before it expires (with
 * refresh-token rotation: the new refresh token replaces the old), or none — and then the
 * caller is asked to sign in. Revocation forgets the tokens and tells the authorization
 * server (RFC 7009) where it has a revocation endpoint.
 */
import {
  processRefreshTokenResponse,
  processRevocationResponse,
  refreshTokenGrantRequest,
  revocationRequest,
} from "oauth4webapi";
import { fail, ok, type Result } from "../../core/errors";
import type { UpstreamConfig } from "../../config/upstreams";
import {
  deleteConnection,
  deleteTokens,
  readTokens,
  writeTokens,
  type UpstreamTokens,
} from "../../storage/upstream-tokens";
import { authorizationServerAt } from "./discovery";
import { issuedClient, type OAuthServices } from "./registration";
import { httpOptions } from "./http-options";

/** A token this close to its expiry is refreshed before use. */
export const REFRESH_MARGIN_MS = 60_000;
const MAX_REFRESHES_IN_FLIGHT = 1_000;

/** Why no token can be sent: the caller has none (or it expired unrefreshably). */
export type TokenProblem = { reason: "sign-in-required"; detail: string };

/** The services of a token lookup: storage, and where refresh failures are audited. */
export type TokenServices = OAuthServices & {
  readonly auditQueue?: Queue;
  readonly waitUntil?: (promise: Promise<unknown>) => void;
};

/** A refresh that failed: whose, for which upstream, and why in the gateway's own words (never a token). */
export type RefreshFailure = { readonly principal: string; readonly upstream: string; readonly detail: string };
/** Told of each failed refresh (upstream sign-in's connection events in the audit trail), with the lookup's services. */
export type RefreshFailureReporter = (services: TokenServices, failure: RefreshFailure) => void;

/** The reporter the composition root added (src/gateway.ts); none until then. */
let reportRefreshFailure: RefreshFailureReporter = () => {};

/**
 * Sets who is told of failed refreshes (sent only where the lookup has a `waitUntil`).
 *
 * @example
 * onRefreshFailure((services, failure) => console.warn(failure.detail));
 */
export function onRefreshFailure(report: RefreshFailureReporter): void {
  reportRefreshFailure = report;
}

/** One refresh per caller and upstream at a time in this isolate: a rotated refresh token must not be spent twice. */
const refreshing = new Map<string, Promise<Result<string, TokenProblem>>>();

/** The server that issued `tokens`, and the client they were issued to. */
async function clientFor(upstream: UpstreamConfig, tokens: UpstreamTokens, services: OAuthServices) {
  const as = await authorizationServerAt(new URL(tokens.issuer));
  const client = await issuedClient(upstream, as, tokens, services);
  if (!client.ok) throw new Error(client.detail);
  return { as, ...client.value };
}

async function refresh(
  upstream: UpstreamConfig,
  principal: string,
  tokens: UpstreamTokens,
  services: TokenServices,
): Promise<Result<string, TokenProblem>> {
  try {
    const { as, client, auth } = await clientFor(upstream, tokens, services);
    // The resource the tokens were granted for, named again (RFC 8707 §2.2).
    const additionalParameters = { resource: tokens.namedResource ?? upstream.url };
    const options = { ...httpOptions(new URL(as.token_endpoint ?? as.issuer)), additionalParameters };
    const response = await refreshTokenGrantRequest(as, client, auth, tokens.refreshToken!, options);
    const fresh = await processRefreshTokenResponse(as, client, response);
    const scope = fresh.scope ?? tokens.scope;
    await writeTokens(services.kv, services.secret, principal, upstream.name, {
      ...tokens,
      accessToken: fresh.access_token,
      refreshToken: fresh.refresh_token ?? tokens.refreshToken!,
      ...(fresh.expires_in !== undefined ? { expiresAt: Date.now() + fresh.expires_in * 1000 } : {}),
      ...(scope !== undefined ? { scope } : {}),
    });
    return ok(fresh.access_token);
  } catch (error) {
    await deleteTokens(services.kv, principal, upstream.name);
    const detail = `refreshing the token failed (${(error as Error).message}); sign in again`;
    if (services.waitUntil) reportRefreshFailure(services, { principal, upstream: upstream.name, detail });
    return fail({ reason: "sign-in-required", detail });
  }
}

/**
 * The access token to send `upstream` for `principal`, refreshed when it is about to expire.
 *
 * @example
 * const token = await accessTokenFor(upstream, "alice", services);
 * if (token.ok) headers.set("authorization", `Bearer ${token.value}`);
 */
export async function accessTokenFor(
  upstream: UpstreamConfig,
  principal: string,
  services: TokenServices,
): Promise<Result<string, TokenProblem>> {
  const tokens = await readTokens(services.kv, services.secret, principal, upstream.name);
  if (!tokens) return fail({ reason: "sign-in-required", detail: "not signed in" });
  // Tokens go only to the resource they were issued for: an upstream re-pointed elsewhere asks again.
  if (tokens.resource !== upstream.url)
    return fail({ reason: "sign-in-required", detail: "the upstream's URL changed since you signed in" });
  if (tokens.expiresAt === undefined || tokens.expiresAt - Date.now() > REFRESH_MARGIN_MS)
    return ok(tokens.accessToken);
  if (tokens.refreshToken === undefined) {
    await deleteTokens(services.kv, principal, upstream.name);
    return fail({ reason: "sign-in-required", detail: "the token expired and the server issued no refresh token" });
  }
  const key = `${principal}\u0000${upstream.name}`;
  let pending = refreshing.get(key);
  if (!pending) {
    pending = refresh(upstream, principal, tokens, services).finally(() => refreshing.delete(key));
    if (refreshing.size < MAX_REFRESHES_IN_FLIGHT) refreshing.set(key, pending);
  }
  return pending;
}

/** Forgets the tokens `principal` holds for `upstream` after the upstream rejected them (HTTP 401). */
export async function forgetTokens(
  upstream: UpstreamConfig,
  principal: string,
  services: OAuthServices,
): Promise<void> {
  await deleteTokens(services.kv, principal, upstream.name);
}

/**
 * Revokes `principal`'s connection to `upstream`: at the authorization server when it has
 * a revocation endpoint (the refresh token, which ends the grant; else the access token), then in the store.
 * Returns false when there was no connection.
 */
export async function revokeConnection(
  upstream: UpstreamConfig | undefined,
  upstreamName: string,
  principal: string,
  services: OAuthServices,
): Promise<boolean> {
  const tokens = await readTokens(services.kv, services.secret, principal, upstreamName);
  // A key the user pasted (userKey) has no authorization server to tell.
  if (!tokens) return deleteConnection(services.kv, principal, upstreamName);
  if (upstream) {
    try {
      const { as, client, auth } = await clientFor(upstream, tokens, services);
      if (as.revocation_endpoint !== undefined) {
        // Revoking the refresh token ends the grant and the access tokens it issued (RFC 7009 §2.1).
        const token = tokens.refreshToken ?? tokens.accessToken;
        await processRevocationResponse(
          await revocationRequest(as, client, auth, token, httpOptions(new URL(as.revocation_endpoint))),
        );
      }
    } catch (error) {
      console.warn(
        `mcp-edge-gateway: upstream "${upstreamName}": revoking at the authorization server failed (${(error as Error).message}); the gateway forgets the tokens anyway`,
      );
    }
  }
  await deleteTokens(services.kv, principal, upstreamName);
  return true;
}
