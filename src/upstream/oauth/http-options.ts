/**
 * What every request of the OAuth client (oauth4webapi) is sent with: a deadline, and
 * plain http allowed only to a loopback host (a server on the operator's own machine, as
 * in development and tests); anything else must be https, as OAuth 2.1 requires.
 */
import { allowInsecureRequests } from "oauth4webapi";

/** How long one request to an authorization server or to an upstream's metadata may take. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** True for an http(s) URL on a loopback host. */
export function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

/** The options for a request to `url`. */
export function httpOptions(url: URL): { signal: AbortSignal; [allowInsecureRequests]?: boolean } {
  return {
    signal: AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS),
    ...(isLoopback(url) ? { [allowInsecureRequests]: true } : {}),
  };
}
