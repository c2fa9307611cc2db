/**
 * Grants people can see and end (grants.ts), over HTTP:
 *
 *   GET    /oauth/grants                  the signed-in user's grants (the clients they allowed)
 *   DELETE /oauth/grants?grant=G          revokes one of them
 *   GET    /admin/client-grants           every signed-in user's grants, a page of users at a time (?cursor=)
 *   GET    /admin/client-grants?principal=P   one user's grants
 *   DELETE /admin/client-grants?principal=P&grant=G   revokes one
 *
 * A user's routes take the access token a client got from the gateway (any of its
 * resources): grants belong to users who signed in here, so an API key or an identity
 * provider's JWT has none (403). Revoking deletes the grant with its access and refresh
 * tokens: the client's next call is refused. Answers name clients and scopes, never a token.
 */
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { metadataUrl } from "../../auth/protected-resource";
import { authorizationServer, isSignedInUser, libraryEnv, libraryKv, oauthApi } from "./authorization-server";
import { auditGrant, auditSinkOf } from "./grant-audit";
import { indexedUsers, libraryUserId, revokeUserGrant, userGrants } from "./grants";
import { signInOn, type On } from "./sign-in-on";
import { looksLikeSignInToken } from "./access-token";

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };
type GrantContext = Context<{ Bindings: Bindings }>;

const NO_STORE = { "cache-control": "no-store" };
const SIGN_IN_OFF = "client sign-in is off (AUTH.signIn is not set): there are no grants";

const auditSink = (c: GrantContext) => auditSinkOf(c.env, c.executionCtx);

/** The library's user id of the caller (a valid access token of the gateway's), or the answer refusing it. */
type GrantCaller = { userId: string; principal: string; email: string };

async function callerUserId(c: GrantContext, on: On): Promise<GrantCaller | Response> {
  const header = c.req.header("authorization") ?? "";
  const token = header.startsWith("Bearer ") ? header.slice("Bearer ".length).trim() : "";
  const challenge = { "www-authenticate": `Bearer resource_metadata="${metadataUrl(on.origin, "/mcp")}"` };
  if (token === "") {
    const error =
      "Unauthorized: send the access token your client got from the gateway " + "(Authorization: Bearer <token>)";
    return c.json({ error }, 401, challenge);
  }
  if (!looksLikeSignInToken(token)) {
    const error =
      "grants belong to users who signed in through the gateway; " +
      "an API key or an identity provider's token has none";
    return c.json({ error }, 403);
  }
  const server = await authorizationServer(on.auth, on.signIn, on.origin, on.upstreams);
  const summary = await server.getOAuthApi(libraryEnv(c.env)).unwrapToken<unknown>(token);
  if (!summary || !isSignedInUser(summary.grant.props)) {
    const error = "the access token is not valid (expired or revoked): sign in again from your client";
    return c.json({ error }, 401, challenge);
  }
  const { principal, email } = summary.grant.props;
  return { userId: summary.userId, principal, email };
}

/** The user's routes, added to the shell (answering only when sign-in is on). */
export function addGrantRoutes(app: Hono<{ Bindings: Bindings }>): void {
  app.get("/oauth/grants", async (c) => {
    const on = signInOn(c);
    if (!on) return c.json({ error: SIGN_IN_OFF }, 404);
    const caller = await callerUserId(c, on);
    if (caller instanceof Response) return caller;
    const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
    return c.json({ grants: await userGrants(oauth, caller.userId) }, 200, NO_STORE);
  });
  app.delete("/oauth/grants", async (c) => {
    const on = signInOn(c);
    if (!on) return c.json({ error: SIGN_IN_OFF }, 404);
    const caller = await callerUserId(c, on);
    if (caller instanceof Response) return caller;
    const grantId = c.req.query("grant");
    if (!grantId) {
      return c.json({ error: "name the grant: DELETE /oauth/grants?grant=<id> (GET /oauth/grants lists them)" }, 400);
    }
    const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
    const revoked = await revokeUserGrant(oauth, caller.userId, grantId);
    if (!revoked) return c.json({ error: `you have no grant "${grantId}"` }, 404);
    const { principal, email } = caller;
    auditGrant(auditSink(c), { kind: "revoke", principal, email, clientId: revoked.clientId, grantId, by: "user" });
    return c.json({ revoked }, 200, NO_STORE);
  });
}

/** The operator's routes, to mount at `/client-grants` of the admin app. */
export function createClientGrantRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();
  routes.get("/", async (c) => {
    const on = signInOn(c);
    if (!on) return c.json({ error: SIGN_IN_OFF }, 404);
    const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
    const principal = c.req.query("principal");
    if (principal) {
      const grants = await userGrants(oauth, await libraryUserId(on.signIn.issuer, principal));
      return c.json({ users: [{ principal, grants }] }, 200, NO_STORE);
    }
    const page = await indexedUsers(libraryKv(c.env), c.req.query("cursor") || undefined);
    const users = await Promise.all(
      page.users.map(async ({ principal, email, userId }) => ({
        principal,
        email,
        grants: await userGrants(oauth, userId),
      })),
    );
    const listed = users.filter((user) => user.grants.length > 0);
    const body = page.cursor === undefined ? { users: listed } : { users: listed, cursor: page.cursor };
    return c.json(body, 200, NO_STORE);
  });
  routes.delete("/", async (c) => {
    const on = signInOn(c);
    if (!on) return c.json({ error: SIGN_IN_OFF }, 404);
    const principal = c.req.query("principal");
    const grantId = c.req.query("grant");
    if (!principal || !grantId) {
      return c.json({ error: "name the grant: DELETE /admin/client-grants?principal=<principal>&grant=<id>" }, 400);
    }
    const oauth = await oauthApi(c.env, on.auth, on.signIn, on.origin, on.upstreams);
    const revoked = await revokeUserGrant(oauth, await libraryUserId(on.signIn.issuer, principal), grantId);
    if (!revoked) return c.json({ error: `"${principal}" has no grant "${grantId}"` }, 404);
    const { email, clientId } = revoked;
    auditGrant(auditSink(c), { kind: "revoke", principal, email, clientId, grantId, by: "admin" });
    return c.json({ revoked }, 200);
  });
  return routes;
}
