/**
 * The session lives in the `Mcp-Session-Id` the gateway mints: an AES-GCM sealed token
 * holding everything a later request needs (negotiated version, the client's
 * capabilities, the principal, the route, each upstream's session). Any isolate holding
 * the secret can open it, so no request depends on the memory of another.
 *
 * An isolate keeps the tokens it opened (bounded, by their exact text and the secret), so
 * a session's later requests skip the decryption and the parse: a cache, never the only
 * copy; expiry is still checked on every request.
 */
import { randomHexId } from "../../core/ids";
import { base64UrlToBytes, bytesToBase64Url } from "../../core/base64url";
import { derivedKey } from "../../core/derived-keys";
import { fail, ok, type Result } from "../../core/errors";
import type { UpstreamSession } from "../../upstream/upstream-session";

export const SESSION_TTL_S = 24 * 60 * 60;
const TOKEN_PREFIX = "v1.";
const IV_BYTES = 12;
const HKDF_INFO = "mcp-edge-gateway session token v1";
/**
 * The client's capabilities and info, as JSON, at most this many UTF-8 bytes: they travel
 * in every request's `Mcp-Session-Id`. Real clients send a few hundred bytes.
 */
export const MAX_CLIENT_STATE_BYTES = 4 * 1024;
/**
 * The whole `Mcp-Session-Id`, at most this many characters: 8 KiB is the header line
 * many proxies and servers accept (nginx's default buffer; Node allows 16 KiB for all
 * headers together).
 */
export const MAX_SESSION_TOKEN_CHARS = 8 * 1024;
/** Opened tokens this isolate keeps: at most this many, of at most this many characters together (about 512 KiB: base64url text takes a byte a character in V8), beside their parsed states. */
const OPENED_CACHE_ENTRIES = 512;
const OPENED_CACHE_CHARS = 512 * 1024;

export type SessionState = {
  /** Random id of this session; what DELETE records as ended. */
  readonly sid: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: Record<string, unknown>;
  readonly clientInfo: Record<string, unknown>;
  /** Who the session belongs to; a request from anyone else does not find it. */
  readonly principal: string;
  /** "" for the aggregated endpoint, else the upstream name of `/mcp/<upstream>`. */
  readonly route: string;
  /** Upstreams that answered initialize; absent ones failed and are retried per request. */
  readonly upstreams: Readonly<Record<string, UpstreamSession>>;
  /** Expiry, seconds since the epoch. */
  readonly exp: number;
  /**
   * Which tools the output filters reshaped at initialize, per upstream (digests; see
   * features/filters/listed-shapes.ts); absent when none. A later tools/list under other filters
   * is recorded in KV, since the token is never re-issued.
   */
  readonly filterShapes?: Readonly<Record<string, string>>;
};

export type SessionProblem = { reason: "malformed" | "expired" };

function sessionKey(secret: string): Promise<CryptoKey> {
  return derivedKey(secret, HKDF_INFO, { name: "AES-GCM", length: 256 }, ["encrypt", "decrypt"]);
}

/** A fresh random session id (128 bits, hex). */
export const newSessionId = randomHexId;

export type ClientStateProblem = { reason: "client-state-too-large"; bytes: number };

/** Checks that the client's capabilities and info fit in a session id (see MAX_CLIENT_STATE_BYTES). */
export function checkClientState(
  state: Pick<SessionState, "clientCapabilities" | "clientInfo">,
): Result<void, ClientStateProblem> {
  const bytes = new TextEncoder().encode(JSON.stringify([state.clientCapabilities, state.clientInfo])).length;
  return bytes > MAX_CLIENT_STATE_BYTES ? fail({ reason: "client-state-too-large", bytes }) : ok(undefined);
}

/** Seals `state` into the opaque `Mcp-Session-Id` value; throws past MAX_SESSION_TOKEN_CHARS. */
export async function sealSession(state: SessionState, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plain = new TextEncoder().encode(JSON.stringify(state));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sessionKey(secret), plain));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  const token = TOKEN_PREFIX + bytesToBase64Url(out);
  // Only reachable through upstreams (their session ids, their number): the client's part is bounded before.
  if (token.length > MAX_SESSION_TOKEN_CHARS) {
    throw new Error(
      `the session of ${Object.keys(state.upstreams).length} upstreams needs a ${token.length}-character Mcp-Session-Id, past the ${MAX_SESSION_TOKEN_CHARS} allowed`,
    );
  }
  return token;
}

/** Tokens opened here, oldest first: the state each holds, under the secret that opened it (shared: `SessionState` is read-only). */
const opened = new Map<string, { readonly secret: string; readonly state: SessionState }>();
let openedChars = 0;

function forget(token: string): void {
  if (opened.delete(token)) openedChars -= token.length;
}

function remember(token: string, secret: string, state: SessionState): void {
  forget(token);
  opened.set(token, { secret, state });
  openedChars += token.length;
  for (const oldest of opened.keys()) {
    if (opened.size <= OPENED_CACHE_ENTRIES && openedChars <= OPENED_CACHE_CHARS) break;
    forget(oldest);
  }
}

/** Opens a token minted by `sealSession`; anything altered or foreign is `malformed`. */
export async function openSession(
  token: string,
  secret: string,
  now = Date.now(),
): Promise<Result<SessionState, SessionProblem>> {
  const known = opened.get(token);
  if (known?.secret === secret) {
    if (known.state.exp * 1000 > now) return ok(known.state);
    forget(token);
    return fail({ reason: "expired" });
  }
  if (!token.startsWith(TOKEN_PREFIX)) return fail({ reason: "malformed" });
  const bytes = base64UrlToBytes(token.slice(TOKEN_PREFIX.length));
  if (!bytes || bytes.length <= IV_BYTES) return fail({ reason: "malformed" });
  let state: SessionState;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, IV_BYTES) },
      await sessionKey(secret),
      bytes.slice(IV_BYTES),
    );
    state = JSON.parse(new TextDecoder().decode(plain)) as SessionState;
  } catch {
    return fail({ reason: "malformed" });
  }
  if (state.exp * 1000 <= now) return fail({ reason: "expired" });
  remember(token, secret, state);
  return ok(state);
}
