/**
 * The HTTP side of client sign-in, added to the shell when AUTH.signIn is on:
 *
 *   GET  /.well-known/oauth-authorization-server  RFC 8414 metadata       (the library)
 *   POST /oauth/token, /oauth/register            tokens, revocation, DCR (the library)
 *   GET  /oauth/authorize                         a client's request: checked, then the browser goes to the provider
 *   GET  /oauth/sign-in/callback                  back from the provider: who logged in, then the consent page
 *   POST /oauth/authorize                         Allow or Deny: a code for the client, or access_denied
 *
 * Consent comes after the login (the page names who is signed in and what the client
 * will reach), and only Allow completes the authorization. The request the client made
 * is kept server-side by the library from the first step to the last; forms carry only
 * handles bound to this browser by cookies, and the signed-in user sealed to the handle.
 */
import type { Context, Next } from "hono";
import type { Hono } from "../../admin/hono-app";
import { gatewayConfig } from "../../config/gateway-config";
import { sessionSecret } from "../../config/secrets";
import { readTextUpTo } from "../../core/bounded-text";
import { isObject } from "../../core/jsonrpc";
import { openState, sealState } from "../../core/sealed-state";
import { reachableUpstreams } from "../personas/reachable-upstreams";
import {
  AUTHORIZATION_SERVER_METADATA_PATH,
  AUTHORIZE_PATH,
  authorizationServer,
  IDP_CALLBACK_PATH,
  isSignedInUser,
  clientStepsEnv,
  libraryKv,
  oauthApi,
  oauthLibrary,
  REGISTER_PATH,
  resourcesOf,
  runsLocally,
  TOKEN_PATH,
  type AuthRequest,
  type OAuthHelpers,
  type OAuthAuthorizationServer,
  type SignedInUser,
} from "./authorization-server";
import { finishLogin, loginRedirect, type LoginData, type LoginProblem } from "./identity-provider";
import { accessUser } from "./cloudflare-access";
import { consentPage, stopPage } from "./pages";
import { issueGrant, type IssueOptions } from "./grant-issue";
import { signInOn, type On } from "./sign-in-on";
import { addGrantRoutes } from "./grant-routes";
import { auditSinkOf } from "./grant-audit";
import { tokenEndpoint } from "./token-endpoint";
import { libraryUserId, userGrants } from "./grants";
import { coveringGrant } from "./remembered-consent";
import { currentRoles } from "./role-mapping";

/** The consent form: a handle and a sealed user, a few KB. */
const MAX_CONSENT_FORM_BYTES = 16 * 1024;
/** As long as the library keeps the consent handle. */
const CONSENT_TTL_MS = 10 * 60_000;
const CONSENT_PURPOSE = "client-sign-in-consent";
const FORM_TYPE = "application/x-www-form-urlencoded";
const HTTP_CLIENT_ID_REFUSED =
  "This app's client id is an http:// URL. Its metadata document must be served over https " +
  "(http only on this computer, while the gateway runs locally with npm start).";

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };
type SignInContext = Context<{ Bindings: Bindings }>;
/** Where a grant is issued: the library, its namespace, the provider, the audit trail. */
function grantPlace(
  c: SignInContext,
  on: On,
  oauth: OAuthHelpers,
): Pick<IssueOptions, "oauth" | "kv" | "issuer" | "audit"> {
  return { oauth, kv: libraryKv(c.env), issuer: on.signIn.issuer, audit: auditSinkOf(c.env, c.executionCtx) };
}

/** The library's expected failures as pages or redirects; anything else is a bug or an outage (500). */
async function answered(run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    const { AuthorizationError, CimdFetchError } = await oauthLibrary();
    if (error instanceof AuthorizationError && error.redirectTo) return Response.redirect(error.redirectTo, 302);
    if (error instanceof AuthorizationError)
      return stopPage(400, "Sign-in request refused", `${error.description}. Start again from your app.`);
    if (error instanceof CimdFetchError)
      return stopPage(
        400,
        "App not verified",
        "This app's metadata document could not be fetched or is not valid, so it cannot be signed in.",
      );
    throw error;
  }
}

function isLoginData(value: unknown): value is LoginData {
  return isObject(value) && typeof value["verifier"] === "string" && typeof value["nonce"] === "string";
}

