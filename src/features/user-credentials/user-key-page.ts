/**
 * The page where a user pastes their own key for a `userKey` upstream, reached by the same
 * sealed single-use sign-in link as an OAuth sign-in (features/upstream-sign-in/sign-in-link.ts):
 *
 *   GET  /oauth/upstream/<name>/key?link=…   says whom the key is for, asks for it
 *   POST /oauth/upstream/<name>/key          the key stored sealed for the link's principal; the
 *                                            waiting call (if any) is told, as after a sign-in
 *
 * CSRF: the form is accepted only with the random value of a cookie the GET set
 * (`SameSite=Strict`, HttpOnly) repeated in the form, from the gateway's own origin, with a
 * link not used yet. The key is never shown back, logged or put in an audit event; the
 * pages never hold it.
 */
import { html } from "hono/html";
import type { Hono } from "../../admin/hono-app";
import { gatewayConfig } from "../../config/gateway-config";
import { sessionSecret } from "../../config/secrets";
import type { UpstreamConfig } from "../../config/upstreams";
import { randomHexId } from "../../core/ids";
import { reachableUpstreams } from "../../policy/reachable-upstreams";
import { writeUserKey } from "../../storage/upstream-tokens";
import { servicesFor } from "../../shell/services";
import { auditConnection } from "../upstream-sign-in/connection-events";
import { readSignInLink, useSignInLink } from "../upstream-sign-in/sign-in-link";
import { FORM_PAGE_HEADERS, invalidLink, page, shownPrincipal, startForm } from "../upstream-sign-in/sign-in-routes";
import { signalSignIn } from "../upstream-sign-in/sign-in-wait";

/** The longest key accepted (personal access tokens and API keys are far shorter). */
export const MAX_USER_KEY_CHARS = 4_096;
/** How long the form may stay open (the link's own lifetime). */
const FORM_TTL_S = 10 * 60;
const FORM_COOKIE = "mcp_gw_user_key_form";
/** What a key may hold: visible ASCII, as an HTTP header value without spaces. */
const KEY_CHARS = /^[\x21-\x7E]+$/;

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };

function keyUpstream(env: Bindings, name: string): UpstreamConfig | undefined {
  const parsed = gatewayConfig(env).upstreams;
  return parsed.ok ? parsed.value.find((u) => u.name === name && u.auth?.type === "userKey") : undefined;
}

function cookieOf(header: string | undefined): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === FORM_COOKIE && value) return value;
  }
  return undefined;
}

