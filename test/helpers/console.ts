/**
 * The admin console driven through the Worker's fetch, as a browser would: sign in with
 * the admin token (a form POST from the console's own origin), then send the session
 * cookie and the page's CSRF token.
 */
import { gatewayFetch, type Vars } from "./gateway";
import { ADMIN_VARS, TEST_ADMIN_TOKEN } from "./admin";

export const CONSOLE_ORIGIN = "http://gateway.test";

/** A signed-in console session: its cookie (name=value) and CSRF token. */
export type ConsoleSignIn = { cookie: string; csrf: string; setCookie: string };

/**
 * The request a browser on `origin` sends for a console form; `origin` null sends no
 * Origin header (some browsers send none on a same-origin fetch), `referer` a Referer.
 */
export function formInit(
  fields: Record<string, string>,
  cookie: string | undefined,
  origin: string | null = CONSOLE_ORIGIN,
  referer?: string,
): RequestInit {
  return {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(origin !== null ? { origin } : {}),
      ...(referer ? { referer } : {}),
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  };
}

/** The CSRF token a console page carries for its script. */
export function csrfOf(html: string): string {
  const found = /<meta name="csrf-token" content="([0-9a-f]+)"/.exec(html);
  if (!found) throw new Error("the page carries no CSRF token");
  return found[1]!;
}

/** Signs in with the admin token and reads the CSRF token off the Overview page. */
export async function signIn(vars: Vars = {}, base = CONSOLE_ORIGIN): Promise<ConsoleSignIn> {
  const response = await gatewayFetch(
    `${base}/admin/console/sign-in`,
    formInit({ token: TEST_ADMIN_TOKEN }, undefined, base),
    { ...ADMIN_VARS, ...vars },
  );
  const setCookie = response.headers.get("set-cookie") ?? "";
  if (response.status !== 303 || setCookie === "")
    throw new Error(`sign-in: ${response.status} ${await response.text()}`);
  const cookie = setCookie.split(";")[0]!;
  const page = await gatewayFetch(`${base}/admin/console/`, { headers: { cookie } }, { ...ADMIN_VARS, ...vars });
  return { cookie, csrf: csrfOf(await page.text()), setCookie };
}

/** GETs a console page with the session's cookie (and any other `headers`). */
export function consoleGet(
  path: string,
  session: ConsoleSignIn | undefined,
  vars: Vars = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  return gatewayFetch(
    `${CONSOLE_ORIGIN}/admin/console${path}`,
    { redirect: "manual", headers: { ...headers, ...(session ? { cookie: session.cookie } : {}) } },
    { ...ADMIN_VARS, ...vars },
  );
}

/** POSTs a console form with the session's cookie (and, unless given otherwise, its CSRF token). */
export function consolePost(
  path: string,
  fields: Record<string, string>,
  session: ConsoleSignIn | undefined,
  options: { origin?: string | null; referer?: string; vars?: Vars } = {},
): Promise<Response> {
  const withCsrf = session && !("csrf" in fields) ? { csrf: session.csrf, ...fields } : fields;
  return gatewayFetch(
    `${CONSOLE_ORIGIN}/admin/console${path}`,
    formInit(withCsrf, session?.cookie, options.origin, options.referer),
    { ...ADMIN_VARS, ...options.vars },
  );
}
