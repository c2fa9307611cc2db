/**
 * The MCP revisions the gateway speaks, to clients and to upstreams, and the `_meta` keys
 * they define: the one place a revision's name or a reserved `_meta` key is written. Every
 * other module names them through these constants, so a new revision is added here and
 * found by the compiler everywhere it matters.
 */

/** The stateless revision: per-request `_meta` envelope, no handshake, no session. */
export const STATELESS_REVISION = "2026-07-28";
/** The handshake revisions (sessions, `initialize`), newest first. */
export const SESSION_REVISIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
/** The newest handshake revision: offered when a client asks for one the gateway does not speak, and spoken to 2025 upstreams. */
export const LATEST_SESSION_REVISION = SESSION_REVISIONS[0];
/** The only revision that still allows JSON-RPC batches (removed in 2025-06-18). */
export const BATCH_REVISION = "2025-03-26";

/**
 * Whether `version` is a per-request (stateless, 2026-07-28 or later) revision: revision
 * names are dates, so they order as strings.
 *
 * @example
 * isStatelessRevision(LATEST_SESSION_REVISION); // false
 */
export function isStatelessRevision(version: string): boolean {
  return version >= STATELESS_REVISION;
}

/** `_meta` keys reserved by the revisions (the `io.modelcontextprotocol/` prefix). */
export const META_KEYS = {
  /** The stateless envelope: the request's revision. */
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  /** The stateless envelope: what the client can do. */
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  /** The stateless envelope: who the client is. */
  clientInfo: "io.modelcontextprotocol/clientInfo",
  /** Where a stateless request asks for log messages. */
  logLevel: "io.modelcontextprotocol/logLevel",
  /** A stateless result's server identity. */
  serverInfo: "io.modelcontextprotocol/serverInfo",
  /** Ties a message to its task. */
  relatedTask: "io.modelcontextprotocol/related-task",
  /** The subscription a notification of `subscriptions/listen` belongs to. */
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;
