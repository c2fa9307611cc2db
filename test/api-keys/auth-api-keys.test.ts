/**
 * API keys and secure-by-default, through the Worker with the real KV: keys made,
 * listed and revoked through the admin API; every way a request fails to authenticate,
 * with its status, challenge and body; sessions and payloads bound to the principal.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApiKey, revokeApiKey, verifyApiKey } from "../../src/features/api-keys/api-keys";
import { admin, authVars, makeKey } from "../helpers/auth";
import { gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const VARS = authVars({ apiKeys: true }, { OFFLOAD: JSON.stringify({ thresholdBytes: 4096 }) });
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const METADATA = 'Bearer resource_metadata="http://gateway.test/.well-known/oauth-protected-resource/mcp"';
/** What a client without credentials is told by a gateway that takes API keys only. */
const HINT =
  "this gateway takes API keys and does not sign clients in with OAuth: " +
  "send the header Authorization: Bearer <API key> (a key its operator made with POST /admin/api-keys)";

beforeAll(async () => {
  // Authorization is default-deny: one persona lets every role-holder call everything here.
  expect((await admin("PUT", "/personas/everything", { roles: ["user"], allow: ["*"] }, VARS)).status).toBe(200);
});
afterAll(async () => {
  await admin("DELETE", "/personas/everything", undefined, VARS);
});

describe("secure by default", () => {
  it("refuses MCP requests with a 500 naming the fix when AUTH is not set", async () => {
    const response = await post("/mcp", INIT, { vars: { AUTH: undefined } });
    expect(response.status).toBe(500);
    const body = (await response.json()) as Json;
    expect(body.error.message).toContain("the AUTH var is not set");
    expect(body.error.message).toContain('{"mode": "off"}');
    expect(
      (await gatewayFetch("/mcp", { method: "GET", headers: { accept: "text/event-stream" } }, { AUTH: "" })).status,
    ).toBe(500);
  });

  it("refuses an invalid AUTH without quoting it", async () => {
    const response = await post("/mcp", INIT, {
      vars: { AUTH: '{"apiKeys": "yes please", "jwt": {"jwksUrl": "not a url"}}' },
    });
    expect(response.status).toBe(500);
    expect(((await response.json()) as Json).error.message).toMatch(/AUTH is invalid \(\d+ problem/);
  });

  it("serves anyone, as one anonymous principal, with AUTH off", async () => {
    const { session } = await initialize("/mcp", { vars: { AUTH: '{"mode":"off"}' } });
    expect(
      (await request("/mcp", session, "tools/list", undefined, { vars: { AUTH: '{"mode":"off"}' } })).result.tools
        .length,
    ).toBeGreaterThan(0);
  });
});

describe("the admin API for keys", () => {
  it("shows a key once, lists keys without secrets, revokes at once", async () => {
    const made = await makeKey({ principal: "lister", roles: ["user"], email: "l@example.com" }, VARS);
    expect(made.key).toMatch(/^mgw_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    const stored = await env.GATEWAY_KV.get(`api-keys/${made.id}`);
    expect(stored).not.toContain(made.key);
    // The secret is everything after the id: base64url, which may itself contain "_".
    expect(stored).not.toContain(made.key.slice(`mgw_${made.id}_`.length));
    const listed = (await (await admin("GET", "/api-keys", undefined, VARS)).json()) as Json;
    const entry = listed.apiKeys.find((k: Json) => k.id === made.id);
    expect(entry).toMatchObject({ principal: "lister", roles: ["user"], email: "l@example.com" });
    expect(entry.createdAt).toBeTypeOf("string");
    expect(JSON.stringify(listed)).not.toContain(made.key.slice(40));
    expect(entry.hash).toBeUndefined();
    expect((await post("/mcp", INIT, { vars: VARS, headers: made.headers })).status).toBe(200);
    expect((await admin("DELETE", `/api-keys/${made.id}`, undefined, VARS)).status).toBe(200);
    expect((await post("/mcp", INIT, { vars: VARS, headers: made.headers })).status).toBe(401);
    expect((await admin("DELETE", `/api-keys/${made.id}`, undefined, VARS)).status).toBe(404);
  });

  it.each([
    [{ roles: [] }, "principal"],
    [{ principal: "x" }, "roles"],
    [{ principal: "x", roles: ["a"], expiresAt: "2001-01-01T00:00:00Z" }, "expiresAt"],
    [{ principal: "x", roles: ["a"], secret: "mine" }, "secret"],
  ])("refuses %j", async (body, field) => {
    const response = await admin("POST", "/api-keys", body, VARS);
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).problems.join(" ")).toContain(field);
  });

  it("needs the admin token", async () => {
    const response = await gatewayFetch("/admin/api-keys", { method: "POST", body: "{}" }, VARS);
    expect(response.status).toBe(401);
  });
});

