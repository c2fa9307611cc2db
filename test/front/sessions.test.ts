/**
 * What a session id carries and who may use it: the client's part is bounded (it
 * travels in every request's header), and a session is found only by its principal.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findSession } from "../../src/front/legacy/session";
import { MAX_SESSION_TOKEN_CHARS, sealSession, type SessionState } from "../../src/front/legacy/session-token";
import { LATEST, post, type Json } from "../helpers/gateway";

function initializeWith(capabilities: unknown, clientInfo: unknown = { name: "t", version: "1" }): Promise<Response> {
  return post("/mcp", {
    jsonrpc: "2.0",
    id: 7,
    method: "initialize",
    params: { protocolVersion: LATEST, capabilities, clientInfo },
  });
}

describe("the client's capabilities in the session id", () => {
  it.each([
    ["12 KB of capabilities", { experimental: { blob: "x".repeat(12 * 1024) } }, undefined],
    ["600 KB of capabilities", { experimental: { blob: "x".repeat(600 * 1024) } }, undefined],
    ["a 10 KB client name", {}, { name: "n".repeat(10 * 1024), version: "1" }],
  ])("refuses %s with a clear error", async (_label, capabilities, clientInfo) => {
    const response = await initializeWith(capabilities, clientInfo);
    expect(response.status).toBe(400);
    expect(response.headers.get("mcp-session-id")).toBeNull();
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(body.error.message).toMatch(/at most 4096 in the session id/);
  });

  it("accepts 3 KB of capabilities in a header that proxies accept", async () => {
    const response = await initializeWith({ sampling: {}, experimental: { blob: "x".repeat(3 * 1024) } });
    expect(response.status).toBe(200);
    const token = response.headers.get("mcp-session-id")!;
    expect(token.length).toBeGreaterThan(4 * 1024);
    expect(token.length).toBeLessThanOrEqual(MAX_SESSION_TOKEN_CHARS);
  });
});

describe("the sealed token", () => {
  it("is never minted past MAX_SESSION_TOKEN_CHARS", async () => {
    const upstreams = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `u${i}`,
        { sessionId: "s".repeat(200), protocolVersion: LATEST, capabilities: ["tools"] },
      ]),
    );
    const state = {
      sid: "0".repeat(32),
      protocolVersion: LATEST,
      clientCapabilities: {},
      clientInfo: {},
      principal: "p",
      route: "",
      upstreams,
      exp: 2e9,
    };
    await expect(sealSession(state, "test-session-secret-0123456789abcdef")).rejects.toThrow(
      /40 upstreams needs a \d+-character Mcp-Session-Id/,
    );
  });
});

describe("finding a session", () => {
  const secret = "test-session-secret-0123456789abcdef";
  const state: SessionState = {
    sid: "00112233445566778899aabbccddeeff",
    protocolVersion: LATEST,
    clientCapabilities: {},
    clientInfo: { name: "c", version: "1" },
    principal: "alice",
    route: "",
    upstreams: {},
    exp: Math.floor(Date.now() / 1000) + 600,
  };
  const where = (principal: string, route = "") => ({
    env: { SESSION_SECRET: secret },
    kv: env.GATEWAY_KV,
    route,
    principal,
    upstreams: [],
  });

  it("finds it for its own principal and route only", async () => {
    const token = await sealSession(state, secret);
    expect((await findSession(token, where("alice"))).ok).toBe(true);
    expect(await findSession(token, where("mallory"))).toEqual({ ok: false, reason: "other-principal" });
    expect(await findSession(token, where("alice", "alpha"))).toEqual({ ok: false, reason: "other-route" });
  });
});
