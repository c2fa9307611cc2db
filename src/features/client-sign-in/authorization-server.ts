/**
 * The gateway as its clients' OAuth authorization server, through Cloudflare's
 * workers-oauth-provider (its `OAuthAuthorizationServer`, the role API: hono stays the
 * shell, the library serves the protocol's endpoints and validates its tokens). The issuer
 * is the gateway's origin; the resources it issues tokens for are `/mcp` and each
 * configured `/mcp/<upstream>`, so a token is bound to one of them (RFC 8707).
 *
 * The library is a module of its own, loaded only when AUTH.signIn is on
 * (storage/oauth-library.ts): a gateway without sign-in never parses it. One server per origin and configuration is
 * kept per isolate (a cache: it holds no state of its own, grants are in KV).
 */
import type {
  AuthRequest,
  OAuthAuthorizationServer,
  OAuthHelpers,
  TokenExchangeCallbackOptions,
} from "@cloudflare/workers-oauth-provider";
import type { AuthConfig } from "../../config/auth-config";
import type { SignInConfig } from "./config";
import { resourceUrl } from "../../auth/protected-resource";
import { loadOAuthLibrary, type OAuthLibrary } from "../../storage/oauth-library";
import { gatewayConfig } from "../../config/gateway-config";
import { queueAuditEvents } from "../audit/audit-queue";
import { grantEvent } from "./grant-audit";
import { isLoopback } from "../../upstream/oauth/http-options";

/** Where the library's endpoints and the gateway's sign-in pages are. */
export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";
/** Where the operator's identity provider sends the browser back. */
export const IDP_CALLBACK_PATH = "/oauth/sign-in/callback";
/** An access token lives an hour; a grant (its refresh token) 30 days, the library's default. */
const ACCESS_TOKEN_TTL_S = 60 * 60;
export const GRANT_TTL_S = 30 * 24 * 60 * 60;
/** Dynamically registered clients unused this long are forgotten (renewed while in use). */
const CLIENT_REGISTRATION_TTL_S = 90 * 24 * 60 * 60;
/** Servers kept per isolate (one per origin and configuration in practice). */
const MAX_SERVERS = 8;

/**
 * What a grant keeps (encrypted by the library) and hands back with every token: the
 * roles fixed at login, and the groups (values of AUTH.signIn.rolesClaim) the live role
 * mapping reads at each use (role-mapping.ts).
 */
export type SignedInUser = {
  readonly principal: string;
  readonly email: string;
  readonly roles: readonly string[];
  readonly groups?: readonly string[];
};

const isStrings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === "string");

/** True for what a grant keeps (read back from a token, or from the sealed consent form). */
export function isSignedInUser(value: unknown): value is SignedInUser {
  if (typeof value !== "object" || value === null) return false;
  const user = value as Record<string, unknown>;
  return (
    typeof user["principal"] === "string" &&
    typeof user["email"] === "string" &&
    isStrings(user["roles"]) &&
    (user["groups"] === undefined || isStrings(user["groups"]))
  );
}

type Env = Readonly<Record<string, unknown>>;

/**
 * The library calls this as it issues tokens for a code or a refresh: the audit event of it
 * (awaited: the library's callback has no waitUntil; one Queue send, at most hourly per client).
 */
async function auditTokenIssued(options: TokenExchangeCallbackOptions<Env>): Promise<void> {
  if (!gatewayConfig(options.env).audit.enabled) return;
  const kind =
    options.grantType === "refresh_token"
      ? "refresh"
      : options.grantType === "authorization_code"
        ? "token"
        : undefined;
  if (kind === undefined) return;
  const user = isSignedInUser(options.props) ? options.props : undefined;
  await queueAuditEvents(options.env["AUDIT_QUEUE"] as Queue | undefined, [
    grantEvent({
      kind,
      principal: user?.principal ?? options.userId,
      email: user?.email,
      clientId: options.clientId,
      grantId: options.grantId,
      resource: options.resource,
    }),
  ]);
}

const servers = new Map<string, OAuthAuthorizationServer<Env>>();

/** The library, loaded on first use in this isolate. */
export function oauthLibrary(): Promise<OAuthLibrary> {
  return loadOAuthLibrary();
}