describe("authentication failures", () => {
  let revoked: string;
  let expired: string;
  beforeAll(async () => {
    const made = await makeKey({ principal: "gone", roles: ["user"] }, VARS);
    await admin("DELETE", `/api-keys/${made.id}`, undefined, VARS);
    revoked = made.key;
    // Made straight in the store: the admin API refuses dates in the past.
    expired = (
      await createApiKey(env.GATEWAY_KV, {
        principal: "old",
        roles: ["user"],
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      })
    ).key;
  });

  const cases: [string, () => Record<string, string>, string | undefined, RegExp][] = [
    ["no Authorization header", () => ({}), HINT, /takes API keys .*send the header Authorization: Bearer <API key>/],
    ["another scheme", () => ({ authorization: "Basic dXNlcjpwYXNz" }), undefined, /must use the Bearer scheme/],
    ["an empty bearer", () => ({ authorization: "Bearer " }), "the credential is malformed", /malformed/],
    [
      "a malformed key",
      () => ({ authorization: "Bearer mgw_nothex_short" }),
      "the credential is malformed",
      /malformed/,
    ],
    [
      "a string that is neither key nor JWT",
      () => ({ authorization: "Bearer hello" }),
      "the credential is malformed",
      /malformed/,
    ],
    [
      "an unknown key",
      () => ({ authorization: `Bearer mgw_${"0".repeat(32)}_${"A".repeat(43)}` }),
      "the API key is unknown or revoked",
      /unknown or revoked/,
    ],
    [
      "a revoked key",
      () => ({ authorization: `Bearer ${revoked}` }),
      "the API key is unknown or revoked",
      /unknown or revoked/,
    ],
    ["an expired key", () => ({ authorization: `Bearer ${expired}` }), "the API key expired", /expired/],
  ];

  it.each(cases)("%s: 401 with the challenge", async (_, headers, description, message) => {
    const response = await post("/mcp", INIT, { vars: VARS, headers: headers() });
    expect(response.status).toBe(401);
    const challenge = response.headers.get("www-authenticate");
    // No credential: no error code (RFC 6750 §3.1), only what the gateway takes.
    const error =
      description === HINT
        ? `, error_description="${HINT}"`
        : description === undefined
          ? ""
          : `, error="invalid_token", error_description="${description}"`;
    expect(challenge).toBe(`${METADATA}${error}`);
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32001 } });
    expect(body.error.message).toMatch(message);
  });

  it("names the route's own metadata on /mcp/<upstream>", async () => {
    const response = await post("/mcp/alpha", INIT, { vars: VARS });
    const metadata = "http://gateway.test/.well-known/oauth-protected-resource/mcp/alpha";
    const challenge = response.headers.get("www-authenticate");
    expect(challenge).toBe(`Bearer resource_metadata="${metadata}", error_description="${HINT}"`);
  });

  it("a key with the right id and a wrong secret is unknown", async () => {
    const made = await makeKey({ principal: "twin", roles: ["user"] }, VARS);
    const forged = made.key.slice(0, -4) + (made.key.endsWith("AAAA") ? "BBBB" : "AAAA");
    expect((await post("/mcp", INIT, { vars: VARS, headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
  });
});

describe("a key presented again (record cached)", () => {
  const TTL_MS = 30_000;

  it("costs no hash while its record is cached; a wrong secret, expiry, revocation and the TTL still apply at once", async () => {
    const now = Date.now();
    const { id, key } = await createApiKey(env.GATEWAY_KV, {
      principal: "again",
      roles: ["user"],
      expiresAt: new Date(now + 2 * TTL_MS).toISOString(),
    });
    const forged = key.slice(0, -4) + (key.endsWith("AAAA") ? "BBBB" : "AAAA");
    const digests = vi.spyOn(crypto.subtle, "digest");
    try {
      expect(await verifyApiKey(env.GATEWAY_KV, key, TTL_MS, now)).toMatchObject({ ok: true });
      expect(digests).toHaveBeenCalledTimes(1);
      expect(await verifyApiKey(env.GATEWAY_KV, key, TTL_MS, now + 1)).toMatchObject({ ok: true });
      expect(digests).toHaveBeenCalledTimes(1);
      // Another secret under the same id is hashed and refused; the right key still passes unhashed.
      expect(await verifyApiKey(env.GATEWAY_KV, forged, TTL_MS, now + 2)).toEqual({ ok: false, reason: "unknown" });
      expect(digests).toHaveBeenCalledTimes(2);
      expect(await verifyApiKey(env.GATEWAY_KV, key, TTL_MS, now + 3)).toMatchObject({ ok: true });
      expect(digests).toHaveBeenCalledTimes(2);
      // Past the TTL the record is read again, and the key hashed once more.
      expect(await verifyApiKey(env.GATEWAY_KV, key, TTL_MS, now + TTL_MS)).toMatchObject({ ok: true });
      expect(digests).toHaveBeenCalledTimes(3);
      expect(await verifyApiKey(env.GATEWAY_KV, key, TTL_MS, now + 2 * TTL_MS)).toEqual({
        ok: false,
        reason: "expired",
      });
      expect(await revokeApiKey(env.GATEWAY_KV, id)).toBe(true);
      expect(await verifyApiKey(env.GATEWAY_KV, key, TTL_MS, now + 4)).toEqual({ ok: false, reason: "unknown" });
    } finally {
      digests.mockRestore();
    }
  });
});

describe("a key presented while it is being revoked", () => {
  it("is refused during and after the revocation on the isolate that revokes it", async () => {
    const { id, key } = await createApiKey(env.GATEWAY_KV, { principal: "racing", roles: ["user"] });
    // KV as the isolate sees it, the record's deletion held until the check below has run.
    let entered!: () => void;
    const deleting = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const kv = Object.assign(Object.create(env.GATEWAY_KV) as KVNamespace, {
      get: env.GATEWAY_KV.get.bind(env.GATEWAY_KV),
      delete: async (name: string) => {
        entered();
        await held;
        return env.GATEWAY_KV.delete(name);
      },
    });
    const revoking = revokeApiKey(kv, id);
    await deleting;
    // Looked up while the record was still in KV, the key was cached again and worked for the cache's TTL.
    expect(await verifyApiKey(kv, key, 30_000)).toEqual({ ok: false, reason: "unknown" });
    release();
    expect(await revoking).toBe(true);
    expect(await verifyApiKey(kv, key, 30_000)).toEqual({ ok: false, reason: "unknown" });
  });
});

describe("principal binding", () => {
  it("refuses a session presented with another principal's key", async () => {
    const alice = await makeKey({ principal: "alice", roles: ["user"] }, VARS);
    const bob = await makeKey({ principal: "bob", roles: ["user"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers: alice.headers });
    expect(
      (await request("/mcp", session, "tools/list", undefined, { vars: VARS, headers: alice.headers })).result.tools
        .length,
    ).toBeGreaterThan(0);
    const stolen = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { vars: VARS, session, headers: bob.headers },
    );
    expect(stolen.status).toBe(404);
    expect(((await stolen.json()) as Json).error.message).toMatch(/Session not found/);
    // A second key of the same principal is the same principal.
    const alice2 = await makeKey({ principal: "alice", roles: ["user"] }, VARS);
    expect(
      (
        await post(
          "/mcp",
          { jsonrpc: "2.0", id: 1, method: "tools/list" },
          { vars: VARS, session, headers: alice2.headers },
        )
      ).status,
    ).toBe(200);
  });

  it("refuses a payload read by another principal", async () => {
    const alice = await makeKey({ principal: "alice-payloads", roles: ["user"] }, VARS);
    const bob = await makeKey({ principal: "bob-payloads", roles: ["user"] }, VARS);
    const mine = await initialize("/mcp", { vars: VARS, headers: alice.headers });
    const big = await request(
      "/mcp",
      mine.session,
      "tools/call",
      { name: "alpha___big_list", arguments: { count: 200 } },
      { vars: VARS, headers: alice.headers },
    );
    const { payloadId, payloadUri } = JSON.parse(big.result.content[0].text);
    expect(payloadId).toMatch(/^[0-9a-f]{32}$/);
    const own = await request(
      "/mcp",
      mine.session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: payloadId, pointer: "/items", limit: 2 } },
      { vars: VARS, headers: alice.headers },
    );
    expect(own.result.structuredContent.items).toHaveLength(2);
    const theirs = await initialize("/mcp", { vars: VARS, headers: bob.headers });
    const read = await request(
      "/mcp",
      theirs.session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: payloadId } },
      { vars: VARS, headers: bob.headers },
    );
    expect(read.result.isError).toBe(true);
    const resource = await request(
      "/mcp",
      theirs.session,
      "resources/read",
      { uri: payloadUri },
      { vars: VARS, headers: bob.headers },
    );
    expect(resource.error.code).toBe(-32002);
    // The message says whose payloads were searched and the two reasons one is not there.
    expect(read.result.content[0].text).toBe(
      `no payload ${payloadId} for principal "bob-payloads": it may have expired (see expiresAt in the answer that offloaded it) or belong to another caller`,
    );
  });

  it("lets any session of the principal that caused an offload read it, in either era", async () => {
    const alice = await makeKey({ principal: "alice-sessions", roles: ["user"] }, VARS);
    const first = await initialize("/mcp", { vars: VARS, headers: alice.headers });
    const big = await request(
      "/mcp",
      first.session,
      "tools/call",
      { name: "alpha___big_list", arguments: { count: 200 } },
      { vars: VARS, headers: alice.headers },
    );
    const { payloadId, payloadUri } = JSON.parse(big.result.content[0].text);
    const second = await initialize("/mcp", { vars: VARS, headers: alice.headers });
    const read = await request(
      "/mcp",
      second.session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: payloadId, pointer: "/items", limit: 2 } },
      { vars: VARS, headers: alice.headers },
    );
    expect(read.result.isError, JSON.stringify(read.result)).toBeUndefined();
    expect(read.result.structuredContent.items).toHaveLength(2);
    const resource = await request(
      "/mcp",
      second.session,
      "resources/read",
      { uri: `${payloadUri}?pointer=/total` },
      { vars: VARS, headers: alice.headers },
    );
    expect(resource.result.contents).toHaveLength(1);
    // A stateless (2026-07-28) request of the same principal, which has no session at all.
    const stateless = await modern(
      "/mcp",
      "tools/call",
      { name: "sys___read_payload", arguments: { id: payloadId, pointer: "/total" } },
      { vars: VARS, headers: alice.headers },
    );
    expect(stateless.result.structuredContent.value).toBe(200);
  });
});

