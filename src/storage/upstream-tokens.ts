/**
 * Each user's upstream OAuth tokens, in KV under principal + upstream, sealed with
 * AES-GCM under a key derived from SESSION_SECRET for this purpose only (core/sealed-state.ts):
 * KV holds ciphertext, and a record opens only for the principal it was written for. What
 * a listing shows (who, which upstream, scope, expiry) is the entry's KV metadata, never a
 * token. Keys users pasted (`userKey` upstreams) are kept the same way, under the same
 * keys, so listings and revocation see both. This module is the only one that knows these KV prefixes; it also keeps the
 * gateway's client registrations per upstream and redirect URI, and the single-use marks
 * of sign-in flows.
 */
import { openState, sealState } from "../core/sealed-state";
import { isObject } from "../core/jsonrpc";

const TOKEN_PREFIX = "upstream-token/";
const CLIENT_PREFIX = "upstream-oauth-client/";
const FLOW_PREFIX = "upstream-oauth-flow/";
const TOKEN_PURPOSE = "upstream-token";
const USER_KEY_PURPOSE = "upstream-user-key";
const CLIENT_PURPOSE = "upstream-oauth-client";
/** Who a client registration is sealed for: it belongs to the gateway, not to a user. */
const GATEWAY_PRINCIPAL = "(gateway)";
/** How long a connection is kept without use once its refresh token (or access token) would allow: 90 days. */
const TOKEN_RECORD_TTL_MS = 90 * 24 * 3600_000;
const CLIENT_RECORD_TTL_MS = 30 * 24 * 3600_000;
/** KV's shortest expiration, seconds. */
const MIN_KV_TTL_S = 60;
const MAX_LISTED = 1_000;

/** One user's tokens for one upstream. */
export type UpstreamTokens = {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Milliseconds since the epoch; absent when the server did not say. */
  readonly expiresAt?: number;
  readonly scope?: string;
  /** The authorization server that issued them, and the client they were issued to. */
  readonly issuer: string;
  readonly clientId: string;
  /**
   * The dynamic registration they were issued to (id, secret, auth method): a refresh uses
   * it, whatever registration later sign-ins (through another host name, say) made.
   */
  readonly client?: Readonly<Record<string, unknown>>;
  /** The upstream URL (the resource, RFC 8707) they were issued for: never sent to another. */
  readonly resource: string;
  /**
   * The resource their requests named where it is not the upstream URL (the origin, when
   * the metadata was found at the origin's root well-known URI): a refresh names it again.
   */
  readonly namedResource?: string;
  /** The gateway origin the user signed in through (its redirect URI and client metadata URL). */
  readonly origin: string;
  readonly connectedAt: number;
};

/** What listings show of a connection: never a token. */
export type UpstreamConnection = {
  readonly principal: string;
  readonly upstream: string;
  /** `userKey` for a key the user pasted; absent: an OAuth sign-in. */
  readonly kind?: "userKey";
  readonly scope?: string;
  readonly expiresAt?: number;
  readonly connectedAt: number;
};

/** The gateway's registration with one upstream's authorization server. */
export type ClientRegistration = {
  readonly issuer: string;
  readonly redirectUri: string;
  readonly client: Readonly<Record<string, unknown>>;
};

