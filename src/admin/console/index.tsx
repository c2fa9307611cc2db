/** @jsxRuntime classic */
/** @jsx h */
/**
 * The admin console at /admin/console/: server-rendered pages over the admin API, for
 * operators who would rather not steer the gateway with curl. This file is the console's
 * shell: security headers on every answer, its script and style files, sign-in (the
 * admin token exchanged for a sealed session cookie), sign-out, and the checks every
 * other request passes (a live session; for a change, the console's own origin and the
 * session's CSRF token). The pages live one per file beside it.
 *
 * The admin token is read from a POSTed form field only: never from a URL, never stored
 * in the browser, never logged.
 */
import { h } from "./jsx";
import { Hono } from "../hono-app";
import { requestSource, type FailureRecorder } from "../../auth/failed-authentication";
import { adminTokenState, ADMIN_TOKEN_TOO_SHORT_MESSAGE } from "../../auth/admin-token";
import { adminRateLimiter, judgeAdminAttempt, throttledMessage } from "../../auth/admin-throttle";
import { sessionSecret } from "../../config/secrets";
import { GatewayError } from "../../core/errors";
import { readBodyBytes } from "../read-body";
import { accessSetting, checkAccess } from "./access";
import { adminCaller, type AdminApi } from "./admin-client";
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from "./assets";
import { submittedForm, type ConsoleApp, type ConsoleBindings, type ConsoleContext, type ConsoleEnv } from "./context";
import { checkCsrf, checkOrigin, SECURITY_HEADERS } from "./guard";
import { href } from "./layout";
import { renderBare } from "./render";
import {
  CONSOLE_PATH,
  endSession,
  openSession,
  sameSecret,
  sealSession,
  sessionCookie,
  sessionCookieValue,
} from "./session";

/** A console page (or a group of them): adds its routes to the console's app. */
export type ConsolePage = (app: ConsoleApp) => void;

/** A form carries at most a filter preview's sample (4 MiB) or an icon file (1 MiB), with room for the other fields. */
const MAX_FORM_BYTES = 5 * 1024 * 1024;
const WRONG_TOKEN_MESSAGE = "That is not the admin token (ADMIN_TOKEN); try again";
/** The `gateway.route` of a failed console sign-in in the audit trail. */
const SIGN_IN_ROUTE = "/admin/console/sign-in";
const OFF_MESSAGE =
  "The admin console is off: it is turned on with the admin API, by the ADMIN_TOKEN secret (see docs/console.md).";

function SignInForm({ error }: { error?: string }) {
  return (
    <form method="post" action={href("/sign-in")} class="stack">
      <label for="token">Admin token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="current-password"
        required
        aria-describedby={error ? "token-error" : undefined}
        aria-invalid={error ? "true" : undefined}
      />
      {error && (
        <p id="token-error" class="problems" role="alert">
          {error}
        </p>
      )}
      <button type="submit">Sign in</button>
    </form>
  );
}

function signInPage(
  c: ConsoleContext,
  error?: string,
  status: 200 | 401 | 403 | 429 = 200,
  headers?: Record<string, string>,
): Promise<Response> {
  const page = renderBare(c, "Sign in", <SignInForm {...(error ? { error } : {})} />, status);
  if (!headers) return page;
  return page.then((response) => {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  });
}

