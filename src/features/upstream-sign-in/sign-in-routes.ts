/**
 * The HTTP side of signing users in to upstreams (upstream/oauth/):
 *
 *   GET    /oauth/upstream/client-metadata.json   the gateway's Client ID Metadata Document
 *   GET    /oauth/upstream/<name>/start?link=…     a sign-in link opened: says whom it signs in, asks to continue
 *   POST   /oauth/upstream/<name>/start           continue: the link is used up, redirect to the authorization server
 *   GET    /oauth/upstream/callback/<name>/<tag>  the authorization server's redirect back (one per upstream
 *                                                  and server; redirect-uri.ts)
 *   GET    /oauth/upstream/callback               the same, shared (clients by hand, metadata documents;
 *                                                  servers that send iss only)
 *   GET    /oauth/upstream/connections            the caller's own connections (same credential as /mcp)
 *   DELETE /oauth/upstream/connections?upstream=U revokes one of them
 *
 * Pages for the browser are short HTML; nothing here ever shows a token or a code.
 */
import type { Context } from "hono";
import type { Hono } from "../../admin/hono-app";
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { gatewayConfig } from "../../config/gateway-config";
import { sessionSecret } from "../../config/secrets";
import type { UpstreamConfig } from "../../config/upstreams";
import { API_KEYS } from "../api-keys/api-keys";
import { authenticate, authError, type TokenVerifierFor } from "../../auth/authenticate";
import type { Caller } from "../../context/call-context";
import { metadataUrl } from "../../auth/protected-resource";
import { errorResponse } from "../../core/errors";
import { discardRequestBody, readRequestTextUpTo } from "../../core/bounded-text";
import { reachableUpstreams } from "../personas/reachable-upstreams";
import { listConnections } from "../../storage/upstream-tokens";
import { beginSignIn, finishSignIn } from "./authorization-flow";
import { revokeConnection } from "../../upstream/oauth/access-token";
import { auditConnection } from "./connection-events";
import { clientMetadataDocument, CLIENT_METADATA_PATH } from "../../upstream/oauth/registration";
import { CALLBACK_PATH } from "../../upstream/oauth/redirect-uri";
import { signalSignIn } from "./sign-in-wait";
import { readSignInLink, useSignInLink } from "./sign-in-link";
import { servicesFor } from "../../shell/services";
import { visibleParts } from "../../admin/console/visible-text";

/**
 * The most a sign-in form's body may hold: one sealed link (a few KB: principal, roles,
 * what the upstream's challenge said) as application/x-www-form-urlencoded.
 */
export const MAX_START_BODY_BYTES = 64 * 1024;
const FORM_TYPE = "application/x-www-form-urlencoded";

type GatewayBindings = { GATEWAY_KV?: KVNamespace; [binding: string]: unknown };