describe("credentials toward upstreams", () => {
  it("never forwards the client's key", async () => {
    const made = await makeKey({ principal: "forwarded", roles: ["user"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers: made.headers });
    const seen = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___whoami", arguments: {} },
      { vars: VARS, headers: made.headers },
    );
    const headers = JSON.parse(seen.result.content[0].text) as Record<string, string>;
    expect(JSON.stringify(headers)).not.toContain(made.key);
    expect(headers["authorization"]).toBeUndefined();
  });
});

describe("an OAuth client at a gateway that takes API keys (mcp-remote)", () => {
  it.each([
    ["POST", "/register"],
    ["GET", "/.well-known/oauth-authorization-server"],
    ["GET", "/.well-known/openid-configuration/mcp"],
    ["GET", "/authorize"],
    ["POST", "/token"],
  ])("%s %s: 404 saying the gateway signs no client in and takes API keys, in which header", async (method, path) => {
    const body = method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {};
    const response = await gatewayFetch(path, { method, ...body }, VARS);
    expect(response.status).toBe(404);
    const { error } = (await response.json()) as Json;
    expect(error.message).toContain("this gateway is not an OAuth authorization server");
    expect(error.message).toContain(HINT);
    expect(error.message).not.toContain("the MCP endpoint is /mcp");
  });
});

describe("protected resource metadata (RFC 9728)", () => {
  it("describes the gateway and each route, naming no authorization server when it takes API keys only", async () => {
    const vars = { AUTH: JSON.stringify({ apiKeys: true, scopes: ["mcp:tools"] }) };
    const root = (await (await gatewayFetch("/.well-known/oauth-protected-resource/mcp", {}, vars)).json()) as Json;
    const described = { resource: "http://gateway.test/mcp", scopes_supported: ["mcp:tools"] };
    expect(root.bearer_methods_supported).toEqual(["header"]);
    expect(root).toMatchObject(described);
    // The member is optional (RFC 9728 §2); an empty list sends OAuth clients to register at the gateway.
    expect(root).not.toHaveProperty("authorization_servers");
    const route = (await (
      await gatewayFetch("/.well-known/oauth-protected-resource/mcp/alpha", {}, vars)
    ).json()) as Json;
    expect(route.resource).toBe("http://gateway.test/mcp/alpha");
  });
});
