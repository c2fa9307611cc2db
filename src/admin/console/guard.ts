/**
 * What every console response and every state-changing console request must pass:
 * security headers (a strict Content-Security-Policy with no inline script and
 * `frame-ancestors 'none'`, no caching, no referrer), and for anything but GET and HEAD
 * the browser's Origin equal to the console's own and the session's CSRF token, sent
 * as a form field (`csrf`) or the `x-csrf-token` header.
 *
 * The console checks the origin itself rather than through ALLOWED_ORIGINS: that list says
 * which other sites' pages may call /mcp, and a deployed console is same-origin on a host
 * that is not loopback, which the MCP endpoint's DNS-rebinding rule would refuse.
 */

/** The console's Content-Security-Policy: its own script and style files only, nothing inline, never framed. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every console response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
};

/** Why a state-changing request is refused. */
export type Refusal = { reason: "foreign-origin" | "csrf"; message: string };

/** Undefined when the request comes from the console's own pages; else why not. */
export function checkOrigin(request: Request): Refusal | undefined {
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  const own = new URL(request.url).origin;
  if (origin !== own || (site !== null && site !== "same-origin")) {
    return { reason: "foreign-origin", message: `Forbidden: a change to the console must come from its own pages (${own}); this request came from ${origin ?? "no origin"}` };
  }
  return undefined;
}

/** Undefined when `given` is the session's CSRF token; else the refusal. */
export function checkCsrf(expected: string, given: string | undefined): Refusal | undefined {
  if (given !== undefined && given.length === expected.length) {
    let difference = 0;
    for (let i = 0; i < expected.length; i++) difference |= expected.charCodeAt(i) ^ given.charCodeAt(i);
    if (difference === 0) return undefined;
  }
  return { reason: "csrf", message: "Forbidden: the form's CSRF token is missing or stale; reload the page and try again" };
}
