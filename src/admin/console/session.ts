/**
 * The console's session: the admin token is exchanged once, at sign-in, for a sealed
 * cookie (AES-GCM under a key derived from SESSION_SECRET, `core/sealed-state.ts`) that
 * holds nothing but its expiry and the CSRF token of the session. The token itself is
 * never stored in the browser; the session is bound to a digest of it, so rotating
 * ADMIN_TOKEN ends every console session at once.
 *
 * The cookie is HttpOnly, SameSite=Strict, scoped to the console's path, Secure except on a
 * loopback host (where `npm start` serves plain HTTP), and lives CONSOLE_SESSION_TTL_S.
 * Signing out clears the cookie and also marks the session ended in KV until it would
 * have expired, so a copy of the cookie kept elsewhere opens nothing either.
 */
import { openState, sealState } from "../../core/sealed-state";
import { isEnded, markEnded } from "../../storage/ended-marks";

/** How long a console session lasts after sign-in. */
export const CONSOLE_SESSION_TTL_S = 30 * 60;
export const CONSOLE_PATH = "/admin/console";
export const SESSION_COOKIE = "mcpgw_console";
const SESSION_PURPOSE = "admin console session";
const CSRF_TOKEN_BYTES = 32;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** What a session holds: its CSRF token (also what names it) and its expiry (ms since the epoch). */
export type ConsoleSession = { readonly csrf: string; readonly exp: number };

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The principal a session is sealed for: a digest of the admin token (never the token). */
async function principalOf(adminToken: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`console:${adminToken}`));
  return `admin:${hex(digest).slice(0, 32)}`;
}

/** True when `a` and `b` are the same text, compared in constant time over their digests. */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [x, y] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(x, y);
}

/**
 * A new sealed session (the cookie's value) with a fresh CSRF token.
 *
 * @example
 * const value = await sealSession(env.SESSION_SECRET, env.ADMIN_TOKEN);
 */
export async function sealSession(
  secret: string,
  adminToken: string,
  ttlS = CONSOLE_SESSION_TTL_S,
  now = Date.now(),
): Promise<string> {
  const session: ConsoleSession = {
    csrf: hex(crypto.getRandomValues(new Uint8Array(CSRF_TOKEN_BYTES))),
    exp: now + ttlS * 1000,
  };
  return sealState(secret, SESSION_PURPOSE, await principalOf(adminToken), ttlS * 1000, session, now);
}

async function signedOutId(session: ConsoleSession): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(session.csrf)));
}

/**
 * Opens a session cookie's value; undefined when it is missing, altered, expired, made
 * under another admin token, or signed out (when `kv` is given).
 */
export async function openSession(
  secret: string,
  adminToken: string,
  value: string | undefined,
  kv?: KVNamespace,
  now = Date.now(),
): Promise<ConsoleSession | undefined> {
  if (!value) return undefined;
  const opened = await openState(secret, SESSION_PURPOSE, await principalOf(adminToken), value, now);
  if (!opened.ok) return undefined;
  const { csrf, exp } = (opened.value ?? {}) as { csrf?: unknown; exp?: unknown };
  if (typeof csrf !== "string" || csrf.length !== CSRF_TOKEN_BYTES * 2 || typeof exp !== "number") return undefined;
  const session = { csrf, exp };
  if (kv && (await isEnded(kv, "console-session", await signedOutId(session)))) return undefined;
  return session;
}

/** Marks `session` ended until it would have expired. */
export async function endSession(
  kv: KVNamespace | undefined,
  session: ConsoleSession,
  now = Date.now(),
): Promise<void> {
  if (!kv) return;
  await markEnded(kv, "console-session", await signedOutId(session), Math.ceil((session.exp - now) / 1000));
}

/** True when the request's host is loopback, where plain HTTP is all `npm start` serves. */
export function isLoopback(url: string): boolean {
  return LOOPBACK_HOSTS.has(new URL(url).hostname);
}

/** The Set-Cookie value that stores `value`, or (with `value` empty) clears the cookie. */
export function sessionCookie(requestUrl: string, value: string, maxAgeS = CONSOLE_SESSION_TTL_S): string {
  const attributes = [
    `${SESSION_COOKIE}=${value}`,
    `Path=${CONSOLE_PATH}`,
    `Max-Age=${value === "" ? 0 : maxAgeS}`,
    "HttpOnly",
    "SameSite=Strict",
  ];
  if (!isLoopback(requestUrl)) attributes.push("Secure");
  return attributes.join("; ");
}

/** The session cookie's value in a Cookie header. */
export function sessionCookieValue(cookieHeader: string | null): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === SESSION_COOKIE) return rest.join("=");
  }
  return undefined;
}
