/**
 * The pages of signing in: the consent page (which client asks, where its answer goes,
 * who is signed in and what the client will reach, with Allow and Deny) and short pages
 * for what stops a sign-in. Everything a client wrote (its name, its domain, its redirect
 * host) is hostile text: hono's `html` escapes it, and its invisible and bidi characters
 * are shown as their code points (admin/console/visible-text.tsx), so "\u202Eppa" cannot
 * pass for another app's name. Nothing here ever shows a code or a token.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { visibleParts } from "../../admin/console/visible-text";
import { AUTHORIZE_PATH } from "./authorization-server";

/** Characters of a client's name shown; the rest is cut (a name is not a document). */
const MAX_SHOWN_CHARS = 200;
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
};

/**
 * The consent page's Content-Security-Policy. Browsers check `form-action` on every
 * redirect a form's answer takes, so the form may go to the gateway and, through its
 * redirect, to the client's redirect URI only: its origin (`http://127.0.0.1:33418`), or
 * its scheme for a native app's private-use URI (`com.example.app:`). The URI was checked
 * against the client's registration by the library; a URL's origin and scheme hold no
 * character that could end the directive.
 */
export function consentPolicy(redirectUri: string): string {
  const url = new URL(redirectUri);
  const target = url.origin !== "null" ? url.origin : url.protocol;
  return `default-src 'none'; form-action 'self' ${target}; frame-ancestors 'none'`;
}

/** Client-written text, escaped, its invisible characters shown. */
function shown(text: string): HtmlEscapedString | Promise<HtmlEscapedString> {
  const cut = text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
  return html`${visibleParts(cut).map((part) => (part.kind === "text" ? part.text : html`<code>[${part.shown}]</code>`))}`;
}

/** A page saying why a sign-in stopped. */
export function stopPage(status: number, title: string, text: string): Response {
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
  return new Response(String(body), { status, headers: PAGE_HEADERS });
}

export type ConsentFacts = {
  readonly clientName: string;
  /** A Client ID Metadata Document client's domain (verified: its client id is a URL there). */
  readonly clientDomain?: string;
  readonly redirectHost: string;
  /** Where Allow and Deny send the browser: the consent form's answer redirects there. */
  readonly redirectUri: string;
  readonly redirectIsLoopback: boolean;
  readonly email: string;
  /** The upstreams the user's persona reaches. */
  readonly upstreams: readonly string[];
  /** The library's consent handle, and the signed-in user sealed for this handle. */
  readonly handle: string;
  readonly user: string;
};

/** The consent page; `headers` are the library's (the cookie binding the handle to this browser, no framing). */
export async function consentPage(facts: ConsentFacts, headers: Headers): Promise<Response> {
  const name = shown(facts.clientName);
  const publisher =
    facts.clientDomain !== undefined
      ? html`<p>Published by <strong>${shown(facts.clientDomain)}</strong>.</p>`
      : html`<p>This app registered itself: its name is not verified.</p>`;
  const loopback = facts.redirectIsLoopback
    ? html`<p><strong>This sends access to an app on your computer.</strong> Allow only if you just started signing in from it.</p>`
    : "";
  const reach = facts.upstreams.length > 0 ? facts.upstreams.join(", ") : "no upstream yet";
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Allow access to the MCP gateway?</title></head><body>
<h1>Allow <span data-client-name>${name}</span> to use the MCP gateway as you?</h1>
${publisher}
<p>Access will be sent to <strong data-redirect-host>${shown(facts.redirectHost)}</strong>.</p>
${loopback}
<p>You are signed in as <strong>${shown(facts.email)}</strong>. The app will reach what you reach: ${reach}.</p>
<form method="post" action="${AUTHORIZE_PATH}" data-consent>
<input type="hidden" name="handle" value="${facts.handle}">
<input type="hidden" name="user" value="${facts.user}">
<button type="submit" name="decision" value="allow">Allow</button> <button type="submit" name="decision" value="deny">Deny</button>
</form>
</body></html>`;
  for (const [header, value] of Object.entries(PAGE_HEADERS)) if (!headers.has(header)) headers.set(header, value);
  headers.set("content-security-policy", consentPolicy(facts.redirectUri));
  // Under no-referrer a browser sends `Origin: null` with the form, which the gateway refuses
  // (routes.ts checks the form came from its own page); same-origin still sends nothing elsewhere.
  headers.set("referrer-policy", "same-origin");
  return new Response(String(await body), { status: 200, headers });
}
