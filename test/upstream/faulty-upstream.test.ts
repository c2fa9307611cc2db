/**
 * Upstreams that misbehave after the headers, answer other calls, leak credentials in
 * their errors, or forget sessions: each against the real gateway in workerd, with a
 * real hostile server on loopback (test/fixtures/faulty-upstream.ts).
 */
import { inject, describe, expect, it, vi } from "vitest";
import { answer, initialize, messages, messageTexts, post, request, type Json, type Vars } from "../helpers/gateway";
import { logUpstreamText, MAX_ERROR_BODY_CHARS } from "../../src/upstream/reply-body";
import { modern } from "../helpers/modern";
import { redactSecretsInJson } from "../../src/config/secrets";

const faulty = inject("faultyUpstreamUrl");
const { alpha } = inject("fixtureUrls");
/** Small deadlines keep these tests quick; the fixture stalls far longer. */
const DEADLINES = { timeoutMs: 500, idleTimeoutMs: 500 };
const UNAVAILABLE = "mcp-edge-gateway/unavailable";
const SECRET = "faulty-credential-0123456789-secret";

let tags = 0;
/** A fresh path of the fixture's `mode`, so counts are this test's own. */
function faultyUrl(mode: string): string {
  return `${faulty}/${mode}/t${Date.now()}-${tags++}`;
}

function upstreams(...list: Record<string, unknown>[]): Vars {
  return { UPSTREAMS: JSON.stringify(list) };
}

async function counts(url: string): Promise<Record<string, number>> {
  const path = new URL(url).pathname;
  return (await (await fetch(`${faulty}/counts${path}`)).json()) as Record<string, number>;
}

const initializeBody = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

describe("an upstream that stalls after its headers", () => {
  it("leaves initialize on /mcp to the others and names the stalled one", async () => {
    const vars = upstreams(
      { name: "alpha", url: alpha },
      { name: "stall", url: faultyUrl("stall-initialize"), ...DEADLINES },
    );
    const { session, result } = await initialize("/mcp", { vars });
    expect(result.serverInfo.name).toBe("mcp-edge-gateway");
    expect(result._meta[UNAVAILABLE]).toEqual([
      { upstream: "stall", error: expect.stringMatching(/upstream "stall" did not finish its answer within 500 ms/) },
    ]);
    const list = await request("/mcp", session, "tools/list", undefined, { vars });
    expect(list.result.tools.map((t: Json) => t.name)).toContain("alpha___echo");
    expect(list.result._meta[UNAVAILABLE]).toEqual([
      { upstream: "stall", error: expect.stringMatching(/did not finish its answer within 500 ms/) },
    ]);
  });

  it("answers initialize on /mcp/<upstream> with a timeout error", async () => {
    const vars = upstreams({ name: "stall", url: faultyUrl("stall-initialize"), ...DEADLINES });
    const body = (await (await post("/mcp/stall", initializeBody, { vars })).json()) as Json;
    expect(body.error).toMatchObject({ code: -32010, data: { upstream: "stall", reason: "timeout" } });
  });

  it.each([
    ["a JSON body that stops halfway", "stall-list"],
    ["an SSE stream that keeps talking but never answers", "trickle-list"],
  ])("merges tools/list without an upstream that sends %s", async (_label, mode) => {
    const vars = upstreams({ name: "alpha", url: alpha }, { name: "stall", url: faultyUrl(mode), ...DEADLINES });
    const { session, result } = await initialize("/mcp", { vars });
    expect(result._meta).toBeUndefined(); // initialize itself worked
    const list = await request("/mcp", session, "tools/list", undefined, { vars });
    expect(list.result.tools.map((t: Json) => t.name)).toContain("alpha___echo");
    expect(list.result.tools.map((t: Json) => t.name)).not.toContain("stall___echo");
    expect(list.result._meta[UNAVAILABLE]).toEqual([
      { upstream: "stall", error: expect.stringMatching(/upstream "stall" did not finish its answer within 500 ms/) },
    ]);
  });

  it("ends a tools/call whose SSE stream falls silent after one event", async () => {
    const vars = upstreams(
      { name: "alpha", url: alpha },
      { name: "stall", url: faultyUrl("stall-call"), ...DEADLINES },
    );
    const { session } = await initialize("/mcp", { vars });
    const response = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 41, method: "tools/call", params: { name: "stall___echo", arguments: {} } },
      { session, vars },
    );
    const all = await messages(response);
    expect(all[0]).toMatchObject({ method: "notifications/message", params: { data: "working" } });
    expect(all.at(-1)).toMatchObject({
      id: 41,
      error: { code: -32010, data: { upstream: "stall", reason: "timeout" } },
    });
    expect(all.at(-1).error.message).toMatch(/upstream "stall" sent nothing for 500 ms/);
    const ok = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "still" } },
      { vars },
    );
    expect(ok.result.content[0].text).toBe("alpha: still");
  });
});

