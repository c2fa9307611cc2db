/**
 * The per-isolate cache of checked sign-in access tokens (features/client-sign-in/token-cache.ts):
 * a token that passed is trusted again for the document cache TTL without the library's KV
 * read, never past its expiry; a grant revoked on this isolate (by its user, or by the
 * client's RFC 7009 request) ends its cached tokens at once; a cached token opens only its
 * resource; the cache holds at most MAX_CACHED_SIGN_IN_TOKENS. Through the Worker, its users
 * logging in at oidc-provider.
 */
import { env } from "cloudflare:test";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { admin } from "../helpers/auth";
import { gatewayFetch, post, type Json, type Vars } from "../helpers/gateway";
import { GATEWAY, signedInToken, signInVars, tokenEndpoint } from "../helpers/client-sign-in";
import {
  MAX_CACHED_SIGN_IN_TOKENS,
  SignInTokenCache,
  signInTokens,
  type CheckedToken,
} from "../../src/features/client-sign-in/token-cache";

/** Longer than an access token lives (an hour): only the token's expiry can end a cached entry. */
const LONG_TTL_MS = 2 * 60 * 60 * 1000;
const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;
const label = crypto.randomUUID().slice(0, 8);
let vars: Vars;

const UPSTREAMS = JSON.stringify([
  { name: "alpha", url: inject("fixtureUrls").alpha },
  { name: "beta", url: inject("fixtureUrls").beta },
]);

beforeAll(async () => {
  vars = signInVars({}, { FILTER_CACHE_TTL_MS: String(LONG_TTL_MS), UPSTREAMS });
  const persona = { roles: ["gateway-users"], allow: ["*"] };
  expect((await admin("PUT", "/personas/signed-in-users", persona, vars)).status).toBe(200);
});
// The suite shares one KV: personas left behind would add their tools to every later file's users of these roles.
afterAll(async () => {
  await admin("DELETE", "/personas/signed-in-users", undefined, vars);
});

afterEach(() => {
  vi.useRealTimers();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cache-test", version: "1" } },
};
/** An initialize on `path`: 200 while the token opens the gateway there, 401 once it does not. */
const open = (token: string, withVars: Vars = vars, path = "/mcp") =>
  post(`${GATEWAY}${path}`, INITIALIZE, { vars: withVars, headers: bearer(token) });

/** Deletes the token's record from KV directly, as a revocation on another isolate would. */
async function deleteRecordOf(token: string): Promise<void> {
  const [user, grant] = token.split(":");
  const kv = env.GATEWAY_KV as KVNamespace;
  const { keys } = await kv.list({ prefix: `token:${user}:${grant}:` });
  expect(keys.length).toBeGreaterThan(0);
  await Promise.all(keys.map((key) => kv.delete(key.name)));
}

describe("a checked sign-in token", () => {
  it("is trusted again within the TTL without KV (another isolate's revocation waits for it), not with TTL 0", async () => {
    const cached = await signedInToken(vars, `cal-${label}`);
    expect((await open(cached.access_token)).status).toBe(200);
    await deleteRecordOf(cached.access_token);
    expect((await open(cached.access_token)).status).toBe(200);

    const uncached = { ...vars, FILTER_CACHE_TTL_MS: "0" };
    const fresh = await signedInToken(uncached, `cid-${label}`);
    expect((await open(fresh.access_token, uncached)).status).toBe(200);
    await deleteRecordOf(fresh.access_token);
    expect((await open(fresh.access_token, uncached)).status).toBe(401);
  });

  it("opens only the resource it was issued for: cached on /mcp/alpha, refused on /mcp/beta and /mcp", async () => {
    const token = await signedInToken(vars, `gus-${label}`, `${GATEWAY}/mcp/alpha`);
    expect((await open(token.access_token, vars, "/mcp/alpha")).status).toBe(200);
    expect((await open(token.access_token, vars, "/mcp/alpha")).status).toBe(200);
    expect((await open(token.access_token, vars, "/mcp/beta")).status).toBe(401);
    expect((await open(token.access_token, vars, "/mcp")).status).toBe(401);
  });

  it("is refused at once when its user revokes the grant on this isolate", async () => {
    const token = await signedInToken(vars, `dee-${label}`);
    expect((await open(token.access_token)).status).toBe(200);
    const listed = await gatewayFetch(`${GATEWAY}/oauth/grants`, { headers: bearer(token.access_token) }, vars);
    const { grants } = (await listed.json()) as Json;
    const grant = `${GATEWAY}/oauth/grants?grant=${encodeURIComponent(grants[0].id)}`;
    const revoked = await gatewayFetch(grant, { method: "DELETE", headers: bearer(token.access_token) }, vars);
    expect(revoked.status).toBe(200);
    expect((await open(token.access_token)).status).toBe(401);
  });

  it("is refused at once when its client revokes it (RFC 7009) on this isolate", async () => {
    const token = await signedInToken(vars, `eve-${label}`);
    expect((await open(token.access_token)).status).toBe(200);
    const revoked = await tokenEndpoint(vars, { token: token.access_token, client_id: token.clientId });
    expect(revoked.status).toBe(200);
    expect((await open(token.access_token)).status).toBe(401);
  });

  it("is refused past its expiry although the cache's TTL has not run out", async () => {
    const token = await signedInToken(vars, `fay-${label}`);
    expect((await open(token.access_token)).status).toBe(200);
    vi.setSystemTime(Date.now() + ACCESS_TOKEN_TTL_MS - 60_000);
    expect((await open(token.access_token)).status).toBe(200);
    vi.setSystemTime(Date.now() + 2 * 60_000);
    expect((await open(token.access_token)).status).toBe(401);
  });
});

describe("the cache", () => {
  const checked = (grantId: string): CheckedToken => ({
    user: { principal: "p", email: "p@example.test", roles: [] },
    userId: "u",
    grantId,
    resource: `${GATEWAY}/mcp`,
    expiresAtMs: Date.now() + ACCESS_TOKEN_TTL_MS,
  });

  it("keeps at most its bound, dropping the oldest; the isolate's holds MAX_CACHED_SIGN_IN_TOKENS", () => {
    expect(signInTokens.max).toBe(MAX_CACHED_SIGN_IN_TOKENS);
    const cache = new SignInTokenCache(2);
    const now = Date.now();
    for (const id of ["a", "b", "c"]) cache.store(id, checked(id), 60_000, now, cache.begin());
    expect(cache.size).toBe(2);
    expect(cache.get("a", now)).toBeUndefined();
    expect(cache.get("c", now)?.grantId).toBe("c");
  });

  it("does not keep a check that was under way when a grant was revoked", () => {
    const cache = new SignInTokenCache();
    const begun = cache.begin();
    cache.forget("u", "other");
    cache.store("a", checked("a"), 60_000, Date.now(), begun);
    expect(cache.get("a", Date.now())).toBeUndefined();
  });
});