async function tagOf(principal: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(principal)));
  return [...bytes.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function tokenKey(principal: string, upstream: string): Promise<string> {
  return `${TOKEN_PREFIX}${await tagOf(principal)}/${upstream}`;
}

function isTokens(value: unknown): value is UpstreamTokens {
  return (
    isObject(value) &&
    typeof value["accessToken"] === "string" &&
    typeof value["issuer"] === "string" &&
    typeof value["clientId"] === "string" &&
    typeof value["origin"] === "string" &&
    typeof value["resource"] === "string" &&
    (value["namedResource"] === undefined || typeof value["namedResource"] === "string")
  );
}

/** The tokens `principal` holds for `upstream`, or undefined (none, or a record that does not open for it). */
export async function readTokens(
  kv: KVNamespace,
  secret: string,
  principal: string,
  upstream: string,
): Promise<UpstreamTokens | undefined> {
  const value = await openRecord(kv, secret, TOKEN_PURPOSE, principal, upstream);
  return isTokens(value) ? value : undefined;
}

/** What `principal`'s record for `upstream` holds when it opens under `purpose`, or undefined. */
async function openRecord(
  kv: KVNamespace,
  secret: string,
  purpose: string,
  principal: string,
  upstream: string,
): Promise<unknown> {
  const sealed = await kv.get(await tokenKey(principal, upstream));
  if (sealed === null) return undefined;
  const opened = await openState(secret, purpose, principal, sealed);
  return opened.ok ? opened.value : undefined;
}

/** Stores (or replaces, after a refresh) `principal`'s tokens for `upstream`. */
export async function writeTokens(
  kv: KVNamespace,
  secret: string,
  principal: string,
  upstream: string,
  tokens: UpstreamTokens,
): Promise<void> {
  const sealed = await sealState(secret, TOKEN_PURPOSE, principal, TOKEN_RECORD_TTL_MS, tokens);
  const metadata: UpstreamConnection = {
    principal,
    upstream,
    connectedAt: tokens.connectedAt,
    ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
    ...(tokens.expiresAt !== undefined ? { expiresAt: tokens.expiresAt } : {}),
  };
  await kv.put(await tokenKey(principal, upstream), sealed, { expirationTtl: TOKEN_RECORD_TTL_MS / 1000, metadata });
}

/** A key a user pasted for an upstream, and the upstream URL it was given for (never sent to another). */
export type UserKeyRecord = { readonly key: string; readonly resource: string; readonly connectedAt: number };

/** Stores (or replaces) the key `principal` pasted for `upstream`, sealed for that principal. */
export async function writeUserKey(
  kv: KVNamespace,
  secret: string,
  principal: string,
  upstream: string,
  record: UserKeyRecord,
): Promise<void> {
  const sealed = await sealState(secret, USER_KEY_PURPOSE, principal, TOKEN_RECORD_TTL_MS, record);
  const metadata: UpstreamConnection = { principal, upstream, kind: "userKey", connectedAt: record.connectedAt };
  await kv.put(await tokenKey(principal, upstream), sealed, { expirationTtl: TOKEN_RECORD_TTL_MS / 1000, metadata });
}

/** The key `principal` pasted for `upstream`, or undefined (none, or a record that does not open for it). */
export async function readUserKey(
  kv: KVNamespace,
  secret: string,
  principal: string,
  upstream: string,
): Promise<UserKeyRecord | undefined> {
  const value = await openRecord(kv, secret, USER_KEY_PURPOSE, principal, upstream);
  return isObject(value) && typeof value["key"] === "string" && typeof value["resource"] === "string"
    ? (value as UserKeyRecord)
    : undefined;
}

/** Forgets whatever `principal` holds for `upstream` (tokens or a key); false when there was nothing. */
export async function deleteConnection(kv: KVNamespace, principal: string, upstream: string): Promise<boolean> {
  const key = await tokenKey(principal, upstream);
  if ((await kv.get(key)) === null) return false;
  await kv.delete(key);
  return true;
}

/** Forgets `principal`'s tokens for `upstream`. */
export async function deleteTokens(kv: KVNamespace, principal: string, upstream: string): Promise<void> {
  await kv.delete(await tokenKey(principal, upstream));
}

/** The connections of one principal, or of everyone (admin), from KV metadata only. */
export async function listConnections(kv: KVNamespace, principal?: string): Promise<UpstreamConnection[]> {
  const prefix = principal === undefined ? TOKEN_PREFIX : `${TOKEN_PREFIX}${await tagOf(principal)}/`;
  const out: UpstreamConnection[] = [];
  let cursor: string | undefined;
  do {
    const page: KVNamespaceListResult<unknown> = await kv.list({ prefix, ...(cursor ? { cursor } : {}) });
    for (const key of page.keys) {
      const meta = key.metadata;
      if (isObject(meta) && typeof meta["principal"] === "string" && typeof meta["upstream"] === "string")
        out.push(meta as UpstreamConnection);
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor && out.length < MAX_LISTED);
  return out;
}

async function clientKey(upstream: string, redirectUri: string): Promise<string> {
  return `${CLIENT_PREFIX}${upstream}/${await tagOf(redirectUri)}`;
}

/** The gateway's registered client for `upstream` with the redirect URI `redirectUri`, if one was made. */
export async function readClient(
  kv: KVNamespace,
  secret: string,
  upstream: string,
  redirectUri: string,
): Promise<ClientRegistration | undefined> {
  return openClient(secret, await kv.get(await clientKey(upstream, redirectUri)));
}

/**
 * The one registration per upstream kept before registrations were per redirect URI (the
 * shared one, replaced by each host name's sign-in): read only to refresh tokens issued to it.
 */
export async function readLegacyClient(
  kv: KVNamespace,
  secret: string,
  upstream: string,
): Promise<ClientRegistration | undefined> {
  return openClient(secret, await kv.get(`${CLIENT_PREFIX}${upstream}`));
}

async function openClient(secret: string, sealed: string | null): Promise<ClientRegistration | undefined> {
  if (sealed === null) return undefined;
  const opened = await openState(secret, CLIENT_PURPOSE, GATEWAY_PRINCIPAL, sealed);
  const value = opened.ok ? opened.value : undefined;
  return isObject(value) &&
    typeof value["issuer"] === "string" &&
    typeof value["redirectUri"] === "string" &&
    isObject(value["client"])
    ? (value as ClientRegistration)
    : undefined;
}

/** Keeps a dynamic registration under its redirect URI (sealed: it may carry a client secret). */
export async function writeClient(
  kv: KVNamespace,
  secret: string,
  upstream: string,
  registration: ClientRegistration,
): Promise<void> {
  const sealed = await sealState(secret, CLIENT_PURPOSE, GATEWAY_PRINCIPAL, CLIENT_RECORD_TTL_MS, registration);
  const key = await clientKey(upstream, registration.redirectUri);
  await kv.put(key, sealed, { expirationTtl: CLIENT_RECORD_TTL_MS / 1000 });
}

/** Marks a sign-in flow (`nonce`) as open until `ttlMs` from now. */
export async function openFlow(kv: KVNamespace, nonce: string, ttlMs: number): Promise<void> {
  await kv.put(`${FLOW_PREFIX}${nonce}`, "open", { expirationTtl: Math.max(MIN_KV_TTL_S, Math.ceil(ttlMs / 1000)) });
}

/**
 * Takes the open flow `nonce`: true once, false for a flow never opened, expired or
 * already taken. KV is eventually consistent between locations, so two takes in
 * different data centres within ~60 s could both succeed; the state is also sealed with
 * an expiry and bound to one browser, which bounds what a replay could do.
 */
export async function takeFlow(kv: KVNamespace, nonce: string): Promise<boolean> {
  const key = `${FLOW_PREFIX}${nonce}`;
  if ((await kv.get(key)) !== "open") return false;
  await kv.delete(key);
  return true;
}
