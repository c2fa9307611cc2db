/**
 * The admin API's own answer to a request no admin route takes: 405 with `Allow` when the
 * path exists for other methods, else 404, both as the admin API's JSON errors naming the
 * path. hono does not use a mounted sub-app's notFound handler, so without this the
 * gateway's MCP 404 would answer; it runs after the admin token was checked, so an
 * unauthenticated caller learns nothing about which paths exist.
 */
import type { Context } from "hono";
import type { Hono } from "./hono-app";

/** One route's path pattern (`/personas/:name`, `*`) as a regular expression over a whole path. */
function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((part) => (part === "*" ? ".*" : part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/**
 * Adds, after every other route of `admin` (mounted at `base`), the handler of requests
 * none of them took.
 *
 * @example
 * addUnmatchedRoute(admin, "/admin"); // last, after every route
 */
export function addUnmatchedRoute<E extends { Bindings: object }>(admin: Hono<E>, base: string): void {
  // Middleware (`use`) is registered under ALL; every route of the admin API names its method.
  const routes = admin.routes
    .filter((route) => route.method !== "ALL")
    .map((route) => ({ method: route.method, pattern: patternOf(route.path) }));
  admin.all("*", (c: Context) => {
    const path = c.req.path.startsWith(base) ? c.req.path.slice(base.length) || "/" : c.req.path;
    const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
    const where = `${base}${path === "/" ? "/" : path}`;
    if (allowed.length === 0)
      return c.json({ error: `Not Found: the admin API has no path ${where}; docs/admin-api.md lists its paths` }, 404);
    return c.json({ error: `Method Not Allowed: ${where} takes ${allowed.join(", ")}, not ${c.req.method}` }, 405, {
      allow: allowed.join(", "),
    });
  });
}
