/**
 * The Streamable HTTP contract on the client side: headers, status codes, sessions,
 * version negotiation, batches, Origin — each bad input answered with the right status
 * and a message a person can act on.
 */
import { describe, expect, it } from "vitest";
import { version as packageVersion } from "../../package.json";
import { ACCEPT_BOTH, answer, gatewayFetch, initialize, LATEST, post, request } from "../helpers/gateway";

const PING = { jsonrpc: "2.0", id: 7, method: "ping" };

describe("POST headers", () => {
  it.each([
    ["application/json only", { accept: "application/json", "content-type": "application/json" }, 406, /Accept/],
    ["text/event-stream only", { accept: "text/event-stream", "content-type": "application/json" }, 406, /Accept/],
    ["no Accept", { "content-type": "application/json" }, 406, /Accept/],
    ["text/plain body", { accept: ACCEPT_BOTH, "content-type": "text/plain" }, 415, /Content-Type/],
    ["no Content-Type", { accept: ACCEPT_BOTH }, 415, /Content-Type/],
  ])("%s answers %i", async (_label, headers, status, message) => {
    const response = await gatewayFetch("/mcp", { method: "POST", headers, body: JSON.stringify(PING) });
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(message);
  });

  it("accepts a wildcard Accept", async () => {
    const { session } = await initialize();
    const response = await post("/mcp", PING, { session, headers: { accept: "*/*" } });
    expect(response.status).toBe(200);
  });
});

describe("malformed JSON-RPC", () => {
  it.each([
    ["not JSON", "{nope", 400, -32700],
    ["a string", '"hello"', 400, -32600],
    ["wrong jsonrpc", '{"jsonrpc":"1.0","id":1,"method":"ping"}', 400, -32600],
    ["id is an object", '{"jsonrpc":"2.0","id":{},"method":"ping"}', 400, -32600],
    ["params is a list", '{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}', 400, -32600],
    ["neither method nor result", '{"jsonrpc":"2.0","id":1}', 400, -32600],
    [
      "a duplicated params key",
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha___echo","name":"alpha___whoami","arguments":{"text":"x"}}}',
      400,
      -32600,
    ],
    ["a duplicated method", '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}', 400, -32600],
  ])("%s answers %i with code %i", async (_label, body, status, code) => {
    const { session } = await initialize();
    const response = await post("/mcp", body, { session });
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(code);
  });
});