async function readForm(request: Request): Promise<FormData | URLSearchParams | undefined> {
  const type = request.headers.get("content-type") ?? "";
  const bytes = await readBodyBytes(request, MAX_FORM_BYTES);
  if (bytes === undefined) return undefined;
  if (type.startsWith("multipart/form-data"))
    return new Request("http://form/", { method: "POST", headers: { "content-type": type }, body: bytes }).formData();
  if (type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(new TextDecoder().decode(bytes));
  return new URLSearchParams();
}

function executionContextOf(c: ConsoleContext): Parameters<AdminApi["fetch"]>[2] {
  try {
    return c.executionCtx as Parameters<AdminApi["fetch"]>[2];
  } catch {
    return undefined; // app.request() in tests has none
  }
}

/**
 * Mounts the console on the gateway's app at /admin/console/ (and sends /admin/console
 * there). Call it before the MCP Origin guard is added: the console checks origins itself.
 *
 * @example
 * mountConsole(app, admin, [registerOverview, registerTools], auditFailedAuthentication);
 */
export function mountConsole(
  app: Hono<{ Bindings: ConsoleBindings }>,
  admin: AdminApi,
  pages: readonly ConsolePage[],
  recordFailure: FailureRecorder,
): void {
  app.get(CONSOLE_PATH, (c) => c.redirect(`${CONSOLE_PATH}/`, 308));
  app.route(`${CONSOLE_PATH}/`, createConsoleApp(admin, pages, recordFailure));
}

/**
 * Builds the console, to be mounted at /admin/console in front of the shell's Origin
 * guard (the console checks origins itself; see guard.ts). `admin` is the admin API app
 * every page reads and writes through; `recordFailure` is told of each failed sign-in.
 */
function createConsoleApp(
  admin: AdminApi,
  pages: readonly ConsolePage[],
  recordFailure: FailureRecorder,
): Hono<{ Bindings: ConsoleBindings }> {
  const app = new Hono<ConsoleEnv>();

  app.use("*", async function securityHeaders(c, next) {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });
  app.get("/console.js", (c) => c.body(CONSOLE_SCRIPT, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/console.css", (c) => c.body(CONSOLE_STYLE, 200, { "content-type": "text/css; charset=utf-8" }));

  app.use("*", async function consoleIsOn(c, next) {
    const secret = adminTokenState(c.env.ADMIN_TOKEN);
    if (secret.state === "off") return renderBare(c, "Console off", <p>{OFF_MESSAGE}</p>, 404);
    if (secret.state === "too-short") {
      return renderBare(c, "Console closed", <p role="alert">{ADMIN_TOKEN_TOO_SHORT_MESSAGE}</p>, 500);
    }
    await next();
  });

  app.use("*", async function behindAccess(c, next) {
    const access = accessSetting(c.env.CONSOLE_ACCESS);
    if (!access.ok)
      return renderBare(
        c,
        "Console closed",
        <p role="alert">{`Gateway configuration error: ${access.problem}; the console stays closed until it is fixed`}</p>,
        500,
      );
    const refused = access.jwt ? await checkAccess(c.req.raw, access.jwt) : undefined;
    if (refused) return renderBare(c, "Refused", <p role="alert">{refused}</p>, 403);
    await next();
  });

  app.get("/sign-in", async (c) => {
    const session = await openSession(
      sessionSecret(c.env),
      c.env.ADMIN_TOKEN!,
      sessionCookieValue(c.req.header("cookie") ?? null),
      c.env.GATEWAY_KV,
    );
    return session ? c.redirect(href("/"), 303) : signInPage(c);
  });
  app.post("/sign-in", async (c) => {
    const startedAt = Date.now();
    const refused = checkOrigin(c.req.raw);
    if (refused) return signInPage(c, refused.message, 403);
    const form = await readForm(c.req.raw);
    const token = form ? submittedForm(form).get("token") : "";
    const right = token !== "" && (await sameSecret(token, c.env.ADMIN_TOKEN!));
    const attempt = await judgeAdminAttempt(requestSource(c.req.raw), right, adminRateLimiter(c.env));
    if (attempt.verdict !== "accepted") {
      const throttled = attempt.verdict === "throttled" ? throttledMessage(attempt.retryAfterS) : undefined;
      // A guess at the admin token through the console leaves the same trace (and per-source bound) as one at the admin API.
      recordFailure({
        request: c.req.raw,
        route: SIGN_IN_ROUTE,
        reason: throttled ? "throttled-admin-token" : token === "" ? "missing-admin-token" : "wrong-admin-token",
        answer: { status: throttled ? 429 : 401, message: throttled ?? WRONG_TOKEN_MESSAGE },
        startedAt,
        env: c.env,
        waitUntil: (promise) => c.executionCtx.waitUntil(promise),
      });
      if (attempt.verdict === "throttled") {
        return signInPage(c, throttled, 429, { "retry-after": String(attempt.retryAfterS) });
      }
      return signInPage(c, WRONG_TOKEN_MESSAGE, 401);
    }
    const cookie = sessionCookie(c.req.url, await sealSession(sessionSecret(c.env), c.env.ADMIN_TOKEN!));
    return c.body(null, 303, { location: href("/"), "set-cookie": cookie });
  });

  app.use("*", async function signedIn(c, next) {
    const session = await openSession(
      sessionSecret(c.env),
      c.env.ADMIN_TOKEN!,
      sessionCookieValue(c.req.header("cookie") ?? null),
      c.env.GATEWAY_KV,
    );
    const changes = c.req.method !== "GET" && c.req.method !== "HEAD";
    if (!session)
      return changes
        ? signInPage(c, "Your console session has ended; sign in again", 401)
        : c.redirect(href("/sign-in"), 303);
    if (changes) {
      const foreign = checkOrigin(c.req.raw);
      if (foreign) return renderBare(c, "Refused", <p role="alert">{foreign.message}</p>, 403);
      const form = await readForm(c.req.raw);
      if (!form)
        return renderBare(c, "Too large", <p role="alert">{`A form is at most ${MAX_FORM_BYTES} bytes`}</p>, 413);
      const fields = submittedForm(form);
      const stale = checkCsrf(session.csrf, c.req.header("x-csrf-token") ?? fields.get("csrf"));
      if (stale) return renderBare(c, "Refused", <p role="alert">{stale.message}</p>, 403);
      c.set("form", fields);
    }
    c.set("session", session);
    c.set("call", adminCaller(admin, c.env, executionContextOf(c), c.req.raw));
    await next();
  });

  app.post("/sign-out", async (c) => {
    await endSession(c.env.GATEWAY_KV, c.var.session);
    return c.body(null, 303, { location: href("/sign-in"), "set-cookie": sessionCookie(c.req.url, "") });
  });

  // Each page adds its routes, in the composition root's order (src/gateway.ts).
  for (const register of pages) register(app);

  // Mounted in the gateway's app, an unknown console path would fall through to the next routes (the admin API): it ends here.
  app.all("*", (c) =>
    renderBare(
      c,
      "Not found",
      <p>
        {"No console page here; the console starts at "}
        <a href={href("/")}>{CONSOLE_PATH}/</a>
      </p>,
      404,
    ),
  );
  app.onError((error, c) => {
    const message =
      error instanceof GatewayError
        ? error.message
        : "The console failed to build this page; the gateway's log has the details";
    if (!(error instanceof GatewayError))
      console.error(
        `mcp-edge-gateway console: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    return renderBare(c, "Error", <p role="alert">{message}</p>, 500);
  });
  return app as unknown as Hono<{ Bindings: ConsoleBindings }>;
}
