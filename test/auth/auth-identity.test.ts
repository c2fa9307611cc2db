/**
 * Identity to upstreams: an upstream that opted in receives a gateway-signed JWT naming
 * the caller (verified here with jose against the gateway's /.well-known/jwks.json, the
 * way an upstream would), and its own credential; never the client's key. An upstream
 * that did not opt in receives no assertion.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { redactSecrets } from "../../src/config/secrets";
import { admin, authVars, makeKey } from "../helpers/auth";
import { gatewayFetch, initialize, LATEST, post, request, type Json } from "../helpers/gateway";

const alphaUrl = inject("fixtureUrls").alpha;
const UPSTREAMS = JSON.stringify([
  { name: "alpha", url: alphaUrl, identity: { header: "X-MCP-Identity" }, credential: { secret: "ALPHA_TOKEN" } },
  { name: "plain", url: alphaUrl },
]);
let vars: Record<string, unknown>;

async function signingKey(kid = "test-gateway-1"): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return JSON.stringify({ ...((await crypto.subtle.exportKey("jwk", pair.privateKey)) as object), kid });
}

async function publishedKeys(withVars: Record<string, unknown>): Promise<JSONWebKeySet> {
  const response = await gatewayFetch("/.well-known/jwks.json", {}, withVars);
  expect(response.status).toBe(200);
  return (await response.json()) as JSONWebKeySet;
}

async function headersSeen(upstream: string, headers: Record<string, string>, withVars = vars): Promise<Json> {
  const { session } = await initialize("/mcp", { vars: withVars, headers });
  const answer = await request(
    "/mcp",
    session,
    "tools/call",
    { name: `${upstream}___whoami`, arguments: {} },
    { vars: withVars, headers },
  );
  return answer.result.isError ? answer.result : JSON.parse(answer.result.content[0].text);
}

beforeAll(async () => {
  vars = authVars(
    { apiKeys: true },
    { UPSTREAMS, ALPHA_TOKEN: "alpha-own-credential", IDENTITY_SIGNING_KEY: await signingKey() },
  );
  expect(
    (
      await admin(
        "PUT",
        "/personas/identity",
        { roles: ["r-identity"], allow: ["*___whoami", "alpha___listen_stats"] },
        vars,
      )
    ).status,
  ).toBe(200);
});
afterAll(async () => {
  await admin("DELETE", "/personas/identity", undefined, vars);
});

describe("identity assertions", () => {
  it("tells an upstream that opted in who calls, verifiably, beside its own credential only", async () => {
    const { key, headers } = await makeKey(
      { principal: "carol", email: "carol@example.com", roles: ["r-identity"] },
      vars,
    );
    const seen = await headersSeen("alpha", headers);
    expect(seen["authorization"]).toBe("Bearer alpha-own-credential");
    expect(JSON.stringify(seen)).not.toContain(key);
    const jwks = (await (await gatewayFetch("/.well-known/jwks.json", {}, vars)).json()) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const { payload, protectedHeader } = await jwtVerify(seen["x-mcp-identity"], createLocalJWKSet(jwks), {
      issuer: "mcp-edge-gateway",
      audience: "alpha",
    });
    expect(protectedHeader).toMatchObject({ alg: "ES256", kid: "test-gateway-1" });
    expect(payload).toMatchObject({
      sub: "carol",
      email: "carol@example.com",
      roles: ["r-identity"],
      persona: "identity",
    });
    expect(payload.exp! - payload.iat!).toBe(300);
    // Meant for alpha only: another audience does not verify.
    await expect(jwtVerify(seen["x-mcp-identity"], createLocalJWKSet(jwks), { audience: "plain" })).rejects.toThrow();
  });

  it("sends nothing to an upstream that did not opt in", async () => {
    const { headers } = await makeKey({ principal: "dave", roles: ["r-identity"] }, vars);
    const seen = await headersSeen("plain", headers);
    expect(seen["x-mcp-identity"]).toBeUndefined();
    expect(seen["authorization"]).toBeUndefined();
  });

  it("refuses to call an upstream that opted in when the signing key is missing", async () => {
    const without = { ...vars, IDENTITY_SIGNING_KEY: undefined };
    const { headers } = await makeKey({ principal: "erin", roles: ["r-identity"] }, without);
    const response = await initialize("/mcp", { vars: without, headers });
    const answer = await request(
      "/mcp",
      response.session,
      "tools/call",
      { name: "alpha___whoami", arguments: {} },
      { vars: without, headers },
    );
    expect(JSON.stringify(answer)).toContain("IDENTITY_SIGNING_KEY secret is not set");
    expect((await (await gatewayFetch("/.well-known/jwks.json", {}, without)).json()) as Json).toEqual({ keys: [] });
  });
});

describe("rotating the identity signing key", () => {
  it("keeps the previous key published (never signing with it) while IDENTITY_SIGNING_KEY_PREVIOUS is set", async () => {
    const [oldKey, newKey] = [await signingKey("rotate-old"), await signingKey("rotate-new")];
    const { headers } = await makeKey({ principal: "rotating", roles: ["r-identity"] }, vars);
    const before = { ...vars, IDENTITY_SIGNING_KEY: oldKey };
    const oldToken = (await headersSeen("alpha", headers, before))["x-mcp-identity"] as string;

    const during = { ...vars, IDENTITY_SIGNING_KEY: newKey, IDENTITY_SIGNING_KEY_PREVIOUS: oldKey };
    const jwks = await publishedKeys(during);
    expect(jwks.keys.map((key) => key.kid)).toEqual(["rotate-new", "rotate-old"]);
    for (const key of jwks.keys) expect(key).not.toHaveProperty("d");
    // An upstream holding a token of the old key still verifies it against what is published now.
    await jwtVerify(oldToken, createLocalJWKSet(jwks), { issuer: "mcp-edge-gateway", audience: "alpha" });
    // New tokens are signed with the new key only.
    const newToken = (await headersSeen("alpha", headers, during))["x-mcp-identity"] as string;
    const { protectedHeader } = await jwtVerify(newToken, createLocalJWKSet(jwks), {
      issuer: "mcp-edge-gateway",
      audience: "alpha",
    });
    expect(protectedHeader.kid).toBe("rotate-new");
    await expect(
      jwtVerify(newToken, createLocalJWKSet({ keys: jwks.keys.filter((key) => key.kid === "rotate-old") })),
    ).rejects.toThrow();

    // Once the previous secret is removed, the old key is gone.
    const after = { ...vars, IDENTITY_SIGNING_KEY: newKey };
    const rest = await publishedKeys(after);
    expect(rest.keys.map((key) => key.kid)).toEqual(["rotate-new"]);
    await expect(jwtVerify(oldToken, createLocalJWKSet(rest))).rejects.toThrow();
  });

  it("publishes the current key alone when the previous one is not a P-256 private key, and redacts it", async () => {
    const newKey = await signingKey("rotate-only");
    const broken = "not-a-jwk-but-a-secret-all-the-same";
    const jwks = await publishedKeys({ ...vars, IDENTITY_SIGNING_KEY: newKey, IDENTITY_SIGNING_KEY_PREVIOUS: broken });
    expect(jwks.keys.map((key) => key.kid)).toEqual(["rotate-only"]);
    expect(redactSecrets(`upstream said ${broken}`, { IDENTITY_SIGNING_KEY_PREVIOUS: broken })).toBe(
      "upstream said [redacted]",
    );
  });
});

describe("identity assertions on a 2025 client's GET stream", () => {
  it("are sent to the upstream that opted in, and only to it", async () => {
    const { headers } = await makeKey({ principal: "erin", roles: ["r-identity"] }, vars);
    const client = `identity-stream-${crypto.randomUUID()}`;
    const init = await post(
      "/mcp",
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: client, version: "1" } },
      },
      { vars, headers },
    );
    const session = init.headers.get("mcp-session-id")!;
    await post("/mcp", { jsonrpc: "2.0", method: "notifications/initialized" }, { session, vars, headers });
    const stream = await gatewayFetch(
      "/mcp",
      {
        method: "GET",
        headers: { ...headers, accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LATEST },
      },
      vars,
    );
    expect(stream.status).toBe(200);
    // Both routes of the list are the same alpha server: "alpha" opted in, "plain" did not.
    const stats = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___listen_stats", arguments: { client } },
      { vars, headers },
    );
    expect(JSON.parse(stats.result.content[0].text)).toMatchObject({ openStreams: 2, identifiedStreams: 1 });
    await stream.body?.cancel();
  });
});
