/**
 * A failed authentication, as the shell and the admin API report it: which request, on
 * which route, why, and what the caller was answered, never the credential. Where it goes is
 * a feature's choice (the audit trail: features/audit/failure-audit.ts), plugged in by the
 * composition root as a `FailureRecorder`; `requestSource` also keys the admin throttle.
 */

const UNKNOWN = "unknown";
/** CF-Connecting-IP is client-controlled where Cloudflare does not set it: cut at this length. */
const MAX_SOURCE_CHARS = 64;

export type FailedAuthentication = {
  readonly request: Request;
  /** `/mcp`, `/mcp/<upstream>` or `/admin`. */
  readonly route: string;
  /** Why it failed (authenticate.ts's `authFailureName`, `wrong-admin-token`, ...): never the credential. */
  readonly reason: string;
  /** What the caller was answered: HTTP status, JSON-RPC code (MCP routes), message (the gateway's own text). */
  readonly answer: { readonly status: number; readonly code?: number; readonly message: string };
  readonly startedAt: number;
  /** The Worker's bindings and vars (the recorder reads its configuration and Queue from them). */
  readonly env: Readonly<Record<string, unknown>>;
  readonly waitUntil: (promise: Promise<unknown>) => void;
};

/** Told of each failed authentication; it must not throw, and never delays the answer. */
export type FailureRecorder = (failure: FailedAuthentication) => void;

/** Where a request comes from, as Cloudflare says (CF-Connecting-IP), cut to a bound; "unknown" without it. */
export function requestSource(request: Request): string {
  return request.headers.get("cf-connecting-ip")?.slice(0, MAX_SOURCE_CHARS) || UNKNOWN;
}
