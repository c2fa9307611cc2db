/**
 * The admin console's security, through the Worker's fetch: sign-in exchanges the admin
 * token for a sealed HttpOnly, SameSite=Strict cookie (Secure off loopback), every page
 * carries a strict CSP, every change needs the console's own origin and the session's
 * CSRF token, sessions expire and sign-out ends them (a kept copy of the cookie included).
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { admin, ADMIN_VARS, TEST_ADMIN_TOKEN } from "../helpers/admin";
import { gatewayFetch } from "../helpers/gateway";
import { CONSOLE_ORIGIN, consoleGet, consolePost, formInit, signIn } from "../helpers/console";
import { CONSOLE_SESSION_TTL_S, sealSession, SESSION_COOKIE } from "../../src/admin/console/session";

const PAGES = [
  "/",
  "/upstreams",
  "/tools",
  "/filters",
  "/filters/new",
  "/personas",
  "/api-keys",
  "/audit",
  "/shaping",
  "/approvals",
  "/servers",
  "/pins",
  "/client-grants",
];
const NAV = [
  "Overview",
  "Upstreams",
  "Tools",
  "Filters",
  "Personas",
  "API keys",
  "Audit",
  "Shaping",
  "Approvals",
  "Servers",
  "Pins",
];
const PERSONA = { name: "csrf-probe", roles: "probe", allow: "alpha___*", deny: "" };

async function storedPersonas(): Promise<Record<string, unknown>> {
  return ((await (await admin("GET", "/personas")).json()) as { personas: Record<string, unknown> }).personas;
}

beforeEach(async () => {
  await admin("DELETE", `/personas/${PERSONA.name}`);
});

describe("sign-in", () => {
  it("sends a page without a session to sign-in, whose form has the Admin token field and Sign in button", async () => {
    const page = await consoleGet("/tools", undefined);
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/admin/console/sign-in");
    const form = await (await consoleGet("/sign-in", undefined)).text();
    expect(form).toMatch(/<label for="token">Admin token<\/label>/);
    expect(form).toMatch(/<input id="token" name="token" type="password"/);
    expect(form).toMatch(/<button type="submit">Sign in<\/button>/);
  });

  it("exchanges the token for a sealed HttpOnly, SameSite=Strict cookie, not Secure on loopback", async () => {
    const response = await gatewayFetch(
      "http://127.0.0.1:8787/admin/console/sign-in",
      formInit({ token: TEST_ADMIN_TOKEN }, undefined, "http://127.0.0.1:8787"),
      ADMIN_VARS,
    );
    expect(response.status).toBe(303);
    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=s1\\.[A-Za-z0-9_-]+; `));
    expect(cookie).toContain("Path=/admin/console");
    expect(cookie).toContain(`Max-Age=${CONSOLE_SESSION_TTL_S}`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).not.toContain("Secure");
    expect(cookie).not.toContain(TEST_ADMIN_TOKEN);
    expect(response.headers.get("location")).toBe("/admin/console/");
  });

  it("marks the cookie Secure on any other host", async () => {
    const { setCookie } = await signIn({}, "https://gateway.example");
    expect(setCookie.split("; ")).toContain("Secure");
  });

  it.each([
    ["a wrong token", { token: "not-the-token" }, CONSOLE_ORIGIN, 401],
    ["an empty token", { token: "" }, CONSOLE_ORIGIN, 401],
    ["the right token from another origin", { token: TEST_ADMIN_TOKEN }, "https://evil.example", 403],
  ])("refuses %s with no cookie", async (_, fields, origin, status) => {
    const response = await gatewayFetch(
      `${CONSOLE_ORIGIN}/admin/console/sign-in`,
      formInit(fields, undefined, origin),
      ADMIN_VARS,
    );
    expect(response.status).toBe(status);
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(await response.text()).toContain('role="alert"');
  });

  it("answers a configuration error as a page that says what to fix", async () => {
    const response = await consoleGet("/sign-in", undefined, { SESSION_SECRET: "" });
    expect(response.status).toBe(500);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await response.text()).toContain("the SESSION_SECRET secret is not set");
  });

  it("says the console is off while ADMIN_TOKEN is unset", async () => {
    const response = await consoleGet("/", undefined, { ADMIN_TOKEN: "" });
    expect(response.status).toBe(404);
    expect(await response.text()).toContain("The admin console is off");
  });
});

describe("every page", () => {
  it.each(PAGES)("%s carries the strict CSP, no inline script and the navigation", async (path) => {
    const session = await signIn();
    const response = await consoleGet(path, session);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(response.headers.get("cache-control")).toBe("no-store");
    // Not no-referrer: Chromium then sends a form's POST with `Origin: null`, and the console refuses it.
    expect(response.headers.get("referrer-policy")).toBe("same-origin");
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/\sstyle=/);
    for (const name of NAV) expect(html).toContain(`>${name}</a>`);
  });

  it("and the sign-in page and the script carry the CSP too", async () => {
    for (const path of ["/sign-in", "/console.js", "/console.css"]) {
      expect((await consoleGet(path, undefined)).headers.get("content-security-policy")).toContain(
        "frame-ancestors 'none'",
      );
    }
  });
});

describe("changes", () => {
  it("are made with the session's CSRF token from the console's own origin", async () => {
    const session = await signIn();
    const response = await consolePost("/personas/save", PERSONA, session);
    expect(response.status).toBe(303);
    expect(Object.keys(await storedPersonas())).toContain(PERSONA.name);
  });

  it("are made without an Origin header when the Referer is the console's own page", async () => {
    const session = await signIn();
    const response = await consolePost("/personas/save", PERSONA, session, {
      origin: null,
      referer: `${CONSOLE_ORIGIN}/admin/console/personas`,
    });
    expect(response.status).toBe(303);
    expect(Object.keys(await storedPersonas())).toContain(PERSONA.name);
  });

  it.each([
    ["without a CSRF token", "none", CONSOLE_ORIGIN, undefined],
    ["with another session's CSRF token", "other", CONSOLE_ORIGIN, undefined],
    ["from another origin", "own", "https://evil.example", undefined],
    ["from the null origin", "own", "null", undefined],
    ["without an Origin, from another site's page", "own", null, "https://evil.example/page"],
    ["with neither Origin nor Referer", "own", null, undefined],
  ])("are refused %s, and nothing is stored", async (_, token, origin, referer) => {
    const session = await signIn();
    const other = await signIn();
    const csrf = token === "other" ? other.csrf : token === "own" ? session.csrf : "";
    const response = await consolePost("/personas/save", { ...PERSONA, csrf }, session, {
      origin,
      ...(referer ? { referer } : {}),
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toMatch(
      /Forbidden: (the form(?:'|&#39;)s CSRF token|a change to the console must come from its own pages)/,
    );
    expect(Object.keys(await storedPersonas())).not.toContain(PERSONA.name);
  });

  it("are refused without a session", async () => {
    const response = await consolePost("/personas/save", { ...PERSONA, csrf: "0".repeat(64) }, undefined);
    expect(response.status).toBe(401);
    expect(Object.keys(await storedPersonas())).not.toContain(PERSONA.name);
  });
});

describe("a session", () => {
  it("ends when its lifetime is over", async () => {
    const secret = String(env.SESSION_SECRET);
    const issued = Date.now() - CONSOLE_SESSION_TTL_S * 1000 - 1_000;
    const expired = `${SESSION_COOKIE}=${await sealSession(secret, TEST_ADMIN_TOKEN, CONSOLE_SESSION_TTL_S, issued)}`;
    const live = `${SESSION_COOKIE}=${await sealSession(secret, TEST_ADMIN_TOKEN)}`;
    expect(
      (
        await gatewayFetch(
          `${CONSOLE_ORIGIN}/admin/console/`,
          { redirect: "manual", headers: { cookie: live } },
          ADMIN_VARS,
        )
      ).status,
    ).toBe(200);
    const page = await gatewayFetch(
      `${CONSOLE_ORIGIN}/admin/console/`,
      { redirect: "manual", headers: { cookie: expired } },
      ADMIN_VARS,
    );
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/admin/console/sign-in");
  });

  it("ends when ADMIN_TOKEN is rotated", async () => {
    const session = await signIn();
    const page = await consoleGet("/", session, { ADMIN_TOKEN: "a-rotated-admin-token-0123456789ab" });
    expect(page.status).toBe(303);
  });

  it("ends at sign-out: the cookie is cleared and a kept copy opens nothing", async () => {
    const session = await signIn();
    const out = await consolePost("/sign-out", {}, session);
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/admin/console/sign-in");
    expect(out.headers.get("set-cookie")).toMatch(
      new RegExp(`^${SESSION_COOKIE}=; Path=/admin/console; Max-Age=0; HttpOnly; SameSite=Strict`),
    );
    const replayed = await consoleGet("/", session);
    expect(replayed.status).toBe(303);
    expect((await consolePost("/personas/save", PERSONA, session)).status).toBe(401);
  });
});