describe("an integer id past 2^53", () => {
  // JSON.parse rounds 9007199254740993 to ...992: the answer's id matched no request of the client's.
  const big = '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}';
  it("is refused with -32600 and a null id on a 2025 session, on both routes", async () => {
    for (const path of ["/mcp", "/mcp/alpha"]) {
      const { session } = await initialize(path);
      const response = await post(path, big, { session });
      expect(response.status, path).toBe(400);
      const body = (await response.json()) as { id: unknown; error: { code: number; message: string } };
      expect(body.id, path).toBeNull();
      expect(body.error.code, path).toBe(-32600);
      expect(body.error.message, path).toMatch(/beyond 9007199254740991/);
    }
  });

  it("is refused from a 2026-07-28 client too", async () => {
    const text =
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"}}}}';
    const response = await post("/mcp", text, {
      headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it("answers the largest exact one with it", async () => {
    const { session } = await initialize();
    const response = await post("/mcp", '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}', { session });
    expect(await response.text()).toContain('"id":9007199254740991');
  });
});

describe("sessions", () => {
  it("issues an Mcp-Session-Id on initialize and requires it afterwards", async () => {
    const missing = await post("/mcp", PING);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toMatch(/Mcp-Session-Id header is required/);
    const { session } = await initialize();
    expect((await request("/mcp", session, "ping")).result).toEqual({});
  });

  it.each([
    ["garbage", "nonsense"],
    ["a tampered token", "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
  ])("answers 404 for %s", async (_label, session) => {
    const response = await post("/mcp", PING, { session });
    expect(response.status).toBe(404);
    expect(await response.text()).toMatch(/Session not found/);
  });

  it("answers 404 for a session sealed with another secret", async () => {
    const { session } = await initialize("/mcp", { vars: { SESSION_SECRET: "another-secret-0123456789abcdef" } });
    expect((await post("/mcp", PING, { session })).status).toBe(404);
  });

  it("scopes a session to its route", async () => {
    const { session } = await initialize("/mcp/alpha");
    expect((await post("/mcp", PING, { session })).status).toBe(404);
    expect((await post("/mcp/beta", PING, { session })).status).toBe(404);
    expect((await post("/mcp/alpha", PING, { session })).status).toBe(200);
  });

  it("ends a session on DELETE; later requests get 404", async () => {
    const { session } = await initialize();
    const ended = await gatewayFetch("/mcp", { method: "DELETE", headers: { "mcp-session-id": session } });
    expect(ended.status).toBe(200);
    const after = await post("/mcp", PING, { session });
    expect(after.status).toBe(404);
    expect(await after.text()).toMatch(/Session ended/);
    const again = await gatewayFetch("/mcp", { method: "DELETE", headers: { "mcp-session-id": session } });
    expect(again.status).toBe(404);
  });

  it.each(["/mcp", "/mcp/alpha"])("closes the upstream's session when the client ends its own on %s", async (path) => {
    const client = `ender-${crypto.randomUUID()}`;
    const opened = await post(path, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: client, version: "1" } },
    });
    expect(opened.status).toBe(200);
    const session = opened.headers.get("mcp-session-id")!;
    await opened.text();
    const { session: observer } = await initialize("/mcp/alpha");
    const closed = async () => {
      const asked = await post(
        "/mcp/alpha",
        { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "listen_stats", arguments: { client } } },
        { session: observer },
      );
      const text = (await answer(asked)).result.content[0].text as string;
      return (JSON.parse(text) as { closedSessions: number }).closedSessions;
    };
    expect(await closed()).toBe(0);
    expect(
      (
        await gatewayFetch(path, {
          method: "DELETE",
          headers: { "mcp-session-id": session, "mcp-protocol-version": LATEST },
        })
      ).status,
    ).toBe(200);
    expect(await closed()).toBe(1);
  });

  it("refuses to start sessions without a SESSION_SECRET", async () => {
    const response = await post(
      "/mcp",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { vars: { SESSION_SECRET: undefined } },
    );
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/SESSION_SECRET/);
  });
});

describe("protocol versions", () => {
  it.each(["2025-03-26", "2025-06-18", "2025-11-25"])("agrees to %s", async (version) => {
    const { result } = await initialize("/mcp", { version });
    expect(result.protocolVersion).toBe(version);
  });

  it("names itself with the version of package.json (the one CHANGELOG.md names)", async () => {
    const { result } = await initialize("/mcp");
    expect(result.serverInfo).toEqual({ name: "mcp-edge-gateway", version: packageVersion });
  });

  it("offers its latest version for one it does not speak", async () => {
    const { result } = await initialize("/mcp", { version: "2024-01-01" });
    expect(result.protocolVersion).toBe(LATEST);
  });

  it("answers 400 to an unsupported MCP-Protocol-Version header", async () => {
    const { session } = await initialize();
    const response = await post("/mcp", PING, { session, version: "1999-01-01" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /unsupported MCP-Protocol-Version "1999-01-01"/,
    );
  });
});

describe("batches", () => {
  const batch = [
    { jsonrpc: "2.0", id: "a", method: "ping" },
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
    {
      jsonrpc: "2.0",
      id: "b",
      method: "tools/call",
      params: { name: "alpha___echo", arguments: { text: "in a batch" } },
    },
  ];

  it("answers each request of a 2025-03-26 batch", async () => {
    const { session } = await initialize("/mcp", { version: "2025-03-26" });
    const response = await post("/mcp", batch, { session, version: "2025-03-26" });
    expect(response.status).toBe(200);
    const text = await response.text();
    const answers = text.startsWith("[") ? (JSON.parse(text) as { id: string; result: unknown }[]) : [];
    expect(answers.map((a) => a.id).sort()).toEqual(["a", "b"]);
    expect(JSON.stringify(answers)).toContain("alpha: in a batch");
  });

  it.each(["2025-06-18", "2025-11-25"])("rejects batches in %s", async (version) => {
    const { session } = await initialize("/mcp", { version });
    const response = await post("/mcp", batch, { session, version });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(new RegExp(`batches are not supported in protocol version ${version}`));
  });

  it("answers a batch of notifications with 202", async () => {
    const { session } = await initialize("/mcp", { version: "2025-03-26" });
    const response = await post("/mcp", [batch[1]], { session, version: "2025-03-26" });
    expect(response.status).toBe(202);
  });
});

describe("notifications and responses", () => {
  it("answers notifications with 202 and no body", async () => {
    const { session } = await initialize();
    const response = await post("/mcp", { jsonrpc: "2.0", method: "notifications/roots/list_changed" }, { session });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
  });

  it("answers 400 to a response whose id the gateway never issued", async () => {
    const { session } = await initialize();
    const response = await post("/mcp", { jsonrpc: "2.0", id: "made-up", result: {} }, { session });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/does not answer a request this gateway sent/);
  });
});