/** A short HTML page for the browser (never cached, no referrer). */
export function page(status: number, title: string, text: string): Response {
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
  return new Response(String(body), {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}

/** The page for a link that does not open or was used. */
export function invalidLink(reason: "link-invalid" | "link-used"): Response {
  return reason === "link-used"
    ? page(
        410,
        "Link not valid",
        "This sign-in link was already used or has expired. Retry in your client for a new one.",
      )
    : page(
        400,
        "Link not valid",
        "This sign-in link is not valid (altered, expired, or for another upstream). Retry in your client for a new one.",
      );
}

/**
 * A principal as the confirm page shows it: invisible and bidi characters as their code
 * points (the console's list), so "\u202Eecila" cannot pass for "alice".
 */
export function shownPrincipal(principal: string): HtmlEscapedString | Promise<HtmlEscapedString> {
  const parts = visibleParts(principal).map((part) =>
    part.kind === "text" ? part.text : html`<code>[${part.shown}]</code>`,
  );
  return html`${parts}`;
}

function confirmPage(upstream: string, rawPrincipal: string, link: string): Response {
  const principal = shownPrincipal(rawPrincipal);
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in to ${upstream}</title></head><body>
<h1>Sign in to ${upstream}</h1>
<p>This connects your account at <strong>${upstream}</strong> to the gateway user <strong>${principal}</strong>: calls that user makes through the gateway will act as you at ${upstream}.</p>
<p>Continue only if you are ${principal} and asked for this in your MCP client. If someone sent you this link, close this page.</p>
<form method="post" data-sign-in-confirm><input type="hidden" name="link" value="${link}"><button type="submit">Continue to ${upstream}</button></form>
</body></html>`;
  return new Response(String(body), { status: 200, headers: FORM_PAGE_HEADERS });
}

/** The headers of a page holding a form: never cached, no referrer, never framed, posting only to the gateway. */
export const FORM_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
};

function oauthUpstreams(env: GatewayBindings): readonly UpstreamConfig[] {
  const parsed = gatewayConfig(env).upstreams;
  return parsed.ok ? parsed.value.filter((u) => u.auth?.type === "oauth") : [];
}

function services(env: GatewayBindings) {
  const kv = env.GATEWAY_KV;
  return kv ? { kv, secret: sessionSecret(env), env } : undefined;
}

function audit(
  env: GatewayBindings,
  waitUntil: (p: Promise<unknown>) => void,
  event: Parameters<typeof auditConnection>[2],
): void {
  if (gatewayConfig(env).audit.enabled) auditConnection(env["AUDIT_QUEUE"] as Queue | undefined, waitUntil, event);
}

/** Adds the routes to the shell's app; `verifierFor` checks the gateway's own access tokens as /mcp does. */
export function addUpstreamSignInRoutes(app: Hono<{ Bindings: GatewayBindings }>, verifierFor: TokenVerifierFor): void {
  app.get(CLIENT_METADATA_PATH, (c) =>
    c.json(clientMetadataDocument(new URL(c.req.url).origin), 200, { "cache-control": "public, max-age=300" }),
  );

  const callback = async (c: Context<{ Bindings: GatewayBindings }>): Promise<Response> => {
    const kept = services(c.env);
    if (!kept) return page(503, "Sign-in unavailable", "The gateway has no KV namespace to keep sign-ins in.");
    const all = oauthUpstreams(c.env);
    const done = await finishSignIn(
      new URL(c.req.url),
      c.req.header("cookie") ?? null,
      (name) => all.find((u) => u.name === name),
      kept,
    );
    if (!done.ok) {
      console.warn(`mcp-edge-gateway: upstream sign-in refused at the callback: ${done.reason}`);
      return page(400, "Sign-in failed", done.detail);
    }
    audit(c.env, (p) => c.executionCtx.waitUntil(p), {
      kind: "connect",
      principal: done.value.principal,
      upstream: done.value.upstream,
    });
    // A call that asked by elicitation/create waits for this sign-in: it runs again now.
    const waiting = servicesFor(c.env).inputRendezvous;
    if (waiting)
      await signalSignIn(waiting, done.value.link).catch((error: unknown) =>
        console.warn(`mcp-edge-gateway: telling the waiting call of a sign-in failed: ${String(error)}`),
      );
    return page(
      200,
      "Signed in",
      `You are signed in to ${done.value.upstream}. Close this tab and return to your client: it can retry now.`,
    );
  };
  app.get(CALLBACK_PATH, callback);
  app.get(`${CALLBACK_PATH}/:upstream/:tag`, callback);

  app.get("/oauth/upstream/connections", async (c) => {
    const caller = await callerOf(c.env, c.req.header("authorization"), c.req.url, verifierFor);
    if (caller instanceof Response) return caller;
    const kept = services(c.env);
    return c.json({ connections: kept ? await listConnections(kept.kv, caller) : [] }, 200, {
      "cache-control": "no-store",
    });
  });
  app.delete("/oauth/upstream/connections", async (c) => {
    const caller = await callerOf(c.env, c.req.header("authorization"), c.req.url, verifierFor);
    if (caller instanceof Response) return caller;
    const upstream = c.req.query("upstream");
    const kept = services(c.env);
    if (!upstream)
      return c.json({ error: "name the upstream: DELETE /oauth/upstream/connections?upstream=<name>" }, 400);
    const revoked =
      kept &&
      (await revokeConnection(
        oauthUpstreams(c.env).find((u) => u.name === upstream),
        upstream,
        caller,
        kept,
      ));
    if (!revoked) return c.json({ error: `you have no connection to "${upstream}"` }, 404);
    audit(c.env, (p) => c.executionCtx.waitUntil(p), { kind: "revoke", principal: caller, upstream, by: "user" });
    return c.json({ revoked: { upstream } });
  });

  // Opening a link only shows whom it signs in, and for which upstream: a link someone else
  // sent would connect *their* principal to the account signed in with (see docs/upstream-sign-in.md),
  // and link previews that fetch it do not use it up. The sign-in starts with the form's POST.
  app.get("/oauth/upstream/:name/start", async (c) => {
    const kept = services(c.env);
    if (!kept) return page(503, "Sign-in unavailable", "The gateway has no KV namespace to keep sign-ins in.");
    const name = c.req.param("name");
    const upstream = oauthUpstreams(c.env).find((u) => u.name === name);
    if (!upstream) return page(404, "Unknown upstream", "No upstream of this name asks users to sign in.");
    const link = c.req.query("link");
    const read = await readSignInLink(kept.secret, name, link);
    if (!read.ok) return invalidLink(read.reason);
    return confirmPage(name, read.value.principal, link!);
  });
  app.post("/oauth/upstream/:name/start", async (c) => {
    const kept = services(c.env);
    if (!kept) return page(503, "Sign-in unavailable", "The gateway has no KV namespace to keep sign-ins in.");
    const origin = new URL(c.req.url).origin;
    const from = c.req.header("origin");
    if (from !== undefined && from !== origin)
      return page(403, "Not allowed", "A sign-in starts from the gateway's own page.");
    const name = c.req.param("name");
    const upstream = oauthUpstreams(c.env).find((u) => u.name === name);
    if (!upstream) return page(404, "Unknown upstream", "No upstream of this name asks users to sign in.");
    const form = await startForm(c.req.raw);
    if (form instanceof Response) return form;
    const link = await useSignInLink(kept.kv, kept.secret, name, form.get("link") ?? undefined);
    if (!link.ok) return invalidLink(link.reason);
    // A persona that cannot reach the upstream never starts its sign-in (its roles are the link's).
    const config = gatewayConfig(c.env);
    const open = config.auth.ok && config.auth.value.mode === "off";
    if (
      !open &&
      (await reachableUpstreams(kept.kv, config.documentCacheTtlMs, link.value.roles, [upstream])).length === 0
    ) {
      return page(403, "Not allowed", "Your persona does not reach this upstream.");
    }
    const begun = await beginSignIn(upstream, link.value, origin, kept);
    if (!begun.ok) {
      console.warn(`mcp-edge-gateway: upstream "${name}": sign-in could not start: ${begun.detail}`);
      return page(
        502,
        "Sign-in could not start",
        `The gateway could not reach the sign-in service of ${name}; the gateway's log has the cause.`,
      );
    }
    return new Response(null, {
      status: 303,
      headers: {
        location: begun.value.location,
        "set-cookie": begun.value.cookie,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      },
    });
  });
}

