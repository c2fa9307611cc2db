/**
 * The upstream side of a client: the sessions the gateway holds with upstreams on a
 * client's behalf, and what a handshake needs to open one. A protocol front produces it
 * (the 2025 front from its sealed session); the pool reads it and nothing else.
 */
import type { JsonObject } from "../core/jsonrpc";
import type { Result } from "../core/errors";
import type { UpstreamConfig } from "../config/upstreams";

/**
 * Why a caller has no credential for an upstream: `sign-in-required` (the user can act: sign
 * in, paste a key), `credential-unavailable` (they cannot here: an API key where token
 * exchange needs an access token, an exchange refused).
 */
export type UserCredentialProblem = {
  readonly reason: "sign-in-required" | "credential-unavailable";
  readonly detail: string;
};

/**
 * How a call proves to upstreams who it is for: the identity assertion (upstreams that
 * opted in) and, for upstreams each user signs in to, the caller's own access token.
 */
export type CallerCredentials = {
  /** Mints the identity assertion for `upstream`. */
  readonly assertion: (upstream: string) => Promise<string>;
  /** The caller's own credential for an upstream with `auth` (a token refreshed when due, a key, an exchanged token), or why there is none. */
  readonly userToken?: (upstream: UpstreamConfig) => Promise<Result<string, UserCredentialProblem>>;
  /** The upstream answered the caller's credential with 401: it is forgotten. */
  readonly rejected?: (upstream: UpstreamConfig) => Promise<void>;
};

/** One upstream's side of a client's session. */
export type UpstreamSession = {
  /** The upstream's own `Mcp-Session-Id`, or null when it runs without sessions. */
  readonly sessionId: string | null;
  /** The protocol version the upstream agreed to. */
  readonly protocolVersion: string;
  /** The upstream's capability keys (tools, resources, prompts, logging, completions...). */
  readonly capabilities: readonly string[];
  /** True when the upstream supports resources/subscribe. */
  readonly subscribe?: boolean;
};

/** The client on whose behalf upstream sessions are opened and kept. */
export type UpstreamClient = {
  /** The key its later upstream sessions are kept under (a random id, never a token). */
  readonly sid: string;
  /** The protocol version to speak to upstreams for it. */
  readonly protocolVersion: string;
  readonly clientCapabilities: JsonObject;
  readonly clientInfo: JsonObject;
  /** Sessions opened when the client connected, by upstream name. */
  readonly upstreams: Readonly<Record<string, UpstreamSession>>;
  /** Seconds since the epoch after which nothing is kept for it. */
  readonly exp: number;
};

/**
 * The session `client` holds with `upstream`, if it was opened when the client
 * connected. An own-property read: an upstream may be named `toString` or `constructor`,
 * and the prototype's members are not sessions.
 */
export function heldSession(client: Pick<UpstreamClient, "upstreams">, upstream: string): UpstreamSession | undefined {
  return Object.hasOwn(client.upstreams, upstream) ? client.upstreams[upstream] : undefined;
}

/** What the pool needs of a call: on whose behalf, and how to reach the upstream. */
export type PoolRequest = {
  /** The Worker's bindings, for what configuration names (an upstream's service binding, credential secrets). */
  readonly env: Readonly<Record<string, unknown>>;
  /** Where upstream sessions, upstream eras and a 2025 client's log level are kept (typed by the shell); undefined when none is bound. */
  readonly kv: KVNamespace | undefined;
  readonly session: UpstreamClient;
  readonly signal?: AbortSignal;
  /** The caller's credentials toward upstreams: identity assertions, per-user tokens. */
  readonly identity?: CallerCredentials;
  /** The revision the client itself speaks (a 2025 client gets 2026-07-28 results it can read). */
  readonly clientVersion?: string;
  /** A modern client's own `Mcp-Param-*` headers, forwarded to modern upstreams. */
  readonly paramHeaders?: Readonly<Record<string, string>>;
  /** A modern client's `io.modelcontextprotocol/logLevel`, sent on to modern upstreams in the envelope. */
  readonly logLevel?: string;
};
