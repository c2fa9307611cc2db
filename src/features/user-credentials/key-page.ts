/**
 * The key page's two answers (user-key-page.ts routes to them):
 *
 *   GET  /oauth/upstream/<name>/key?link=…   says whom the key is for, asks for it
 *   POST /oauth/upstream/<name>/key          the key stored sealed for the link's principal; the
 *                                            waiting call (if any) is told, as after a sign-in
 *
 * CSRF: the form is accepted only with the random value of a cookie the GET set
 * (`SameSite=Strict`, HttpOnly) repeated in the form, from the gateway's own origin, with a
 * link not used yet. The key is never shown back, logged or put in an audit event.
 * Bundled into the module loaded on demand (lazy-entry.ts): what needs the gateway's state
 * (its configuration, personas, the audit trail, the rendezvous) comes in `KeyRoute`.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { UpstreamConfig } from "../../config/upstreams";
import type { UserKeyAuth } from "../../config/user-credential-auth";
import { randomHexId } from "../../core/ids";
import { writeUserKey } from "../../storage/upstream-tokens";
import { readSignInLink, useSignInLink } from "../upstream-sign-in/sign-in-link";
import { FORM_PAGE_HEADERS, invalidLink, page, shownPrincipal, startForm } from "../upstream-sign-in/sign-in-routes";

/** The longest key accepted (personal access tokens and API keys are far shorter). */
export const MAX_USER_KEY_CHARS = 4_096;
/** How long the form may stay open (the link's own lifetime). */
const FORM_TTL_S = 10 * 60;
const FORM_COOKIE = "mcp_gw_user_key_form";
/** What a key may hold: visible ASCII, as an HTTP header value without spaces. */
const KEY_CHARS = /^[\x21-\x7E]+$/;

/** What the answers need of the gateway, resolved by the main module. */
export type KeyRoute = {
  readonly kv: KVNamespace | undefined;
  readonly secret: string;
  /** The `userKey` upstream the path names, if there is one. */
  readonly upstream: UpstreamConfig | undefined;
  /** Whether a persona with `roles` reaches the upstream. */
  readonly reaches: (roles: readonly string[]) => Promise<boolean>;
  /** A key was saved for `principal` through the link `nonce`: audit it, wake the waiting call. */
  readonly saved: (principal: string, nonce: string) => Promise<void>;
};

function cookieOf(header: string | null): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === FORM_COOKIE && value) return value;
  }
  return undefined;
}

/**
 * The answer to `request` (GET or POST of the key page).
 *
 * @example
 * return keyRoute(c.req.raw, { kv, secret, upstream, reaches, saved });
 */
export async function keyRoute(request: Request, route: KeyRoute): Promise<Response> {
  const { kv, upstream } = route;
  if (!kv) return page(503, "Keys unavailable", "The gateway has no KV namespace to keep keys in.");
  if (upstream?.auth?.type !== "userKey")
    return page(404, "Unknown upstream", "No upstream of this name takes users' own keys.");
  const url = new URL(request.url);
  if (request.method === "GET") {
    const link = url.searchParams.get("link") ?? undefined;
    const read = await readSignInLink(route.secret, upstream.name, link);
    if (!read.ok) return invalidLink(read.reason);
    const shown = shownPrincipal(read.value.principal);
    const parts = { upstream: { name: upstream.name, auth: upstream.auth }, shown, link: link! };
    return keyPage({ ...parts, csrf: randomHexId(), secure: url.protocol === "https:" });
  }
  const from = request.headers.get("origin");
  if ((from !== null && from !== url.origin) || request.headers.get("sec-fetch-site") === "cross-site")
    return page(403, "Not allowed", "A key is saved from the gateway's own page.");
  const form = await startForm(request);
  if (form instanceof Response) return form;
  const cookie = cookieOf(request.headers.get("cookie"));
  if (cookie === undefined || form.get("csrf") !== cookie)
    return page(403, "Not allowed", "This form was not opened in this browser; open the link again.");
  const key = (form.get("key") ?? "").trim();
  if (!KEY_CHARS.test(key) || key.length > MAX_USER_KEY_CHARS)
    return page(
      400,
      "Not a key",
      `A key is one word of visible characters (at most ${MAX_USER_KEY_CHARS}); paste it again.`,
    );
  const link = await useSignInLink(kv, route.secret, upstream.name, form.get("link") ?? undefined);
  if (!link.ok) return invalidLink(link.reason);
  if (!(await route.reaches(link.value.roles)))
    return page(403, "Not allowed", "Your persona does not reach this upstream.");
  const { principal } = link.value;
  const record = { key, resource: upstream.url, connectedAt: Date.now() };
  await writeUserKey(kv, route.secret, principal, upstream.name, record);
  await route.saved(principal, link.value.nonce);
  const done = page(
    200,
    "Key saved",
    `Your key for ${upstream.name} is saved. Close this tab and retry in your client.`,
  );
  done.headers.append("set-cookie", `${FORM_COOKIE}=; Path=/oauth/upstream/; HttpOnly; SameSite=Strict; Max-Age=0`);
  return done;
}

/** What the page shows and sets. */
type KeyPageParts = {
  readonly upstream: { readonly name: string; readonly auth: UserKeyAuth };
  /** The principal, as the sign-in pages show one (shownPrincipal of upstream-sign-in). */
  readonly shown: HtmlEscapedString | Promise<HtmlEscapedString>;
  readonly link: string;
  readonly csrf: string;
  readonly secure: boolean;
};

/** The page for `upstream`'s key, for the principal `shown`, through `link`, with the form's `csrf` value. */
function keyPage({ upstream, shown, link, csrf, secure }: KeyPageParts): Response {
  const keyUrl = upstream.auth.keyUrl;
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