/**
 * The confirm form's fields, read up to MAX_START_BODY_BYTES (never the whole of a larger
 * body), or the page refusing it: 413 past the limit, 400 for a body that is not the form's.
 * A refused body is drained first (core/bounded-text.ts), so a browser or script still
 * sending it reads the page rather than a dropped connection.
 */
export async function startForm(request: Request): Promise<URLSearchParams | Response> {
  const type = (request.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== FORM_TYPE) {
    await discardRequestBody(request);
    const text = `Continue with the button of the sign-in page (a form sent as ${FORM_TYPE}).`;
    return page(400, "Not a sign-in form", text);
  }
  const text = await readRequestTextUpTo(request, MAX_START_BODY_BYTES);
  if (text === undefined) {
    return page(413, "Form too large", `A sign-in form holds one link, at most ${MAX_START_BODY_BYTES / 1024} KB.`);
  }
  return new URLSearchParams(text);
}

/** The principal of a request to the user's own routes, or the 401/503 answer. */
async function callerOf(
  env: GatewayBindings,
  authorization: string | undefined,
  url: string,
  verifierFor: TokenVerifierFor,
): Promise<string | Response> {
  const caller = await requestCaller(env, authorization, url, verifierFor);
  return caller instanceof Response ? caller : caller.principal;
}

/**
 * Who sends a request outside /mcp with the same credential as /mcp (the user's own
 * connections here, approvers' decisions in features/approvals/), or the 401/500 answer.
 */
export async function requestCaller(
  env: GatewayBindings,
  authorization: string | undefined,
  url: string,
  verifierFor: TokenVerifierFor,
): Promise<Caller | Response> {
  const config = gatewayConfig(env);
  if (!config.auth.ok)
    return Response.json({ error: "AUTH is invalid; the gateway's log lists each problem" }, { status: 500 });
  const names = config.upstreams.ok ? config.upstreams.value.map((u) => u.name) : [];
  const signInToken = verifierFor(env, config.auth.value, new URL(url).origin, names, "");
  const found = await authenticate({
    authorization: authorization ?? null,
    auth: config.auth.value,
    kv: env.GATEWAY_KV,
    cacheTtlMs: config.documentCacheTtlMs,
    apiKeys: API_KEYS,
    route: "",
    signInToken,
  });
  if (found.ok) return found.value;
  return errorResponse(authError(found, metadataUrl(new URL(url).origin, "/mcp")));
}
