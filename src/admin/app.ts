/**
 * The admin API under /admin/: documents edited while the gateway runs, each feature's
 * route group added in the composition root's order (src/gateway.ts). Bearer `ADMIN_TOKEN`;
 * with the secret unset every path under /admin answers 404 with a message saying the API
 * is off and how to turn it on (a bare 404 would look like a wrong path), and with one
 * shorter than 32 characters a 500 saying how to make a long one (auth/admin-token.ts).
 * Wrong tokens are slowed down per source: 429 with Retry-After after a few
 * (auth/admin-throttle.ts). Every write is validated and nothing invalid is stored; the
 * answer lists each error with its location in the document (a JSON Pointer), including
 * documents nested too deep and patches that would reach an object's prototype.
 *
 *   /admin/filter-sets, /admin/plan: features/filters/filters-admin.ts
 *   GET /admin/audit?from=&to=&tool=&user=&upstream=&outcome=&limit=   the audit trail as NDJSON (features/audit/audit-admin.ts)
 *   /admin/api-keys, /admin/personas, /admin/visibility: see features/api-keys/api-keys-admin.ts and
 *   features/personas/access-documents.ts
 *   /admin/pins: tool pinning, features/pins/pins-admin.ts; /admin/upstream-connections: features/upstream-sign-in/
 *   /admin/guardrails: features/guardrails/admin-routes.ts; /admin/client-grants, /admin/sign-in-roles: features/client-sign-in/
 */
import { Hono } from "./hono-app";
import { requestSource, type FailureRecorder } from "../auth/failed-authentication";
import { adminTokenState, ADMIN_TOKEN_TOO_SHORT_MESSAGE } from "../auth/admin-token";
import { adminRateLimiter, isConsoleCall, judgeAdminAttempt, throttledMessage } from "../auth/admin-throttle";
import { addUnmatchedRoute } from "./unmatched";

/** Where the shell mounts the admin API. */
export const ADMIN_BASE = "/admin";

const ADMIN_OFF_MESSAGE =
  "The admin API is off: it is turned on by the ADMIN_TOKEN secret. Deployed: npx wrangler secret put ADMIN_TOKEN. " +
  'Locally: ADMIN_TOKEN=<token> in .dev.vars, or npm start -- --var ADMIN_TOKEN:<token>. See docs/filters.md, "Live editing".';

export type AdminBindings = {
  ADMIN_TOKEN?: string;
  GATEWAY_KV?: KVNamespace;
  PAYLOADS?: R2Bucket;
  AUDIT_QUEUE?: Queue;
  [binding: string]: unknown;
};
const ADMIN_UNAUTHORIZED = "Unauthorized: send Authorization: Bearer <ADMIN_TOKEN>";
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/** The admin sub-app that route groups are added to. */
export type AdminApp = Hono<{ Bindings: AdminBindings }>;
/** A group of admin routes (a feature's, or the skeleton's), added after the admin token check. */
export type AdminRoutes = (admin: AdminApp) => void;

/** Builds the admin sub-app, mounted at /admin, with `routes` added in order; `recordFailure` is told of wrong tokens. */
export function createAdminApp(routes: readonly AdminRoutes[], recordFailure: FailureRecorder): AdminApp {
  const admin = new Hono<{ Bindings: AdminBindings }>();

  admin.use("*", async function adminAuth(c, next) {
    const secret = adminTokenState(c.env.ADMIN_TOKEN);
    if (secret.state === "off") return c.json({ error: ADMIN_OFF_MESSAGE }, 404);
    if (secret.state === "too-short") return c.json({ error: ADMIN_TOKEN_TOO_SHORT_MESSAGE }, 500);
    const startedAt = Date.now();
    const header = c.req.header("authorization") ?? "";
    const given = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    const right = await sameSecret(given, secret.token);
    // The console's own calls carry the token itself, for a user signed in already: never throttled.
    const attempt =
      isConsoleCall(c.req.raw) && right
        ? ({ verdict: "accepted" } as const)
        : await judgeAdminAttempt(requestSource(c.req.raw), right, adminRateLimiter(c.env));
    if (attempt.verdict !== "accepted") {
      const throttled = attempt.verdict === "throttled" ? throttledMessage(attempt.retryAfterS) : undefined;
      // Someone guessing the admin token is the failed authentication most worth a trace.
      recordFailure({
        request: c.req.raw,
        route: "/admin",
        reason: throttled ? "throttled-admin-token" : given === "" ? "missing-admin-token" : "wrong-admin-token",
        answer: { status: throttled ? 429 : 401, message: throttled ?? ADMIN_UNAUTHORIZED },
        startedAt,
        env: c.env,
        waitUntil: (promise) => c.executionCtx.waitUntil(promise),
      });
      if (attempt.verdict === "throttled") {
        return c.json({ error: throttled }, 429, { "retry-after": String(attempt.retryAfterS) });
      }
      return c.json({ error: ADMIN_UNAUTHORIZED }, 401, {
        "www-authenticate": 'Bearer realm="mcp-edge-gateway admin"',
      });
    }
    await next();
  });

  // The route groups, in the composition root's order (src/gateway.ts).
  for (const add of routes) add(admin);

  addUnmatchedRoute(admin, ADMIN_BASE);
  return admin;
}
