/**
 * What the upstream pool keeps in KV of a client's handshakes with upstreams, so every
 * isolate continues in the same upstream session (and DELETE can close it): the session
 * made after the client's own `initialize` (`upstream-session/<client session>/<upstream>`)
 * and, for clients that keep no session of their own, the whole handshake, with what the
 * upstream declared (`upstream-handshake/<client session>/<upstream>`). Both expire with the
 * client's session. Records are JSON text; upstream/pool.ts says what they mean. The only
 * module that knows these keys.
 */

const SESSION_KEY_PREFIX = "upstream-session/";
const HANDSHAKE_KEY_PREFIX = "upstream-handshake/";
/** What is kept per client session and upstream. */
export type HandshakeRecordKind = "session" | "handshake";

const PREFIXES: Readonly<Record<HandshakeRecordKind, string>> = {
  session: SESSION_KEY_PREFIX,
  handshake: HANDSHAKE_KEY_PREFIX,
};

function recordKey(kind: HandshakeRecordKind, clientSession: string, upstream: string): string {
  return `${PREFIXES[kind]}${clientSession}/${upstream}`;
}

/** The `kind` record of client session `clientSession` with `upstream`; null when none is kept. */
export function readHandshakeRecord(
  kv: KVNamespace,
  kind: HandshakeRecordKind,
  clientSession: string,
  upstream: string,
): Promise<string | null> {
  return kv.get(recordKey(kind, clientSession, upstream));
}

/** Stores the `kind` record of `clientSession` with `upstream` until `expiration` (seconds since the epoch). */
export async function writeHandshakeRecord(
  kv: KVNamespace,
  kind: HandshakeRecordKind,
  clientSession: string,
  upstream: string,
  text: string,
  expiration: number,
): Promise<void> {
  await kv.put(recordKey(kind, clientSession, upstream), text, { expiration });
}
