/**
 * The HTTP shell: routes, Origin check, configuration errors and status codes. MCP
 * behaviour lives in the framework-free modules this adapter calls.
 */
import type { Context } from "hono";
import { Hono } from "../admin/hono-app";
import { errorResponse, GatewayError } from "../core/errors";
import { INTERNAL_ERROR, INVALID_REQUEST } from "../core/jsonrpc";
import { GATEWAY_INFO } from "../core/gateway-info";
import { ADMIN_BASE, createAdminApp, type AdminApp, type AdminRoutes } from "../admin/app";
import { gatewayConfig, type GatewayConfig } from "../config/gateway-config";
import type { Handler, Services } from "../context/call-context";
import type { PipelineBuilder, PipelineOptions } from "../pipeline/options";
import type { UpstreamConfig } from "../config/upstreams";
import { servicesFor } from "./services";
import { handleDelete, handleGet, handlePost } from "../front/legacy/endpoint";
import type { EndpointRequest, SessionShapes } from "../front/http/endpoint-request";
import { classifyPost } from "../front/modern/classify";
import { checkNesting, checkPostHeaders, requestedCatalog } from "../front/http/request-checks";
import { handleModernPost } from "../front/modern/endpoint";
import { checkOrigin, corsHeaders } from "./origin";
import { authenticate, authError, authFailureName, credentialHint } from "../auth/authenticate";
import type { Caller } from "../context/call-context";
import { metadataUrl, PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from "../auth/protected-resource";
import { identityJwks } from "../upstream/identity-assertion";
import type { FailureRecorder } from "../auth/failed-authentication";
import { readMessageBody } from "./message-body";
import type { AuthConfig } from "../config/auth-config";
import type { ApiKeyVerifier, TokenVerifierFor } from "../auth/authenticate";
import type { CatalogMode, GrantLookup } from "../context/grant";

export type GatewayBindings = {
  UPSTREAMS?: unknown;
  ALLOWED_ORIGINS?: unknown;
  SESSION_SECRET?: string;
  ADMIN_TOKEN?: string;
  GATEWAY_KV?: KVNamespace;
  [binding: string]: unknown;
};

type GatewayContext = Context<{ Bindings: GatewayBindings }>;

/**
 * What features plug into the shell. The composition root (src/gateway.ts) lists them; the
 * shell imports no feature.
 */
export type ShellParts = {
  /** The pipeline of a configuration (src/chain.ts): the middleware order lives there, not here. */
  readonly buildPipeline: PipelineBuilder;
  /** The check of tokens a feature issues (client sign-in's access tokens), for /mcp and `GET /`. */
  readonly tokenVerifier: TokenVerifierFor;
  /** The check of the gateway's API keys (features/api-keys/), when AUTH.apiKeys is on. */
  readonly apiKeys: ApiKeyVerifier;
  /** How a caller's persona grant is found (features/personas/): for each call and for the upstreams it may learn of. */
  readonly grants: GrantLookup;
  /** What a 2025 session seals of the filters when it begins. */
  readonly sessionShapes: SessionShapes;
  /** Told of each failed authentication on /mcp, `GET /` and the admin API (the audit trail records them). */
  readonly recordFailure: FailureRecorder;
  /** Routes of features after the MCP Origin guard (icon files, payload downloads), added in this order. */
  readonly routes: readonly ((app: Hono<{ Bindings: GatewayBindings }>) => void)[];
  /** The admin API's route groups, in order (after its admin token check). */
  readonly adminRoutes: readonly AdminRoutes[];
  /**
   * Browser pages and endpoints that check their own origin (the console, sign-in pages, an
   * authorization server's endpoints), added in this order before the MCP Origin guard;
   * `admin` is the admin API, which the console calls.
   */
  readonly pageRoutes: readonly ((app: Hono<{ Bindings: GatewayBindings }>, admin: AdminApp) => void)[];
  /** What features bring up to date before each request is served (the live upstreams' list), in this order. */
  readonly beforeEachRequest: readonly ((env: GatewayBindings) => Promise<void>)[];
  /** MCP endpoints features serve beside /mcp and /mcp/<upstream> (named servers), after them. */
  readonly endpoints?: readonly FeatureEndpoint[];
};

/** What a feature endpoint's name resolves to for one caller: a route of the aggregated kind, narrowed. */
export type ResolvedEndpoint = {
  /** The route's name: a 2025 session is bound to it (never an upstream's name: it holds a '/'). */
  readonly route: string;
  /** The named server it serves. */
  readonly server: string;
  /** The upstreams it may reach (authorization narrows them further by persona). */
  readonly upstreams: readonly UpstreamConfig[];
  /** Its catalog mode when the URL asks for none. */
  readonly catalog?: CatalogMode;
};

/**
 * An MCP endpoint a feature serves (named servers): its hono path with one `:name`, and what a
 * name resolves to for an authenticated caller (a 404 GatewayError thrown when it serves none).
 * Callers authenticate as on /mcp; both eras, every verb, as on the other routes.
 */
export type FeatureEndpoint = {
  readonly path: string;
  readonly resolve: (
    name: string,
    caller: Caller,
    services: Services,
    all: readonly UpstreamConfig[],
  ) => Promise<ResolvedEndpoint>;
};

/** What the endpoints of one app are served with: its pipelines and the features' parts. */
type Served = { readonly pipelines: (config: GatewayConfig) => Handler; readonly parts: ShellParts };

/**
 * What clients and `GET /` learn of a bad UPSTREAMS: that it is bad, and where the
 * details are. The problems quote the value (a header, a URL, a JSON parse error's
 * excerpt), which may hold a credential, so they go to the operator's log only.
 */
function publicConfigurationError(problems: readonly string[]): string {
  return `Gateway configuration error: UPSTREAMS is invalid (${problems.length} problem${problems.length === 1 ? "" : "s"}); the gateway's log (wrangler tail, or the wrangler dev terminal) lists each one`;
}

function configuredUpstreams(env: GatewayBindings): readonly UpstreamConfig[] {
  const parsed = gatewayConfig(env).upstreams;
  if (!parsed.ok) {
    console.error(`mcp-edge-gateway: ${parsed.problems.join("; ")}`);
    throw new GatewayError(500, INTERNAL_ERROR, publicConfigurationError(parsed.problems));
  }
  return parsed.value;
}

/** The check of the gateway's own access tokens on `route`, when AUTH.signIn is on. */
function signInTokenOf(c: GatewayContext, parts: ShellParts, auth: AuthConfig, route: string) {
  const parsed = gatewayConfig(c.env).upstreams;
  return parts.tokenVerifier(
    c.env,
    auth,
    new URL(c.req.url).origin,
    parsed.ok ? parsed.value.map((u) => u.name) : [],
    route,
  );
}

/**
 * The caller of an MCP request, as the verifier AUTH configures says; a failure is
 * thrown as its 401 (or 500, 503), and recorded in the audit trail (bounded per source).
 */
async function callerOf(c: GatewayContext, route: string, services: Services, parts: ShellParts): Promise<Caller> {
  const config = services.config;
  if (!config.auth.ok) {
    console.error(`mcp-edge-gateway: ${config.auth.problems.join("; ")}`);
    throw new GatewayError(
      500,
      INTERNAL_ERROR,
      `Gateway configuration error: AUTH is invalid (${config.auth.problems.length} problem(s)); the gateway's log lists each one`,
    );
  }
  const startedAt = Date.now();
  const found = await authenticate({
    authorization: c.req.header("authorization") ?? null,
    auth: config.auth.value,
    kv: c.env.GATEWAY_KV,
    cacheTtlMs: config.documentCacheTtlMs,
    apiKeys: parts.apiKeys,
    route,
    // Only read where sign-in is on (`authenticate`): not built, with its URL parse, for every other caller.
    ...(config.auth.value.mode === "on" && config.auth.value.signIn
      ? { signInToken: signInTokenOf(c, parts, config.auth.value, route) }
      : {}),
  });
  if (found.ok) return found.value;
  const path = route === "" ? "/mcp" : `/mcp/${route}`;
  const error = authError(found, metadataUrl(new URL(c.req.url).origin, path), config.auth.value);
  const reason = authFailureName(found);
  if (reason !== undefined) {
    const answer = { status: error.status, code: error.code, message: error.message };
    parts.recordFailure({
      request: c.req.raw,
      route: path,
      reason,
      answer,
      startedAt,
      env: c.env,
      waitUntil: (promise) => c.executionCtx.waitUntil(promise),
    });
  }
  throw error;
}

/** True when AUTH is off on purpose: the only case where anyone may learn every upstream's name. */
function authOff(config: GatewayConfig): boolean {
  return config.auth.ok && config.auth.value.mode === "off";
}

/** The upstreams a caller may learn the names of: every one with AUTH off, else those its persona reaches. */
async function upstreamsShownTo(
  caller: Caller,
  services: Services,
  all: readonly UpstreamConfig[],
  grants: GrantLookup,
): Promise<readonly UpstreamConfig[]> {
  return authOff(services.config)
    ? all
    : grants.reachable(services.kv, services.config.documentCacheTtlMs, caller.roles, all);
}

/** What a route resolves to once its caller is known. */
type Resolve = (
  caller: Caller,
  services: Services,
  all: readonly UpstreamConfig[],
) => Promise<ResolvedEndpoint | Plain>;
type Plain = { readonly route: string; readonly upstreams: readonly UpstreamConfig[] };

/** /mcp (route "") or /mcp/<upstream>: an upstream the caller's persona does not reach is one that does not exist. */
function upstreamRoute(route: string, grants: GrantLookup): Resolve {
  return async (caller, services, all) => {
    const upstreams = route === "" ? all : all.filter((u) => u.name === route);
    if (route !== "") {
      // An upstream the caller's persona does not reach answers as one that does not exist: no
      // session, no handshake, nothing said about it (for every verb and both eras).
      const shown = await upstreamsShownTo(caller, services, all, grants);
      if (!shown.some((u) => u.name === route)) {
        const names = shown.map((u) => u.name).join(", ") || "(none)";
        throw new GatewayError(
          404,
          -32000,
          `Not Found: no upstream named "${route}"; ${authOff(services.config) ? "this gateway serves" : "you may reach"}: ${names}`,
        );
      }
    }
    return { route, upstreams };
  };
}

/** `authRoute` is the route callers authenticate for ("" for /mcp and the endpoints features serve). */
async function endpoint(
  c: GatewayContext,
  authRoute: string,
  resolve: Resolve,
  { pipelines, parts }: Served,
): Promise<EndpointRequest> {
  const all = configuredUpstreams(c.env);
  const services = servicesFor(c.env);
  // Who calls is known before anything is said about upstreams: with authentication on, an
  // unauthenticated caller gets the same 401 whether the upstream exists or not.
  const caller = await callerOf(c, authRoute, services, parts);
  const resolved = await resolve(caller, services, all);
  const catalog = requestedCatalog(c.req.url);
  if (!catalog.ok) throw new GatewayError(400, INVALID_REQUEST, catalog.message);
  const mode = catalog.value ?? ("catalog" in resolved ? resolved.catalog : undefined);
  // The optional members last: a spread in the middle has V8 add every later member one by one.
  return {
    request: c.req.raw,
    env: c.env,
    services,
    pipeline: pipelines(services.config),
    sessionShapes: parts.sessionShapes,
    grants: parts.grants,
    kv: c.env.GATEWAY_KV,
    route: resolved.route,
    principal: caller.principal,
    caller,
    upstreams: resolved.upstreams,
    signal: c.req.raw.signal,
    waitUntil: (promise) => c.executionCtx.waitUntil(promise),
    ...(mode ? { catalog: mode } : {}),
    ...("server" in resolved ? { server: resolved.server } : {}),
  };
}

/**
 * Where an OAuth client looks for an authorization server at the resource's own origin when
 * the metadata names none (RFC 8414 and OpenID discovery, RFC 7591 registration, the
 * default endpoints): the gateway is none, and says so rather than "the MCP endpoint is /mcp".
 */
const AUTHORIZATION_SERVER_PATHS = [
  "/register",
  "/authorize",
  "/token",
  "/.well-known/oauth-authorization-server",
  "/.well-known/oauth-authorization-server/*",
  "/.well-known/openid-configuration",
  "/.well-known/openid-configuration/*",
];

function notAnAuthorizationServer(c: GatewayContext): GatewayError {
  const auth = gatewayConfig(c.env).auth;
  if (auth.ok && auth.value.mode === "on" && auth.value.signIn) {
    const where = "its endpoints are listed at /.well-known/oauth-authorization-server";
    return new GatewayError(404, -32000, `Not Found: this gateway signs clients in with OAuth, but not here; ${where}`);
  }
  const hint =
    credentialHint(auth.ok ? auth.value : undefined) ??
    "its protected-resource metadata names the authorization servers it trusts, if any";
  const refusal = "Not Found: this gateway is not an OAuth authorization server (it registers and signs in no clients)";
  const message = `${refusal}; ${hint}`;
  return new GatewayError(404, -32000, message);
}

const HOME_AUTHENTICATION_REQUIRED =
  "required: send Authorization: Bearer <token> (an API key or an access token); with it, this page lists the upstreams you may reach";

/**
 * What `GET /` says about upstreams: every name with AUTH off; with authentication on, the
 * names a caller's persona reaches when its credentials are good, else only that
 * authentication is required and where its metadata is (nothing about upstreams). A credential
 * that fails is recorded as a failed authentication (bounded per source), as on /mcp.
 */
async function upstreamsOfHome(
  c: GatewayContext,
  parts: ShellParts,
  config: GatewayConfig,
  all: readonly UpstreamConfig[],
): Promise<Record<string, unknown>> {
  if (authOff(config)) return { upstreams: all.map((u) => u.name) };
  const authorization = c.req.header("authorization");
  if (config.auth.ok && authorization !== undefined) {
    const startedAt = Date.now();
    const signInToken = signInTokenOf(c, parts, config.auth.value, "");
    const found = await authenticate({
      authorization,
      auth: config.auth.value,
      kv: c.env.GATEWAY_KV,
      cacheTtlMs: config.documentCacheTtlMs,
      apiKeys: parts.apiKeys,
      route: "",
      signInToken,
    });
    if (found.ok)
      return {
        upstreams: (await upstreamsShownTo(found.value, servicesFor(c.env), all, parts.grants)).map((u) => u.name),
      };
    // The page tells a good credential from a bad one, so a bad one is a failed authentication like any other.
    const reason = authFailureName(found);
    if (reason !== undefined) {
      const answer = { status: 200, message: HOME_AUTHENTICATION_REQUIRED };
      parts.recordFailure({
        request: c.req.raw,
        route: "/",
        reason,
        answer,
        startedAt,
        env: c.env,
        waitUntil: (promise) => c.executionCtx.waitUntil(promise),
      });
    }
  }
  return {
    authentication: HOME_AUTHENTICATION_REQUIRED,
    resourceMetadata: metadataUrl(new URL(c.req.url).origin, "/mcp"),
  };
}

/** A POST goes to the front of its era: 2026-07-28 (`_meta` protocol version) or 2025 (everything else). */
async function post(c: GatewayContext, route: string, resolve: Resolve, served: Served): Promise<Response> {
  // Authenticated before the body is read: an unknown caller's body is never taken in.
  const where = await endpoint(c, route, resolve, served);
  const text = await readMessageBody(c.req.raw, where.services.config.maxMessageBytes);
  const { headers } = c.req.raw;
  checkPostHeaders(headers.get("accept"), headers.get("content-type"));
  // Nesting before anything parses the text, the classifier included.
  const body = checkNesting(text);
  const modern = classifyPost(headers, body);
  if (modern) return handleModernPost(where, modern);
  return handlePost(where, body);
}

async function serve(
  c: GatewayContext,
  route: string,
  served: Served,
  resolve: Resolve = upstreamRoute(route, served.parts.grants),
): Promise<Response> {
  switch (c.req.method) {
    case "POST":
      return post(c, route, resolve, served);
    case "GET":
      return handleGet(await endpoint(c, route, resolve, served));
    case "DELETE":
      return handleDelete(await endpoint(c, route, resolve, served));
    default:
      throw new GatewayError(
        405,
        -32000,
        `Method Not Allowed: ${c.req.method}; use POST, GET or DELETE`,
        undefined,
        null,
        { allow: "GET, POST, DELETE" },
      );
  }
}

/**
 * Builds the gateway's hono app with the features' `parts`. `pipeline` options (a rearranged
 * middleware list, call observers) give an app whose pipeline differs from the Worker's;
 * without them each configuration's default pipeline is used. The composition root
 * (src/gateway.ts, `createApp`) is what calls it.
 *
 * @example
 * const app = createShell(parts, { observers: [(record) => records.push(record)] });
 */
export function createShell(parts: ShellParts, pipeline?: PipelineOptions): Hono<{ Bindings: GatewayBindings }> {
  const app = new Hono<{ Bindings: GatewayBindings }>();
  const custom = new WeakMap<GatewayConfig, Handler>();
  const pipelines = (config: GatewayConfig): Handler => {
    if (!pipeline) return parts.buildPipeline(config);
    let handler = custom.get(config);
    if (!handler) {
      handler = parts.buildPipeline(config, pipeline);
      custom.set(config, handler);
    }
    return handler;
  };

  // What features refresh before every request (the live upstreams joined to UPSTREAMS: features/live-upstreams/).
  app.use("*", async function beforeEachRequest(c, next) {
    for (const refresh of parts.beforeEachRequest) await refresh(c.env);
    await next();
  });
  const admin = createAdminApp(parts.adminRoutes, parts.recordFailure);
  // Browser pages, routed before the MCP Origin guard: the admin console checks origins itself (its own
  // origin only, with a CSRF token), sign-in forms post to their own origin, checked by each route, and an
  // authorization server's endpoints answer CORS themselves. The features' own, in the composition root's order.
  for (const add of parts.pageRoutes) add(app, admin);
  const served: Served = { pipelines, parts };

  app.use("*", async function originGuard(c, next) {
    const origin = checkOrigin(c.req.raw, gatewayConfig(c.env).allowedOrigins);
    if (origin && c.req.method === "OPTIONS")
      return new Response(null, {
        status: 204,
        headers: corsHeaders(origin, c.req.header("access-control-request-headers") ?? null),
      });
    await next();
    if (origin) for (const [name, value] of Object.entries(corsHeaders(origin))) c.res.headers.set(name, value);
  });

  app.get("/", async (c) => {
    const config = gatewayConfig(c.env);
    const parsed = config.upstreams;
    if (!parsed.ok) console.error(`mcp-edge-gateway: ${parsed.problems.join("; ")}`);
    return c.json({
      ...GATEWAY_INFO,
      endpoints: { aggregated: "/mcp", perUpstream: "/mcp/<upstream>" },
      ...(await upstreamsOfHome(c, parts, config, parsed.ok ? parsed.value : [])),
      ...(parsed.ok ? {} : { configurationErrors: [publicConfigurationError(parsed.problems)] }),
    });
  });
  // Liveness: answers without calling any upstream, and says nothing secret.
  app.get("/health", (c) => c.json({ status: "ok", ...GATEWAY_INFO }, 200, { "cache-control": "no-store" }));
  app.route(ADMIN_BASE, admin);
  // The features' own routes (icon files, offloaded payloads), in the composition root's order.
  for (const add of parts.routes) add(app);
  const metadata = (c: GatewayContext, route: string) => {
    const auth = gatewayConfig(c.env).auth;
    return c.json(
      protectedResourceMetadata(auth.ok ? auth.value : { mode: "missing" }, new URL(c.req.url).origin, route),
      200,
      { "cache-control": "public, max-age=300" },
    );
  };
  // The keys upstreams verify identity assertions with.
  app.get("/.well-known/jwks.json", async (c) =>
    c.json(await identityJwks(c.env), 200, { "cache-control": "public, max-age=300" }),
  );
  app.get(PROTECTED_RESOURCE_PATH, (c) => metadata(c, ""));
  app.get(`${PROTECTED_RESOURCE_PATH}/mcp`, (c) => metadata(c, ""));
  app.get(`${PROTECTED_RESOURCE_PATH}/mcp/:upstream`, (c) => metadata(c, c.req.param("upstream")));
  for (const path of AUTHORIZATION_SERVER_PATHS) app.all(path, (c) => errorResponse(notAnAuthorizationServer(c)));
  app.all("/mcp", (c) => serve(c, "", served));
  app.all("/mcp/:upstream", (c) => serve(c, c.req.param("upstream"), served));
  // Features' endpoints authenticate as /mcp does; their names resolve once the caller is known.
  for (const { path, resolve } of parts.endpoints ?? [])
    app.all(path, (c) =>
      serve(c, "", served, (caller, services, all) => resolve(c.req.param("name") ?? "", caller, services, all)),
    );
  app.notFound(() =>
    errorResponse(
      new GatewayError(404, -32000, "Not Found: the MCP endpoint is /mcp (all upstreams) or /mcp/<upstream>"),
    ),
  );
  app.onError((error) => errorResponse(error));
  return app;
}
