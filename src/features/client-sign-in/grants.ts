/**
 * Grants as people see them: the clients a user signed in to, listed and revoked by the
 * user or an operator. A grant is the library's (workers-oauth-provider keeps it in KV under
 * the user's id, a digest of the provider and subject); this file turns its summary into
 * what may be shown (never a token: the library's summary holds none) and keeps a small
 * index of signed-in users so an operator can list every user's grants without knowing the
 * library's ids. Revoking a grant deletes it with every access and refresh token of it, so
 * the client's next call is refused at once (this isolate drops its checked copies: token-cache.ts).
 */
import type { OAuthHelpers } from "./authorization-server";
import type { SignedInUser } from "./authorization-server";
import { isObject } from "../../core/jsonrpc";
import { forgetSignInTokens } from "./token-cache";

/** KV prefix of the index of signed-in users (beside the library's `grant:`/`token:`/`client:` keys). */
export const USER_INDEX_PREFIX = "client-sign-in/user/";
/**
 * The most grants read for one user (a person allows a handful of clients; revokeExistingGrants keeps one per client).
 */
export const MAX_GRANTS_PER_USER = 100;
/** The most users an operator's listing reads at once; a cursor gives the next page. */
export const MAX_USERS_PER_PAGE = 50;

/** What a grant shows: who, which client, for what, since when; never a token. */
export type GrantView = {
  readonly id: string;
  readonly clientId: string;
  /** The client's name when it was granted (client-written text: escape it wherever shown). */
  readonly clientName?: string;
  readonly principal?: string;
  readonly email?: string;
  readonly scope: readonly string[];
  readonly resource: readonly string[];
  readonly redirectUri?: string;
  readonly createdAt: string;
  readonly expiresAt?: string;
};

/** What the gateway keeps beside a grant (the library stores it as the grant's metadata). */
export type GrantMetadata = { readonly email: string; readonly principal: string; readonly clientName: string };

/** The library's id of a user: a digest of the provider and its subject (no email or name in KV keys). */
export async function libraryUserId(issuer: string, subject: string): Promise<string> {
  const bytes = new TextEncoder().encode(`${issuer}\n${subject}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

type Summary = Awaited<ReturnType<OAuthHelpers["listUserGrants"]>>["items"][number];

const iso = (seconds: number | undefined) =>
  seconds === undefined ? undefined : new Date(seconds * 1000).toISOString();
const text = (value: unknown) => (typeof value === "string" ? value : undefined);

function viewOf(summary: Summary): GrantView {
  const metadata: Record<string, unknown> = isObject(summary.metadata) ? summary.metadata : {};
  const view: { -readonly [K in keyof GrantView]: GrantView[K] } = {
    id: summary.id,
    clientId: summary.clientId,
    scope: summary.scope,
    resource: summary.resource === undefined ? [] : [summary.resource].flat(),
    createdAt: iso(summary.createdAt)!,
  };
  const clientName = text(metadata["clientName"]);
  const principal = text(metadata["principal"]);
  const email = text(metadata["email"]);
  const expiresAt = iso(summary.expiresAt);
  if (clientName !== undefined) view.clientName = clientName;
  if (principal !== undefined) view.principal = principal;
  if (email !== undefined) view.email = email;
  if (summary.redirectUri !== undefined) view.redirectUri = summary.redirectUri;
  if (expiresAt !== undefined) view.expiresAt = expiresAt;
  return view;
}

/** The user's grants (at most MAX_GRANTS_PER_USER), newest first. */
export async function userGrants(oauth: OAuthHelpers, userId: string): Promise<GrantView[]> {
  const { items } = await oauth.listUserGrants(userId, { limit: MAX_GRANTS_PER_USER });
  return items.map(viewOf).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/**
 * Revokes the user's grant `grantId` (and every token of it); the grant revoked, or undefined when the user has none of
 * that id.
 */
export async function revokeUserGrant(
  oauth: OAuthHelpers,
  userId: string,
  grantId: string,
): Promise<GrantView | undefined> {
  const grant = (await userGrants(oauth, userId)).find((each) => each.id === grantId);
  if (!grant) return undefined;
  await oauth.revokeGrant(grant.id, userId);
  forgetSignInTokens(userId, grant.id);
  return grant;
}

/** One page of the index: its users, and the cursor of the next. */
type UserPage = { users: IndexedUser[]; cursor?: string };

/** An entry of the index of signed-in users. */
export type IndexedUser = { readonly userId: string; readonly principal: string; readonly email: string };

/** Notes that `user` holds grants, for as long as a grant can live (`ttlS`). */
export async function indexUser(kv: KVNamespace, userId: string, user: SignedInUser, ttlS: number): Promise<void> {
  const entry = JSON.stringify({ principal: user.principal, email: user.email });
  await kv.put(`${USER_INDEX_PREFIX}${userId}`, entry, { expirationTtl: ttlS });
}

/** One page of the signed-in users (MAX_USERS_PER_PAGE), and the cursor of the next. */
export async function indexedUsers(kv: KVNamespace, cursor?: string): Promise<UserPage> {
  const page = { prefix: USER_INDEX_PREFIX, limit: MAX_USERS_PER_PAGE };
  const listed = await kv.list(cursor === undefined ? page : { ...page, cursor });
  const users: IndexedUser[] = [];
  await Promise.all(
    listed.keys.map(async (key) => {
      const value: unknown = await kv.get(key.name, "json");
      if (isObject(value) && typeof value["principal"] === "string" && typeof value["email"] === "string") {
        const userId = key.name.slice(USER_INDEX_PREFIX.length);
        users.push({ userId, principal: value["principal"], email: value["email"] });
      }
    }),
  );
  users.sort((a, b) => a.email.localeCompare(b.email));
  return listed.list_complete ? { users } : { users, cursor: listed.cursor };
}
