/**
 * `auth: {"type": "tokenExchange"}`: a caller's own access token (a JWT of AUTH.jwt's
 * issuer) is exchanged at the identity provider (RFC 8693, the small endpoint of
 * test/fixtures/user-credentials-upstream.ts: oidc-provider implements no token exchange) for
 * one aimed at the upstream; two principals reach the upstream as themselves, an exchanged
 * token is reused until it expires, the client's own token never reaches the upstream, a
 * caller with an API key and a refused exchange get clear errors, in both eras and for an
 * upstream added live. Through the Worker in workerd.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { gatewayFetch, initialize, request, type Json, type Vars } from "../helpers/gateway";
import { ADMIN_TOKEN, admin, authVars, makeKey } from "../helpers/auth";
import { bearer, claims, jwtAuth, sign } from "../helpers/jwt";
import { modern } from "../helpers/modern";

const { origin, exchangeClient } = inject("userCredentialsUpstream");
const label = crypto.randomUUID().slice(0, 8);
const path = `/x${label}/mcp`;
const auth = {
  type: "tokenExchange",
  tokenEndpoint: `${origin}/token`,
  clientId: exchangeClient.id,
  clientSecret: "EXCHANGE_CLIENT_SECRET",
};
const UPSTREAMS = [{ name: "exchanged", url: `${origin}${path}`, auth }];
const VARS: Vars = authVars(
  { apiKeys: true, ...jwtAuth(inject("jwks").url) },
  { UPSTREAMS: JSON.stringify(UPSTREAMS), FILTER_CACHE_TTL_MS: "0", EXCHANGE_CLIENT_SECRET: exchangeClient.secret },
);

async function tokenOf(sub: string): Promise<string> {
  return sign(claims({ sub, realm_access: { roles: ["user"] } }));
}

async function whoami(token: string, tool = "exchanged___whoami"): Promise<Json> {
  const headers = bearer(token);
  const { session } = await initialize("/mcp", { vars: VARS, headers });
  return request("/mcp", session, "tools/call", { name: tool, arguments: {} }, { vars: VARS, headers });
}

function issuedTo(response: Json): { sub: string; resource: string } {
  expect(response.result?.isError, JSON.stringify(response)).not.toBe(true);
  return JSON.parse(response.result.content[0].text).issued;
}

async function exchangesOf(sub: string): Promise<number> {
  return ((await (await fetch(`${origin}/token/stats`)).json()) as Record<string, number>)[sub] ?? 0;
}

describe("tokenExchange upstreams", () => {
  beforeAll(async () => {
    const persona = { roles: ["user"], allow: ["exchanged___*", "livex*___*"] };
    expect((await admin("PUT", "/personas/exchange-users", persona, VARS)).status).toBe(200);
  });
  afterAll(async () => {
    await (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV.delete("live-upstreams");
  });

  it("gives two principals their own upstream identities, and reuses an exchanged token", async () => {
    const [alice, bob] = [`alice-${label}`, `bob-${label}`];
    const [aliceToken, bobToken] = [await tokenOf(alice), await tokenOf(bob)];
    expect(issuedTo(await whoami(aliceToken))).toEqual({ sub: alice, resource: `${origin}${path}`, audience: null });
    expect(issuedTo(await whoami(bobToken)).sub).toBe(bob);
    expect(issuedTo(await whoami(aliceToken)).sub).toBe(alice);
    // Alice's second call (another session, the same token) used the token kept for her.
    expect(await exchangesOf(alice)).toBe(1);
    expect(await exchangesOf(bob)).toBe(1);

    // No request reaching the upstream carried either client's own token.
    const seen = JSON.stringify(await (await fetch(`${origin}/x${label}/seen`)).json());
    expect(seen).toContain("Bearer xt_");
    expect(seen).not.toContain(aliceToken);
    expect(seen).not.toContain(bobToken);
  });

  it("works for a 2026-07-28 client", async () => {
    const sub = `carol-${label}`;
    const params = { name: "exchanged___whoami", arguments: {} };
    const answer = await modern("/mcp", "tools/call", params, { vars: VARS, headers: bearer(await tokenOf(sub)) });
    expect(issuedTo(answer).sub).toBe(sub);
  });

  it("refuses a caller with an API key, saying what it takes", async () => {
    const before = ((await (await fetch(`${origin}/x${label}/seen`)).json()) as unknown[]).length;
    const { headers } = await makeKey({ principal: `keyed-${label}`, roles: ["user"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers });
    const params = { name: "exchanged___whoami", arguments: {} };
    const refused = await request("/mcp", session, "tools/call", params, { vars: VARS, headers });
    expect(refused.error?.data?.reason, JSON.stringify(refused)).toBe("credential-unavailable");
    expect(refused.error.message).toContain("a gateway API key");
    expect(refused.error.message).toContain("access token");
    // Nothing was sent upstream on its behalf.
    const after = ((await (await fetch(`${origin}/x${label}/seen`)).json()) as unknown[]).length;
    expect(after).toBe(before);
  });

  it("says so when the identity provider refuses the exchange", async () => {
    const refused = await whoami(await tokenOf(`denied-${label}`));
    expect(refused.error?.data?.reason, JSON.stringify(refused)).toBe("credential-unavailable");
    expect(refused.error.message).toContain("refused the exchange (HTTP 400, invalid_grant)");
  });

  it("says so when the client secret it names is not set, and sends nothing", async () => {
    const unset: Vars = { ...VARS, EXCHANGE_CLIENT_SECRET: "" };
    const headers = bearer(await tokenOf(`unset-${label}`));
    const { session } = await initialize("/mcp", { vars: unset, headers });
    const params = { name: "exchanged___whoami", arguments: {} };
    const refused = await request("/mcp", session, "tools/call", params, { vars: unset, headers });
    expect(refused.error?.data?.reason, JSON.stringify(refused)).toBe("credential-unavailable");
    expect(refused.error.message).toContain("EXCHANGE_CLIENT_SECRET");
    expect(await exchangesOf(`unset-${label}`)).toBe(0);
  });

  it("exchanges for an upstream added live, aimed at its own resource", async () => {
    const live = `livex${label.slice(0, 6)}`;
    const livePath = `/lx${label}/mcp`;
    const body = { url: `${origin}${livePath}`, auth: { ...auth, audience: "board-api" } };
    // Loopback upstreams may be added while the gateway itself is reached on loopback (npm start).
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const at = `http://127.0.0.1:8787/admin/upstreams/${live}?probe=false`;
    const put = await gatewayFetch(at, { method: "PUT", headers, body: JSON.stringify(body) }, VARS);
    expect(put.status, await put.clone().text()).toBe(201);
    try {
      const issued = issuedTo(await whoami(await tokenOf(`dave-${label}`), `${live}___whoami`));
      expect(issued).toEqual({ sub: `dave-${label}`, resource: `${origin}${livePath}`, audience: "board-api" });
    } finally {
      // The suite shares one KV: an upstream left here would be every later file's (and need a token they lack).
      const removed = await gatewayFetch(at, { method: "DELETE", headers }, VARS);
      expect(removed.status).toBe(200);
    }
  });
});