/** GET /oauth/authorize: the client's request checked by the library, then the browser to the provider. */
async function authorize(c: SignInContext, on: On): Promise<Response> {
  const clientId = new URL(c.req.url).searchParams.get("client_id") ?? "";
  if (clientId.startsWith("http://") && !runsLocally(on.origin))
    return stopPage(400, "App not verified", HTTP_CLIENT_ID_REFUSED);
  const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
  const request = await oauth.parseAuthRequest(c.req.raw);
  if (on.signIn.provider === "cloudflare-access") {
    const user = await accessUser(on.signIn, c.req.raw);
    if (!user.ok) return loginRefused(user);
    return afterLogin(c, on, oauth, request, new Headers(), user.value);
  }
  const login = await loginRedirect(on.signIn, c.env, `${on.origin}${IDP_CALLBACK_PATH}`);
  if (!login.ok) {
    console.warn(`mcp-edge-gateway: client sign-in could not start: ${login.detail}`);
    return stopPage(
      login.reason === "not-set-up" ? 503 : 502,
      "Sign-in unavailable",
      "The gateway cannot reach its identity provider right now; the gateway's log has the cause.",
    );
  }
  const { state, headers } = await oauth.beginUpstream(request, { data: login.value.data });
  headers.set("location", await login.value.url(state));
  headers.set("cache-control", "no-store");
  return new Response(null, { status: 302, headers });
}

/** GET /oauth/sign-in/callback: the provider's answer; the consent page for the user it names. */
async function callback(c: SignInContext, on: On): Promise<Response> {
  const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
  const { authorizationErrorRedirect } = await oauthLibrary();
  const resumed = await oauth.finishUpstream<unknown>(c.req.raw);
  const url = new URL(c.req.url);
  if (url.searchParams.has("error") || !isLoginData(resumed.data)) {
    resumed.headers.set("location", authorizationErrorRedirect(resumed.request, "access_denied"));
    return new Response(null, { status: 302, headers: resumed.headers });
  }
  const user = await finishLogin(on.signIn, c.env, url, `${on.origin}${IDP_CALLBACK_PATH}`, resumed.data);
  if (!user.ok) return loginRefused(user);
  return afterLogin(c, on, oauth, resumed.request, resumed.headers, user.value);
}

/** The page of a login the gateway refused (the person's fault or the provider's). */
function loginRefused(problem: LoginProblem): Response {
  console.warn(`mcp-edge-gateway: client sign-in refused at the login: ${problem.reason}`);
  const status = problem.reason === "not-allowed" ? 403 : problem.reason === "refused" ? 400 : 502;
  return stopPage(status, status === 403 ? "Not allowed" : "Sign-in failed", problem.detail);
}

/**
 * Once the user is known: a code at once when a live grant covers the request (remembered consent), else the consent
 * page.
 */
async function afterLogin(
  c: SignInContext,
  on: On,
  oauth: OAuthHelpers,
  request: AuthRequest,
  headers: Headers,
  user: SignedInUser,
): Promise<Response> {
  if (await rememberedGrant(on, oauth, request, user)) {
    const redirectTo = await issueGrant({ ...grantPlace(c, on, oauth), request, user, by: "remembered consent" });
    headers.set("location", redirectTo);
    return new Response(null, { status: 302, headers });
  }
  return showConsent(c, on, oauth, request, headers, user);
}

/** True when a live grant of this user already covers the request (remembered-consent.ts). */
async function rememberedGrant(
  on: On,
  oauth: OAuthHelpers,
  request: AuthRequest,
  user: SignedInUser,
): Promise<boolean> {
  const grants = await userGrants(oauth, await libraryUserId(on.signIn.issuer, user.principal));
  const [aggregated, ...perUpstream] = resourcesOf(on.auth, on.origin, on.upstreams);
  return coveringGrant(grants, request, aggregated!, perUpstream) !== undefined;
}