function keyPage(upstream: UpstreamConfig, principal: string, link: string, csrf: string, secure: boolean): Response {
  const shown = shownPrincipal(principal);
  const keyUrl = upstream.auth?.type === "userKey" ? upstream.auth.keyUrl : undefined;
  const where = keyUrl ? html`<p>Create one at <a href="${keyUrl}" rel="noreferrer">${keyUrl}</a>.</p>` : "";
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Your key for ${upstream.name}</title></head><body>
<h1>Your key for ${upstream.name}</h1>
<p>Paste your own API key or personal access token for <strong>${upstream.name}</strong>. The gateway keeps it encrypted for the gateway user <strong>${shown}</strong> and sends it only to ${upstream.name}, on that user's calls. You can revoke it at any time.</p>
<p>Continue only if you are ${shown} and asked for this in your MCP client. If someone sent you this link, close this page.</p>${where}
<form method="post" data-user-key><input type="hidden" name="link" value="${link}"><input type="hidden" name="csrf" value="${csrf}">
<label>Key <input type="password" name="key" autocomplete="off" required maxlength="${MAX_USER_KEY_CHARS}"></label> <button type="submit">Save</button></form>
</body></html>`;
  return new Response(String(body), {
    status: 200,
    headers: {
      ...FORM_PAGE_HEADERS,
      "set-cookie": `${FORM_COOKIE}=${csrf}; Path=/oauth/upstream/; HttpOnly; SameSite=Strict; Max-Age=${FORM_TTL_S}${secure ? "; Secure" : ""}`,
    },
  });
}

/** Adds the key page's routes to the shell's app (a page route, before the MCP Origin guard). */
export function addUserKeyRoutes(app: Hono<{ Bindings: Bindings }>): void {
  app.get("/oauth/upstream/:name/key", async (c) => {
    const kv = c.env.GATEWAY_KV;
    if (!kv) return page(503, "Keys unavailable", "The gateway has no KV namespace to keep keys in.");
    const upstream = keyUpstream(c.env, c.req.param("name"));
    if (!upstream) return page(404, "Unknown upstream", "No upstream of this name takes users' own keys.");
    const link = c.req.query("link");
    const read = await readSignInLink(sessionSecret(c.env), upstream.name, link);
    if (!read.ok) return invalidLink(read.reason);
    const secure = new URL(c.req.url).protocol === "https:";
    return keyPage(upstream, read.value.principal, link!, randomHexId(), secure);
  });

  app.post("/oauth/upstream/:name/key", async (c) => {
    const kv = c.env.GATEWAY_KV;
    if (!kv) return page(503, "Keys unavailable", "The gateway has no KV namespace to keep keys in.");
    const origin = new URL(c.req.url).origin;
    const from = c.req.header("origin");
    if ((from !== undefined && from !== origin) || c.req.header("sec-fetch-site") === "cross-site")
      return page(403, "Not allowed", "A key is saved from the gateway's own page.");
    const upstream = keyUpstream(c.env, c.req.param("name"));
    if (!upstream) return page(404, "Unknown upstream", "No upstream of this name takes users' own keys.");
    const form = await startForm(c.req.raw);
    if (form instanceof Response) return form;
    const cookie = cookieOf(c.req.header("cookie"));
    if (cookie === undefined || form.get("csrf") !== cookie)
      return page(403, "Not allowed", "This form was not opened in this browser; open the link again.");
    const key = (form.get("key") ?? "").trim();
    if (!KEY_CHARS.test(key) || key.length > MAX_USER_KEY_CHARS)
      return page(
        400,
        "Not a key",
        `A key is one word of visible characters (at most ${MAX_USER_KEY_CHARS}); go back and paste it again.`,
      );
    const secret = sessionSecret(c.env);
    const link = await useSignInLink(kv, secret, upstream.name, form.get("link") ?? undefined);
    if (!link.ok) return invalidLink(link.reason);
    const config = gatewayConfig(c.env);
    const open = config.auth.ok && config.auth.value.mode === "off";
    if (!open && (await reachableUpstreams(kv, config.documentCacheTtlMs, link.value.roles, [upstream])).length === 0)
      return page(403, "Not allowed", "Your persona does not reach this upstream.");
    const { principal } = link.value;
    await writeUserKey(kv, secret, principal, upstream.name, { key, resource: upstream.url, connectedAt: Date.now() });
    if (config.audit.enabled)
      auditConnection(c.env.AUDIT_QUEUE, (p) => c.executionCtx.waitUntil(p), {
        kind: "connect",
        principal,
        upstream: upstream.name,
        detail: "key pasted",
      });
    // A call that asked by elicitation/create waits for this: it runs again now.
    const waiting = servicesFor(c.env).inputRendezvous;
    if (waiting)
      await signalSignIn(waiting, link.value.nonce).catch((error: unknown) =>
        console.warn(`mcp-edge-gateway: telling the waiting call of a saved key failed: ${String(error)}`),
      );
    const saved = page(
      200,
      "Key saved",
      `Your key for ${upstream.name} is saved. Close this tab and retry in your client.`,
    );
    saved.headers.append("set-cookie", `${FORM_COOKIE}=; Path=/oauth/upstream/; HttpOnly; SameSite=Strict; Max-Age=0`);
    return saved;
  });
}
