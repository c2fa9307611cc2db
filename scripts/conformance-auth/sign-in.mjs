/**
 * The user of ./client.mjs signing in: opens the sign-in link the gateway gave, confirms
 * the gateway's page (its form, posted to where the page says), and follows every redirect
 * with a cookie jar of its own (the gateway binds a flow to the browser that began it),
 * through the authorization server (the conformance scenarios' approve at once) and back to
 * the gateway, until a page is shown. No path is assumed: where to go next is always what
 * the last answer said. Signed in when that last page is the gateway's, with status 200.
 */

/** Redirects and forms one sign-in may take before it is given up. */
const MAX_STEPS = 20;
/** How long one request of the browser may take. */
const REQUEST_TIMEOUT_MS = 15_000;

/** One browser: its cookies by host, kept as a browser would for these loopback hosts. */
class Browser {
  jar = new Map();

  cookieHeader(url) {
    const cookies = this.jar.get(url.host);
    if (!cookies || cookies.size === 0) return {};
    return { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }

  keep(url, response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      if (at <= 0) continue;
      if (!this.jar.has(url.host)) this.jar.set(url.host, new Map());
      this.jar.get(url.host).set(pair.slice(0, at).trim(), pair.slice(at + 1));
    }
  }

  async request(href, init = {}) {
    const url = new URL(href);
    const headers = { ...this.cookieHeader(url), ...init.headers };
    const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const response = await fetch(url, { ...init, headers, redirect: "manual", signal });
    this.keep(url, response);
    return response;
  }
}

/** The character references the gateway's pages (hono's html) write. */
const ENTITIES = { "&amp;": "&", "&quot;": '"', "&#39;": "'", "&lt;": "<", "&gt;": ">" };
const decode = (text) => text.replace(/&(?:amp|quot|#39|lt|gt);/g, (entity) => ENTITIES[entity]);

/** The form of `page` (served at `at`) as a browser submits it: its action and its fields. */
function formOf(page, at) {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(page);
  if (!form) return undefined;
  const attribute = (tag, name) => new RegExp(`\\b${name}="([^"]*)"`, "i").exec(tag)?.[1];
  const action = new URL(decode(attribute(form[1], "action") ?? ""), at).href;
  const method = (attribute(form[1], "method") ?? "get").toUpperCase();
  const fields = new URLSearchParams();
  for (const [input] of form[2].matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(input, "name");
    if (name !== undefined) fields.append(decode(name), decode(attribute(input, "value") ?? ""));
  }
  return { action, method, fields };
}

/**
 * Signs in through `link` (a gateway's sign-in link); resolves once the gateway showed its
 * page saying so, rejects with where and why the sign-in stopped otherwise.
 * @param {string} link
 * @param {(line: string) => void} log
 */
export async function signIn(link, log) {
  const browser = new Browser();
  const gateway = new URL(link).origin;
  let next = { href: link, init: {} };
  const visited = [];
  for (let step = 0; step < MAX_STEPS; step++) {
    const response = await browser.request(next.href, next.init);
    const at = new URL(next.href);
    visited.push(`${next.init.method ?? "GET"} ${at.origin}${at.pathname} ${response.status}`);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      next = { href: new URL(location, at).href, init: {} };
      continue;
    }
    const page = await response.text();
    const form = response.status === 200 ? formOf(page, at) : undefined;
    if (form) {
      const body = form.fields.toString();
      const headers = { "content-type": "application/x-www-form-urlencoded", origin: at.origin };
      next =
        form.method === "POST"
          ? { href: form.action, init: { method: "POST", body, headers } }
          : { href: `${form.action.split("?")[0]}?${body}`, init: {} };
      continue;
    }
    const title = /<title>([^<]*)<\/title>/i.exec(page)?.[1] ?? page.slice(0, 200);
    log(`sign-in: ${visited.join(" -> ")}: "${decode(title)}"`);
    if (at.origin === gateway && response.status === 200) return;
    throw new Error(`the sign-in ended at ${at.origin}${at.pathname} with HTTP ${response.status}: ${decode(title)}`);
  }
  throw new Error(`the sign-in took more than ${MAX_STEPS} steps: ${visited.join(" -> ")}`);
}
