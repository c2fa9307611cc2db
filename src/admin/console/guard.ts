/**
 * What every console response and every state-changing console request must pass:
 * security headers (a strict Content-Security-Policy with no inline script and
 * `frame-ancestors 'none'`, no caching, no referrer to other sites), and for anything but GET and HEAD
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
  // "same-origin", not "no-referrer": with no-referrer Chromium sends a form POST with `Origin: null`, which the origin check refuses.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
};

/** Why a state-changing request is refused. */
export type Refusal = { reason: "foreign-origin" | "csrf"; message: string };

function refererOrigin(referer: string | null): string | null {
  if (referer === null) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

/**
 * Undefined when the request comes from the console's own pages; else why not. The
 * Origin header decides; a browser that sends none (some do for a same-origin fetch)
 * is judged by the origin of its Referer, which the console's Referrer-Policy keeps for
 * same-origin requests. A request with neither is refused.
 */
export function checkOrigin(request: Request): Refusal | undefined {
  const origin = request.headers.get("origin") ?? refererOrigin(request.headers.get("referer"));
  const site = request.headers.get("sec-fetch-site");
  const own = new URL(request.url).origin;
  if (origin !== own || (site !== null && site !== "same-origin")) {
    return {
      reason: "foreign-origin",
      message: `Forbidden: a change to the console must come from its own pages (${own}); this request came from ${origin ?? "no origin"}`,
    };
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
  return {
    reason: "csrf",
    message: "Forbidden: the form's CSRF token is missing or stale; reload the page and try again",
  };
}
