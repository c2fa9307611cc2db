/**
 * A named server's name and where it is served: one URL path segment, as personas' names
 * are, under /mcp/servers/ (endpoint.ts says why that path never clashes with an upstream).
 */

/** A server's name: 1-64 letters, digits, '-' or '_', starting with a letter or digit. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The URL path of the server `name`. */
export function serverPath(name: string): string {
  return `/mcp/servers/${name}`;
}

/** Servers `GET /admin/servers` lists at most (one KV list page). */
export const MAX_LISTED_SERVERS = 1_000;
