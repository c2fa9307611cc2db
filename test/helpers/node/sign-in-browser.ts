/**
 * A browser-less user for the tests of per-user sign-in, in workerd and in Node alike:
 * opens a sign-in link, confirms the gateway's page (it names whom the link signs in),
 * follows the redirects with a cookie jar of its own (one per "browser"), signs in at the
 * fixture authorization server's login form (test/fixtures/oauth-upstream.ts) as a given
 * user, and stops at the gateway's callback (so a test may alter it) or completes it.
 */

const MAX_STEPS = 20;

/** How the browser sends one request (redirects are never followed by it: the browser does). */
export type BrowserSend = (
  href: string,
  init: { method?: string; body?: string; headers: Record<string, string> },
) => Promise<Response>;

/** One browser: its cookies by host. */
export class SignInBrowser {
  private readonly jar = new Map<string, Map<string, string>>();

  private readonly send: BrowserSend;

  // Fields assigned by hand, not parameter properties: Node runs this file stripped of types (bench:auth).
  constructor(send: BrowserSend = (href, init) => fetch(href, { ...init, redirect: "manual" })) {
    this.send = send;
  }

  private cookieHeader(url: URL): Record<string, string> {
    const cookies = this.jar.get(url.host);
    return cookies && cookies.size > 0 ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") } : {};
  }

  private keep(url: URL, response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      let cookies = this.jar.get(url.host);
      if (!cookies) {
        cookies = new Map();
        this.jar.set(url.host, cookies);
      }
      cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
  }

  /** One request as this browser. */
  async request(
    href: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const url = new URL(href);
    const response = await this.send(href, { ...init, headers: { ...this.cookieHeader(url), ...init.headers } });
    this.keep(url, response);
    return response;
  }

  /** Submits the gateway's confirmation form (`page`, served at `url`), as a browser would: same-origin POST. */
  confirm(url: string, page: string): Promise<Response> {
    const link = /name="link" value="([^"]*)"/.exec(page)?.[1]?.replaceAll("&amp;", "&");
    if (link === undefined) throw new Error("the sign-in page has no link field");
    return this.request(url, {
      method: "POST",
      body: new URLSearchParams({ link }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin },
    });
  }

  /** Opens `link` (the gateway's page) and continues, returning the answer to the POST (303 to the authorization server). */
  async start(link: string): Promise<Response> {
    const shown = await this.request(link);
    const text = await shown.text();
    if (shown.status !== 200) return new Response(text, { status: shown.status, headers: shown.headers });
    return this.confirm(link, text);
  }

  /**
   * Opens `link` and signs in as `user`, following redirects until the authorization server
   * sends the browser back to the gateway's callback; returns that callback URL (not yet opened).
   */
  async signInUntilCallback(link: string, user: string): Promise<string> {
    let next = link;
    for (let step = 0; step < MAX_STEPS; step++) {
      const response = await this.request(next);
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        const target = new URL(location, next).href;
        await response.body?.cancel();
        if (target.includes("/oauth/upstream/callback")) return target;
        next = target;
        continue;
      }
      const text = await response.text();
      const form = text.includes("data-sign-in-confirm")
        ? await this.confirm(next, text)
        : text.includes('name="login"')
          ? await this.request(next, {
              method: "POST",
              body: new URLSearchParams({ login: user }).toString(),
              headers: { "content-type": "application/x-www-form-urlencoded" },
            })
          : undefined;
      const to = form?.headers.get("location");
      await form?.body?.cancel();
      if (response.status !== 200 || !to)
        throw new Error(`sign-in stopped at ${next}: HTTP ${response.status}/${form?.status} ${text.slice(0, 300)}`);
      const target = new URL(to, next).href;
      if (target.includes("/oauth/upstream/callback")) return target;
      next = target;
    }
    throw new Error("sign-in did not reach the callback");
  }

  /** Signs in as `user` through `link`, completing the callback; returns the callback's answer. */
  async signIn(link: string, user: string): Promise<Response> {
    return this.request(await this.signInUntilCallback(link, user));
  }
}