it("ends a client's answer to a server request that the upstream never acknowledges", async () => {
  // Only the answer deadline can end this: the stream is never silent for idleTimeoutMs.
  const vars = upstreams({
    name: "trickle",
    url: faultyUrl("trickle-response"),
    timeoutMs: 500,
    idleTimeoutMs: 60_000,
  });
  const { session } = await initialize("/mcp/trickle", { vars });
  const response = await post("/mcp/trickle", { jsonrpc: "2.0", id: "server-asked-1", result: {} }, { session, vars });
  const body = (await response.json()) as Json;
  expect(body.error).toMatchObject({ code: -32010, data: { upstream: "trickle", reason: "timeout" } });
  expect(body.error.message).toMatch(/did not finish its answer within 500 ms/);
});

describe("a response on a call's stream that answers another request", () => {
  it.each(["/mcp", "/mcp/foreign"])(
    "is dropped on %s, and only the call's own answer reaches the client",
    async (path) => {
      const vars = upstreams({ name: "foreign", url: faultyUrl("foreign-id") });
      const { session } = await initialize(path, { vars });
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const name = path === "/mcp" ? "foreign___echo" : "echo";
        const all = await messages(
          await post(
            path,
            { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: {} } },
            { session, vars },
          ),
        );
        expect(all).toEqual([{ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "yours" }] } }]);
        expect(warn.mock.calls.map((call) => call.join(" ")).join("\n")).toMatch(/upstream "foreign" .*1007/);
      } finally {
        warn.mockRestore();
      }
    },
  );
});