/**
 * The env the library sees: its grants in OAUTH_KV when bound, else in GATEWAY_KV (its keys never collide with ours).
 */
export function libraryEnv(env: Env): Env {
  return { ...env, OAUTH_KV: env["OAUTH_KV"] ?? env["GATEWAY_KV"] };
}

/** True when the gateway at `origin` runs locally (npm start): the only place an http client id is taken. */
export function runsLocally(origin: string): boolean {
  return isLoopback(new URL(origin));
}

/**
 * The env of the library's client-facing steps (authorize, consent, token): for a gateway running locally, http
 * client ids read their metadata documents (loopback-client.ts, in the library's module: only npm start needs it).
 */
export async function clientStepsEnv(env: Env, origin: string): Promise<Env> {
  const base = libraryEnv(env);
  if (base["OAUTH_KV"] === undefined || !runsLocally(origin)) return base;
  const { withLoopbackClients, CimdFetchError } = await oauthLibrary();
  const refuse = async (clientId: string, cause: unknown) => new CimdFetchError(clientId, cause);
  return { ...base, OAUTH_KV: withLoopbackClients(base["OAUTH_KV"] as KVNamespace, refuse) };
}

/** The namespace the library keeps grants in (and the index of their users: grants.ts). */
export function libraryKv(env: Env): KVNamespace {
  const kv = libraryEnv(env)["OAUTH_KV"];
  if (kv === undefined)
    throw new Error("client sign-in keeps grants in KV: bind OAUTH_KV or GATEWAY_KV in wrangler.toml");
  return kv as KVNamespace;
}

/** The resources tokens may be issued for: /mcp, then each upstream's route. */
export function resourcesOf(auth: AuthConfig, origin: string, upstreams: readonly string[]): string[] {
  return [resourceUrl(auth, origin, ""), ...upstreams.map((name) => resourceUrl(auth, origin, name))];
}

/**
 * The authorization server of `origin` for this configuration.
 *
 * @example
 * const server = await authorizationServer(auth, signIn, "https://gw.example", ["github", "jira"]);
 * return server.fetch(request, libraryEnv(env), ctx);
 */
export async function authorizationServer(
  auth: AuthConfig,
  signIn: SignInConfig,
  origin: string,
  upstreams: readonly string[],
): Promise<OAuthAuthorizationServer<Env>> {
  const resources = resourcesOf(auth, origin, upstreams);
  const scopes = auth.mode === "on" ? auth.scopes : [];
  const key = `${origin}\n${resources.join(" ")}\n${scopes.join(" ")}\n${signIn.issuer}`;
  const kept = servers.get(key);
  if (kept) return kept;
  const { OAuthAuthorizationServer } = await oauthLibrary();
  const server = new OAuthAuthorizationServer<Env>({
    issuer: origin,
    resources,
    // Clients that omit `resource` (older ones) get the aggregated endpoint.
    defaultResource: resources[0]!,
    authorizeEndpoint: `${origin}${AUTHORIZE_PATH}`,
    tokenEndpoint: `${origin}${TOKEN_PATH}`,
    clientRegistrationEndpoint: `${origin}${REGISTER_PATH}`,
    clientIdMetadataDocumentEnabled: true,
    accessTokenTTL: ACCESS_TOKEN_TTL_S,
    refreshTokenTTL: GRANT_TTL_S,
    tokenExchangeCallback: auditTokenIssued,
    clientRegistrationTTL: CLIENT_REGISTRATION_TTL_S,
    ...(scopes.length > 0 ? { scopesSupported: [...scopes] } : {}),
    // The library's default logs each refused request; its messages name the check, never a token.
  });
  if (servers.size >= MAX_SERVERS) servers.clear();
  servers.set(key, server);
  return server;
}

/** The helpers of the authorize endpoint and the pages after it. */
export async function oauthApi(
  env: Env,
  auth: AuthConfig,
  signIn: SignInConfig,
  origin: string,
  upstreams: readonly string[],
): Promise<OAuthHelpers> {
  return (await authorizationServer(auth, signIn, origin, upstreams)).getOAuthApi(await clientStepsEnv(env, origin));
}

export type { AuthRequest, OAuthAuthorizationServer, OAuthHelpers };