describe("Origin", () => {
  it.each([
    ["no Origin (a non-browser client)", undefined, 200],
    ["the gateway's own origin on a public host name (DNS rebinding)", "http://gateway.test", 403],
    ["an allowed origin", "http://localhost:6274", 200],
    ["a foreign origin", "https://evil.example", 403],
  ])("%s", async (_label, origin, status) => {
    const { session } = await initialize();
    const response = await post("/mcp", PING, { session, headers: origin ? { origin } : {} });
    expect(response.status).toBe(status);
    if (status === 403) expect(await response.text()).toMatch(new RegExp(`Origin ${origin} is not allowed`));
    if (origin && status === 200)
      expect(response.headers.get("access-control-expose-headers")).toMatch(/mcp-session-id/);
  });

  it("trusts the gateway's own origin on a loopback host", async () => {
    const { session } = await initialize();
    const response = await post("http://127.0.0.1:8787/mcp", PING, {
      session,
      headers: { origin: "http://127.0.0.1:8787" },
    });
    expect(response.status).toBe(200);
    const rebound = await post("http://evil.example:8787/mcp", PING, {
      session,
      headers: { origin: "http://evil.example:8787" },
    });
    expect(rebound.status).toBe(403);
  });

  it("answers a CORS preflight from an allowed origin", async () => {
    const response = await gatewayFetch("/mcp", {
      method: "OPTIONS",
      headers: { origin: "http://localhost:6274", "access-control-request-method": "POST" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(response.headers.get("access-control-allow-headers")).toMatch(/mcp-session-id/);
  });

  it("allows a 2026-07-28 browser client's headers in a preflight, its Mcp-Param-* ones by name", async () => {
    const asked = "content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, traceparent";
    const response = await gatewayFetch("/mcp", {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": asked,
      },
    });
    expect(response.status).toBe(204);
    const allowed = (response.headers.get("access-control-allow-headers") ?? "").split(",").map((name) => name.trim());
    // Without them the browser refused every 2026-07-28 request (Mcp-Method is on each one).
    for (const name of asked.split(", ")) expect(allowed).toContain(name);
    const odd = await gatewayFetch("/mcp", {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "mcp-param-a b, x-other",
      },
    });
    expect(odd.headers.get("access-control-allow-headers")).not.toMatch(/mcp-param-|x-other/);
  });
});

describe("routes", () => {
  it("answers 404 naming the upstreams for an unknown one", async () => {
    const response = await post("/mcp/nope", PING);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /no upstream named "nope"; this gateway serves: alpha, beta, raw/,
    );
  });

  it("answers 405 to PUT", async () => {
    const response = await gatewayFetch("/mcp", { method: "PUT" });
    expect(response.status).toBe(405);
  });

  it("answers 406 to a GET that does not accept SSE", async () => {
    const { session } = await initialize();
    const response = await gatewayFetch("/mcp", { headers: { accept: "application/json", "mcp-session-id": session } });
    expect(response.status).toBe(406);
  });

  it("describes itself at /", async () => {
    const response = await gatewayFetch("/");
    expect(await response.json()).toMatchObject({ name: "mcp-edge-gateway", upstreams: ["alpha", "beta", "raw"] });
  });
});