describe("an upstream that echoes the gateway's credential in an error", () => {
  const credentialed = (mode: string) => ({
    ...upstreams({ name: "leaky", url: faultyUrl(mode), credential: { secret: "LEAKY_TOKEN" } }),
    LEAKY_TOKEN: SECRET,
  });

  it.each([
    ["an HTTP 500 body", "echo-auth-500", /answered HTTP 500/, "http-status"],
    ["a body that is not JSON", "echo-auth-not-json", /not JSON/, "bad-response"],
    ["an SSE event that is not JSON-RPC", "echo-auth-sse", /not a JSON-RPC message/, "bad-response"],
  ])("keeps %s out of the client's error", async (_label, mode, message, reason) => {
    const vars = credentialed(mode);
    const { session } = await initialize("/mcp/leaky", { vars });
    const error = vi.spyOn(console, "warn").mockImplementation(() => {});
    let text: string;
    try {
      const response = await post(
        "/mcp/leaky",
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: {} } },
        { session, vars },
      );
      text = JSON.stringify(await messages(response));
      // The operator still learns what the upstream said, without the secret.
      const logged = error.mock.calls.map((call) => call.join(" ")).join("\n");
      expect(logged).toMatch(/upstream "leaky"/);
      expect(logged).toMatch(/request had authorization/);
      expect(logged).not.toContain(SECRET);
    } finally {
      error.mockRestore();
    }
    const body = JSON.parse(text) as Json[];
    expect(body.at(-1).error).toMatchObject({ code: -32010, data: { upstream: "leaky", reason } });
    expect(body.at(-1).error.message).toMatch(message);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("request had authorization");
  });

  it("redacts a configured secret from any error text an upstream's words reach", async () => {
    const vars = credentialed("echo-auth-init");
    const body = (await (await post("/mcp/leaky", initializeBody, { vars })).json()) as Json;
    expect(body.error.data).toMatchObject({ upstream: "leaky" });
    expect(body.error.message).toMatch(/initialize failed: token Bearer \[redacted\] refused/);
    expect(JSON.stringify(body)).not.toContain(SECRET);
  });

  it("redacts it from the upstream's own JSON-RPC error to a call, relayed as the answer", async () => {
    const vars = credentialed("echo-auth-error");
    const { session } = await initialize("/mcp/leaky", { vars });
    const call = await request("/mcp/leaky", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    // Relayed as the upstream's bytes, the error quoted the credential to the client.
    expect(call.error).toEqual({ code: -32603, message: "token Bearer [redacted] refused" });
  });

  it("redacts it from that error when the call ran bridged (a 2026-07-28 client that may be asked)", async () => {
    // The BridgedCall object sends the credential with its own bindings: one it has (SESSION_SECRET, also redacted).
    const vars = upstreams({
      name: "leaky",
      url: faultyUrl("echo-auth-error"),
      credential: { secret: "SESSION_SECRET" },
    });
    const call = await modern(
      "/mcp/leaky",
      "tools/call",
      { name: "echo", arguments: {} },
      { vars, capabilities: { elicitation: {} } },
    );
    expect(call.error).toEqual({ code: -32603, message: "token Bearer [redacted] refused" });
  });

  it("leaves no start of it in a log line cut after other secrets were redacted", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const other = "o".repeat(100);
      const env = {
        ...upstreams({ name: "leaky", url: "http://127.0.0.1:1/", credential: { secret: "LEAKY_TOKEN" } }),
        LEAKY_TOKEN: SECRET,
        ADMIN_TOKEN: other,
      };
      logUpstreamText(
        { upstream: "leaky", env },
        "answered HTTP 500",
        `${other}${other}${"x".repeat(MAX_ERROR_BODY_CHARS - 120)}${SECRET}`,
      );
      // Cut at 300 + the longest secret, then redacted and cut again: the shorter text pulled a secret's start inside.
      expect(String(warn.mock.calls[0]?.[0])).not.toContain(SECRET.slice(0, 3));
    } finally {
      warn.mockRestore();
    }
  });

  it("redacts an escaped credential from an error nested deeper than the stack goes", () => {
    const env = {
      ...upstreams({ name: "leaky", url: "http://127.0.0.1:1/", credential: { secret: "LEAKY_TOKEN" } }),
      LEAKY_TOKEN: SECRET,
    };
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const escaped = SECRET.replace("-", "\\u002d");
    const text = `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"token ${escaped} refused","data":${deep}}}`;
    // Walked as a parsed value, the nesting overflowed the stack (and the call ended as an internal error).
    const redacted = redactSecretsInJson(text, env);
    expect((JSON.parse(redacted) as { error: { message: string } }).error.message).toBe("token [redacted] refused");
    expect(redacted.endsWith(`"data":${deep}}}`)).toBe(true);
  });

  it("leaves no start of it in a log line cut across it", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const env = {
        ...upstreams({ name: "leaky", url: "http://127.0.0.1:1/", credential: { secret: "LEAKY_TOKEN" } }),
        LEAKY_TOKEN: SECRET,
      };
      logUpstreamText(
        { upstream: "leaky", env },
        "answered HTTP 500",
        `${"x".repeat(MAX_ERROR_BODY_CHARS - 10)}Bearer ${SECRET} and more`,
      );
      const line = String(warn.mock.calls[0]?.[0]);
      // Cut first, then redacted, the line ended with the secret's first three characters.
      expect(line).not.toContain(SECRET.slice(0, 3));
    } finally {
      warn.mockRestore();
    }
  });

  it("redacts it from the merged list's note about a failing upstream", async () => {
    const vars = {
      ...credentialed("echo-auth-list"),
      ...upstreams(
        { name: "alpha", url: alpha },
        { name: "leaky", url: faultyUrl("echo-auth-list"), credential: { secret: "LEAKY_TOKEN" } },
      ),
    };
    const { session } = await initialize("/mcp", { vars });
    const list = await request("/mcp", session, "tools/list", {}, { vars });
    expect(list.result.tools.map((t: Json) => t.name)).toContain("alpha___echo");
    expect(JSON.stringify(list.result._meta)).toMatch(/token Bearer \[redacted\] refused/);
    expect(JSON.stringify(list)).not.toContain(SECRET);
  });
});