async function showConsent(
  c: SignInContext,
  _on: On,
  oauth: OAuthHelpers,
  request: Awaited<ReturnType<OAuthHelpers["parseAuthRequest"]>>,
  cleared: Headers,
  user: SignedInUser,
): Promise<Response> {
  const facts = await oauth.describeConsent(request);
  const consent = await oauth.beginConsent(request);
  for (const cookie of cleared.getSetCookie()) consent.headers.append("set-cookie", cookie);
  const config = gatewayConfig(c.env);
  const all = config.upstreams.ok ? config.upstreams.value : [];
  const roles = await currentRoles(user, c.env.GATEWAY_KV, config.documentCacheTtlMs);
  const reached = await reachableUpstreams(c.env.GATEWAY_KV, config.documentCacheTtlMs, roles, all);
  const sealed = await sealState(sessionSecret(c.env), CONSENT_PURPOSE, consent.handle, CONSENT_TTL_MS, user);
  return consentPage(
    {
      clientName: facts.clientName,
      ...(facts.clientDomain !== undefined ? { clientDomain: facts.clientDomain } : {}),
      redirectHost: facts.redirectHost,
      redirectUri: facts.redirectUri,
      redirectIsLoopback: facts.redirectIsLoopback,
      email: user.email,
      upstreams: reached.map((u) => u.name),
      handle: consent.handle,
      user: sealed,
    },
    consent.headers,
  );
}

/** POST /oauth/authorize: Allow completes the authorization (a code for the client), Deny answers access_denied. */
async function decide(c: SignInContext, on: On): Promise<Response> {
  const from = c.req.header("origin");
  if (from !== undefined && from !== on.origin)
    return stopPage(403, "Not allowed", "Consent is given on the gateway's own page.");
  const type = (c.req.header("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== FORM_TYPE)
    return stopPage(
      400,
      "Not a consent form",
      `Answer with the buttons of the consent page (a form sent as ${FORM_TYPE}).`,
    );
  const text = await readTextUpTo(c.req.raw.body, MAX_CONSENT_FORM_BYTES);
  if (text === undefined) return stopPage(413, "Form too large", "A consent form holds a handle and a decision.");
  const form = new URLSearchParams(text);
  const handle = form.get("handle") ?? "";
  const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
  if (form.get("decision") !== "allow") {
    const denied = await oauth.denyConsent(c.req.raw, handle);
    return new Response(null, { status: 302, headers: denied.headers });
  }
  // The user was sealed for this handle, and the handle is bound to this browser (the library checks its cookie).
  const opened = await openState(sessionSecret(c.env), CONSENT_PURPOSE, handle, form.get("user"));
  if (!opened.ok || !isSignedInUser(opened.value))
    return stopPage(400, "Consent expired", "This consent page expired or was altered. Start again from your app.");
  const user = opened.value;
  const approved = await oauth.approveConsent(c.req.raw, handle);
  const redirectTo = await issueGrant({ ...grantPlace(c, on, oauth), request: approved.request, user, by: "consent" });
  approved.headers.set("location", redirectTo);
  return new Response(null, { status: 302, headers: approved.headers });
}

/** Adds the routes; each answers only when AUTH.signIn is on, and passes on to the shell's 404 otherwise. */
export function addClientSignInRoutes(app: Hono<{ Bindings: Bindings }>): void {
  const when = (run: (c: SignInContext, on: On) => Promise<Response>) => async (c: SignInContext, next: Next) => {
    const on = signInOn(c);
    if (!on) return next();
    return answered(() => run(c, on));
  };
  const libraryFor = async (c: SignInContext, on: On) => {
    const server = await authorizationServer(on.auth, on.signIn, on.origin, on.upstreams);
    const env = await clientStepsEnv(c.env, on.origin);
    return (request: Request) =>
      server.fetch(request, env, c.executionCtx as Parameters<OAuthAuthorizationServer["fetch"]>[2]);
  };
  const library = when(async (c, on) => (await libraryFor(c, on))(c.req.raw));
  app.post(
    TOKEN_PATH,
    when(async (c, on) =>
      tokenEndpoint({
        request: c.req.raw,
        library: await libraryFor(c, on),
        kv: libraryKv(c.env),
        audit: auditSinkOf(c.env, c.executionCtx),
      }),
    ),
  );
  for (const path of [AUTHORIZATION_SERVER_METADATA_PATH, TOKEN_PATH, REGISTER_PATH]) app.all(path, library);
  app.get(AUTHORIZE_PATH, when(authorize));
  app.post(AUTHORIZE_PATH, when(decide));
  app.get(IDP_CALLBACK_PATH, when(callback));
  addGrantRoutes(app);
}