describe("an upstream that answers a forgotten session with HTTP 400", () => {
  it("is initialized again and the request retried in the new session", async () => {
    const url = faultyUrl("forgetful");
    const vars = upstreams({ name: "forgetful", url });
    const { session } = await initialize("/mcp/forgetful", { vars });
    const first = await request("/mcp/forgetful", session, "tools/call", { name: "forget", arguments: {} }, { vars });
    const before = first.result.content[0].text;
    const after = await request("/mcp/forgetful", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(after.result.content[0].text).toMatch(/^in session s-\d+$/);
    expect(after.result.content[0].text).not.toBe(before);
    expect((await counts(url))["initialize"]).toBe(2);
  });

  it("is initialized again at most once per request when it refuses every session", async () => {
    const url = faultyUrl("always-400");
    const vars = upstreams({ name: "refusing", url });
    const { session } = await initialize("/mcp/refusing", { vars });
    const call = await request("/mcp/refusing", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(call.error).toMatchObject({ code: -32010, data: { upstream: "refusing", reason: "http-status" } });
    expect(call.error.message).toMatch(/HTTP 400/);
    const seen = await counts(url);
    expect(seen["initialize"]).toBe(2);
    expect(seen["tools/call"]).toBe(2);
  });

  it("keeps the session and relays the error when the 400 answers the request itself (its id)", async () => {
    const url = faultyUrl("call-400");
    const vars = {
      ...upstreams({ name: "strict", url, credential: { secret: "STRICT_TOKEN" } }),
      STRICT_TOKEN: SECRET,
    };
    const { session } = await initialize("/mcp/strict", { vars });
    const call = await request("/mcp/strict", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(call.error).toEqual({
      code: -32602,
      message: 'Invalid params: "path" is required (token Bearer [redacted])',
    });
    const again = await request("/mcp/strict", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(again.error.code).toBe(-32602);
    const seen = await counts(url);
    // Taken as a forgotten session, each call made a new handshake and was sent twice.
    expect(seen["initialize"]).toBe(1);
    expect(seen["tools/call"]).toBe(2);
  });

  it("reads a longer error to tell it answers the request (past the 4 KiB read for the log)", async () => {
    const url = faultyUrl("call-400-long");
    const vars = upstreams({ name: "verbose", url });
    const { session } = await initialize("/mcp/verbose", { vars });
    const call = await request("/mcp/verbose", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    expect(call.error).toMatchObject({ code: -32602, message: "Invalid params", data: { detail: "d".repeat(10_000) } });
    expect((await counts(url))["initialize"]).toBe(1);
  });

  it("redacts the credential from the relayed error however the upstream escaped it", async () => {
    const vars = {
      ...upstreams({ name: "escaping", url: faultyUrl("call-400-escaped"), credential: { secret: "ESCAPING_TOKEN" } }),
      ESCAPING_TOKEN: SECRET,
    };
    const { session } = await initialize("/mcp/escaping", { vars });
    const call = await request("/mcp/escaping", session, "tools/call", { name: "echo", arguments: {} }, { vars });
    // Matched on the bytes, the escaped credential reached the client, whose parser decoded it.
    expect(call.error).toEqual({ code: -32602, message: "Invalid params (token Bearer [redacted])" });
  });
});

it("answers a client's request through the helpers", async () => {
  // Sanity: the fixture's well-behaved path works through the gateway.
  const vars = upstreams({ name: "fine", url: faultyUrl("fine") });
  const { session } = await initialize("/mcp/fine", { vars });
  expect(
    await answer(
      await post(
        "/mcp/fine",
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } },
        { session, vars },
      ),
    ),
  ).toMatchObject({
    id: 2,
    result: { content: [{ text: "ok" }] },
  });
});

describe("an upstream whose list is larger than the gateway holds in memory", () => {
  it.each(["huge-list", "huge-list-sse"])(
    "%s: the list fails with a clear reason, and the gateway keeps serving",
    async (mode) => {
      const vars = upstreams({ name: "huge", url: faultyUrl(mode) });
      const { session } = await initialize("/mcp/huge", { vars });
      const list = await request("/mcp/huge", session, "tools/list", {}, { vars });
      expect(list.error.data).toMatchObject({ upstream: "huge", reason: "bad-response" });
      expect(list.error.message).toMatch(/larger than 16777216 bytes/);
      const ok = await request("/mcp/huge", session, "tools/call", { name: "echo", arguments: {} }, { vars });
      expect(ok.result).toBeDefined();
    },
  );
});

describe("an upstream whose SSE event is all empty data lines", () => {
  it("is refused as too large once its lines pass what the gateway holds, and the gateway keeps serving", async () => {
    const vars = upstreams({ name: "lines", url: faultyUrl("empty-data-list") });
    const { session } = await initialize("/mcp/lines", { vars });
    const list = await request("/mcp/lines", session, "tools/list", {}, { vars });
    // Held whole, the event's 300,000 views were read as one message of line breaks.
    expect(list.error.data).toMatchObject({ upstream: "lines", reason: "bad-response" });
    expect(list.error.message).toMatch(/larger than 16777216 bytes/);
    expect(
      (await request("/mcp/lines", session, "tools/call", { name: "echo", arguments: {} }, { vars })).result,
    ).toBeDefined();
  });
});

describe("an upstream that answers a call with a JSON array (a 2025-03-26 batch)", () => {
  it("relays each element with the upstream's own bytes", async () => {
    const vars = upstreams({ name: "batched", url: faultyUrl("batch-answer") });
    const { session } = await initialize("/mcp/batched", { vars });
    const response = await post(
      "/mcp/batched",
      { jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "echo", arguments: {} } },
      { session, vars },
    );
    const texts = await messageTexts(response);
    expect(texts.at(-1)).toBe(
      '{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"n"}],"structuredContent":{"ratio":1.0,"big":9223372036854775807}}}',
    );
    expect(texts.some((text) => text.includes('"data":"batched"'))).toBe(true);
  });
});
