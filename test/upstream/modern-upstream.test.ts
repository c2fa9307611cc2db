/**
 * The gateway as a 2026-07-28 client: a modern-only upstream (SDK v2, `legacy: "reject"`)
 * discovered and spoken to in its own revision (envelope, mirrored headers, no session),
 * whatever the client speaks; 2025 clients get what their schema takes; /mcp mixes eras.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it, vi } from "vitest";
import { parseUpstreams, type UpstreamConfig } from "../../src/config/upstreams";
import { discoverEra, upstreamEra } from "../../src/upstream/era";
import { ANNOTATION_REFRESH_MS } from "../../src/upstream/modern-send";
import { readSse } from "../../src/core/sse";
import { answer, gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";

const MODERN = "2026-07-28";
const modernUrl = inject("modernUpstreamUrl");
const seenUrl = new URL("/seen", modernUrl).href;
const { alpha } = inject("fixtureUrls");

/** UPSTREAMS with the modern fixture (under `name`), and alpha when asked. */
function vars(name = "modern", options: { alpha?: boolean; protocol?: string } = {}): { UPSTREAMS: string } {
  const list: Record<string, unknown>[] = [
    { name, url: modernUrl, ...(options.protocol ? { protocol: options.protocol } : {}) },
  ];
  if (options.alpha) list.unshift({ name: "alpha", url: alpha });
  return { UPSTREAMS: JSON.stringify(list) };
}

type Seen = { headers: Record<string, string>; method: string; meta: Json; params: Json };

/** What the fixture received whose params mention `marker` (tests share the fixture). */
async function seen(marker: string): Promise<Seen[]> {
  const all = (await (await fetch(seenUrl)).json()) as Seen[];
  return all.filter((entry) => JSON.stringify(entry.params ?? {}).includes(marker));
}

/** What the fixture's hand-written modes received at `path` (`/raw/<mode>/<tag>`), method by method. */
async function rawSeen(path: string): Promise<string[]> {
  const all = (await (await fetch(seenUrl)).json()) as (Seen & { path?: string })[];
  return all.filter((entry) => entry.path === path).map((entry) => entry.method);
}

/** UPSTREAMS with one hand-written mode of the fixture, under a name and path of its own; `extra` joins its config. */
function rawUpstream(
  mode: string,
  extra: Record<string, unknown> = {},
): { name: string; path: string; vars: { UPSTREAMS: string } } {
  const name = marker(mode)
    .replace(/[^a-z0-9-]/g, "")
    .slice(0, 40);
  const path = `/raw/${mode}/${name}`;
  return { name, path, vars: { UPSTREAMS: JSON.stringify([{ name, url: new URL(path, modernUrl).href, ...extra }]) } };
}

let unique = 0;
function marker(label: string): string {
  return `${label}-${Date.now()}-${unique++}`;
}

describe("a 2025 client of a 2026-07-28-only upstream", () => {
  it("initializes from the upstream's server/discover, and no handshake or session reaches it", async () => {
    const client = marker("init");
    const response = await post(
      "/mcp/modern",
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: {} },
          clientInfo: { name: client, version: "1" },
        },
      },
      { vars: vars() },
    );
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as Json;
    expect(result.protocolVersion).toBe("2025-11-25");
    expect(result.serverInfo).toEqual({ name: "modern", version: "2.0.0" });
    expect(result.instructions).toBe("Modern speaks only 2026-07-28.");
    expect(result.capabilities.tools).toEqual({ listChanged: true });
    // Discovery probes its 2025 side once (with the gateway's own info; refused here): the client's initialize never reaches it.
    const all = (await (await fetch(seenUrl)).json()) as (Seen & { params?: { clientInfo?: { name?: string } } })[];
    expect(all.some((entry) => entry.method === "initialize" && entry.params?.clientInfo?.name === client)).toBe(false);
  });

  it("sends each request with the envelope and mirrored headers (Mcp-Param from x-mcp-header), without a session", async () => {
    const { session } = await initialize("/mcp/modern", { vars: vars(), capabilities: { sampling: {} } });
    const text = marker("héllo wörld");
    const echo = await request(
      "/mcp/modern",
      session,
      "tools/call",
      { name: "echo", arguments: { text } },
      { vars: vars() },
    );
    expect(echo.result.content[0].text).toBe(`modern: ${text}`);
    const [call] = await seen(text);
    // Its own _meta (the gateway's trace context) stays beside the envelope.
    expect(call!.meta).toMatchObject({
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
      "io.modelcontextprotocol/clientInfo": { name: "test", version: "1" },
    });
    expect(call!.headers["mcp-protocol-version"]).toBe(MODERN);
    expect(call!.headers["mcp-method"]).toBe("tools/call");
    expect(call!.headers["mcp-name"]).toBe("echo");
    // A non-ASCII value goes in the Base64 sentinel form.
    expect(call!.headers["mcp-param-text"]).toBe(
      `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode(text)))}?=`,
    );
    expect(call!.headers["mcp-session-id"]).toBeUndefined();
  });

  it("relays lists and results byte for byte, downgrading only what the 2025 schema forbids, and says so", async () => {
    const { session } = await initialize("/mcp/modern", { vars: vars() });
    const list = await request("/mcp/modern", session, "tools/list", undefined, { vars: vars() });
    const tools = Object.fromEntries(list.result.tools.map((tool: Json) => [tool.name, tool]));
    expect(list.result.resultType).toBe("complete");
    expect(tools.add.outputSchema).toEqual({
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"],
    });
    expect(tools.echo.inputSchema.properties.text["x-mcp-header"]).toBe("Text");
    expect(tools.shape.outputSchema).toBeUndefined();
    expect(tools.shape._meta["mcp-edge-gateway/downgraded"]).toEqual([
      { tool: "shape", member: "outputSchema", reason: expect.stringContaining("object schema") },
    ]);
    const sum = await request(
      "/mcp/modern",
      session,
      "tools/call",
      { name: "add", arguments: { a: 2, b: 3 } },
      { vars: vars() },
    );
    expect(sum.result.structuredContent).toEqual({ sum: 5 });
    expect(sum.result._meta["mcp-edge-gateway/downgraded"]).toBeUndefined();
    const shape = await request(
      "/mcp/modern",
      session,
      "tools/call",
      { name: "shape", arguments: {} },
      { vars: vars() },
    );
    expect(shape.result.structuredContent).toBeUndefined();
    expect(shape.result.content[0].text).toBe("[1,2,3]");
    expect(shape.result._meta["mcp-edge-gateway/downgraded"]).toEqual([
      { member: "structuredContent", reason: expect.stringContaining("not an object") },
    ]);
  });

  it.each(["own", "merged"])(
    "is not offered resource subscriptions (2026-07-28 removed them) on the %s route",
    async (route) => {
      const raw = rawUpstream("subscribable");
      const { result } = await initialize(route === "own" ? `/mcp/${raw.name}` : "/mcp", { vars: raw.vars });
      expect(result.capabilities.resources?.subscribe ?? false).toBe(false);
      if (route === "own") expect(result.capabilities.resources).toEqual({ listChanged: true });
    },
  );

  it("cannot write the upstream's envelope itself: an envelope key in its own _meta does not reach the upstream", async () => {
    // (One naming 2026-07-28 makes the request a modern one, which its session header contradicts: refused by the front.)
    const { session } = await initialize("/mcp/modern", { vars: vars() });
    const text = marker("claimed");
    await request(
      "/mcp/modern",
      session,
      "tools/call",
      { name: "echo", arguments: { text }, _meta: { "io.modelcontextprotocol/logLevel": "debug" } },
      { vars: vars() },
    );
    const [call] = await seen(text);
    // It never set a level (logging/setLevel): the gateway's envelope has none, and its own key is gone.
    expect(call!.meta).not.toHaveProperty(["io.modelcontextprotocol/logLevel"]);
    expect(call!.meta["io.modelcontextprotocol/protocolVersion"]).toBe(MODERN);
  });

  it("gets ping answered by the gateway (2026-07-28 removed it)", async () => {
    const { session } = await initialize("/mcp/modern", { vars: vars() });
    const pong = await request("/mcp/modern", session, "ping", undefined, { vars: vars() });
    expect(pong.result).toEqual({});
  });

  it("sets its log level without logging/setLevel reaching the upstream: the level travels in each request's envelope", async () => {
    const { session } = await initialize("/mcp/modern", { vars: vars() });
    const set = await request("/mcp/modern", session, "logging/setLevel", { level: "debug" }, { vars: vars() });
    expect(set.result).toEqual({});
    const text = marker("logged");
    await request("/mcp/modern", session, "tools/call", { name: "echo", arguments: { text } }, { vars: vars() });
    const [call] = await seen(text);
    expect(call!.meta["io.modelcontextprotocol/logLevel"]).toBe("debug");
  });

  it("mixes 2025 and 2026 upstreams on /mcp", async () => {
    const mixed = vars("modern", { alpha: true });
    const { session, result } = await initialize("/mcp", { vars: mixed });
    expect(result.instructions).toContain("Modern speaks only 2026-07-28.");
    expect(result.instructions).toContain("Alpha answers echo calls.");
    const list = await request("/mcp", session, "tools/list", undefined, { vars: mixed });
    const names = list.result.tools.map((tool: Json) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["alpha___echo", "modern___echo", "modern___add"]));
    const fromModern = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "modern___echo", arguments: { text: "to modern" } },
      { vars: mixed },
    );
    const fromAlpha = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "alpha___echo", arguments: { text: "to alpha" } },
      { vars: mixed },
    );
    expect(fromModern.result.content[0].text).toBe("modern: to modern");
    expect(fromAlpha.result.content[0].text).toBe("alpha: to alpha");
  });
});

describe("a 2026-07-28 client of a 2026-07-28-only upstream", () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
    "io.modelcontextprotocol/clientInfo": { name: "modern-client", version: "2" },
  };
  function modernPost(
    path: string,
    method: string,
    params: Record<string, unknown>,
    headers: Record<string, string> = {},
    upstreams = vars(),
  ): Promise<Response> {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: unique++,
      method,
      params: { ...params, _meta: { ...meta, ...(params["_meta"] as object | undefined) } },
    });
    const name: Record<string, string> = typeof params["name"] === "string" ? { "mcp-name": params["name"] } : {};
    return post(path, body, {
      headers: { "mcp-protocol-version": MODERN, "mcp-method": method, ...name, ...headers },
      vars: upstreams,
    });
  }

  it("relays its own envelope and Mcp-Param headers as they came", async () => {
    const text = marker("own");
    const reply = await answer(
      await modernPost(
        "/mcp/modern",
        "tools/call",
        { name: "echo", arguments: { text } },
        { "mcp-param-text": text, "mcp-param-unannotated": "kept" },
      ),
    );
    expect(reply.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: `modern: ${text}` }],
    });
    const [call] = await seen(text);
    expect(call!.meta).toMatchObject(meta);
    expect(call!.headers["mcp-param-text"]).toBe(text);
    // One the gateway could not have made from the tool's schema: forwarded as it came.
    expect(call!.headers["mcp-param-unannotated"]).toBe("kept");
  });

  it("answers an upstream's missing-capability error with HTTP 400, as 2026-07-28 requires", async () => {
    // The client declared elicitation only; `ask` needs sampling.
    const refused = await modernPost("/mcp/modern", "tools/call", { name: "ask", arguments: { text: marker("cap") } });
    expect(refused.status).toBe(400);
    const body = await answer(refused);
    expect(body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });

  it("sends a modern client's log level on in the upstream's envelope, and none when it set none", async () => {
    const text = marker("level");
    await answer(
      await modernPost(
        "/mcp/modern",
        "tools/call",
        { name: "echo", arguments: { text }, _meta: { "io.modelcontextprotocol/logLevel": "debug" } },
        { "mcp-param-text": text },
      ),
    );
    const quiet = marker("quiet");
    await answer(
      await modernPost(
        "/mcp/modern",
        "tools/call",
        { name: "echo", arguments: { text: quiet } },
        { "mcp-param-text": quiet },
      ),
    );
    expect((await seen(text))[0]!.meta["io.modelcontextprotocol/logLevel"]).toBe("debug");
    expect((await seen(quiet))[0]!.meta).not.toHaveProperty(["io.modelcontextprotocol/logLevel"]);
  });

  it("gets the upstream's input_required result with its requestState sealed by the gateway, and its retry completes the call", async () => {
    const text = marker("retry");
    const first = await answer(
      await modernPost(
        "/mcp/modern",
        "tools/call",
        { name: "confirm", arguments: { text } },
        { "mcp-param-text": text },
      ),
    );
    expect(first.result.resultType).toBe("input_required");
    expect(first.result.inputRequests.confirm.method).toBe("elicitation/create");
    const retry = await answer(
      await modernPost(
        "/mcp/modern",
        "tools/call",
        {
          name: "confirm",
          arguments: { text },
          inputResponses: { confirm: { action: "accept", content: { ok: true } } },
          requestState: first.result.requestState,
        },
        { "mcp-param-text": text },
      ),
    );
    // The client holds the gateway's sealed state (multi-round-trip.ts); the upstream got its own back.
    expect(first.result.requestState).toMatch(/^s1\./);
    expect(retry.result.content[0].text).toBe(`confirmed ${text}: true (state confirm:${text})`);
  });

  it("discovers the upstream through the gateway on both routes", async () => {
    const own = await answer(await modernPost("/mcp/modern", "server/discover", {}));
    expect(own.result._meta["io.modelcontextprotocol/serverInfo"]).toEqual({ name: "modern", version: "2.0.0" });
    expect(own.result.instructions).toBe("Modern speaks only 2026-07-28.");
    expect(own.result.capabilities.tools).toBeDefined();
    const merged = await answer(await modernPost("/mcp", "server/discover", {}, {}, vars("modern", { alpha: true })));
    expect(merged.result.instructions).toContain("Modern speaks only 2026-07-28.");
    expect(merged.result.instructions).toContain("Alpha answers echo calls.");
  });

  it("uses both eras of upstream on /mcp", async () => {
    const mixed = vars("modern", { alpha: true });
    const list = await answer(await modernPost("/mcp", "tools/list", {}, {}, mixed));
    const names = list.result.tools.map((tool: Json) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["alpha___echo", "modern___add"]));
    const sum = await answer(
      await modernPost("/mcp", "tools/call", { name: "modern___add", arguments: { a: 1, b: 2 } }, {}, mixed),
    );
    expect(sum.result.structuredContent).toEqual({ sum: 3 });
    const echo = await answer(
      await modernPost("/mcp", "tools/call", { name: "alpha___echo", arguments: { text: "x" } }, {}, mixed),
    );
    expect(echo.result.content[0].text).toBe("alpha: x");
  });
});

describe("x-mcp-header annotations the transport page forbids", () => {
  it("leave their tools out of a 2025 client's list, and a call of one still reaches the upstream", async () => {
    const raw = rawUpstream("bad-header");
    const { session } = await initialize(`/mcp/${raw.name}`, { vars: raw.vars });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const list = await request(`/mcp/${raw.name}`, session, "tools/list", undefined, { vars: raw.vars });
      // The gateway's own tools (sys___*) aside.
      expect(
        list.result.tools.map((tool: Json) => tool.name).filter((name: string) => !name.startsWith("sys___")),
      ).toEqual(["good"]);
      expect(list.result._meta["mcp-edge-gateway/downgraded"].map((note: Json) => note.tool)).toEqual([
        "spaced",
        "twice",
        "numeric",
      ]);
      expect(warn.mock.calls.map((call) => call.join(" ")).join("\n")).toContain('tool "spaced" left out');
      for (const tool of ["spaced", "twice", "numeric"]) {
        const called = await request(
          `/mcp/${raw.name}`,
          session,
          "tools/call",
          { name: tool, arguments: { region: "eu", a: "x", b: "y", n: 1 } },
          { vars: raw.vars },
        );
        expect(called.result.content[0].text).toBe(`called ${tool}`);
      }
    } finally {
      warn.mockRestore();
    }
  });
});

describe("an upstream that refuses every call's headers (-32020)", () => {
  it("has its tool list read at most once per ANNOTATION_REFRESH_MS, however often calls are refused", async () => {
    const raw = rawUpstream("mismatch");
    const { session } = await initialize(`/mcp/${raw.name}`, { vars: raw.vars });
    for (let call = 0; call < 3; call++) {
      const refused = await post(
        `/mcp/${raw.name}`,
        { jsonrpc: "2.0", id: call + 1, method: "tools/call", params: { name: "pinned", arguments: { region: 1.5 } } },
        { session, vars: raw.vars },
      );
      expect(JSON.stringify(await refused.json())).toContain("-32020");
    }
    const methods = await rawSeen(raw.path);
    expect(methods.filter((method) => method === "tools/call")).toHaveLength(3);
    expect(methods.filter((method) => method === "tools/list")).toHaveLength(1);
  });
});

describe("an upstream whose tool list cannot be read again", () => {
  it("keeps the annotations it read before: calls still carry their Mcp-Param headers", async () => {
    const raw = rawUpstream("flaky-list");
    const { session } = await initialize(`/mcp/${raw.name}`, { vars: raw.vars });
    const callIn = async (region: string) =>
      answer(
        await post(
          `/mcp/${raw.name}`,
          { jsonrpc: "2.0", id: unique++, method: "tools/call", params: { name: "pinned", arguments: { region } } },
          { session, vars: raw.vars },
        ),
      );
    expect((await callIn("eu")).result.content[0].text).toBe("called in eu");
    // Past the refresh interval (only Date moves: no waiting), a refused call makes the gateway read the list again, which fails.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + ANNOTATION_REFRESH_MS + 1_000 });
    try {
      expect(JSON.stringify(await callIn("refused"))).toContain("-32020");
      expect((await rawSeen(raw.path)).filter((method) => method === "tools/list")).toHaveLength(2);
      // The failed read did not make the gateway forget the annotations it had.
      expect((await callIn("us")).result.content[0].text).toBe("called in us");
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a 2026-07-28 upstream's HTTP 400 error answer", () => {
  it("reaches the client with the gateway's configured secrets redacted", async () => {
    const secret = `s3cret-${crypto.randomUUID()}`;
    const raw = rawUpstream("echo-auth-400", { credential: { secret: "LEAKY_TOKEN" } });
    const upstreams = { ...raw.vars, LEAKY_TOKEN: secret };
    const { session } = await initialize(`/mcp/${raw.name}`, { vars: upstreams });
    const response = await post(
      `/mcp/${raw.name}`,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "any", arguments: {} } },
      { session, vars: upstreams },
    );
    const text = await response.text();
    expect(text).toContain("token Bearer [redacted] refused");
    expect(text).not.toContain(secret);
  });
});

describe("era discovery", () => {
  it("remembers each upstream's era in KV: 2026-07-28 from server/discover, 2025 when discover is refused", async () => {
    const upstreams = vars("modern-kv", { alpha: true });
    await initialize("/mcp", { vars: upstreams });
    // Each upstream's own prefix: other files' verdicts may share this KV, more than one page of them.
    const verdict = async (name: string) => {
      const key = (await env.GATEWAY_KV.list({ prefix: `upstream-era/${name}/` })).keys[0];
      return key ? JSON.parse((await env.GATEWAY_KV.get(key.name))!) : undefined;
    };
    expect((await verdict("modern-kv")).era).toBe("modern");
    expect((await verdict("modern-kv")).discover.supportedVersions).toEqual([MODERN]);
    expect(await verdict("alpha")).toEqual({ era: "legacy" });
  });

  it("probes again when an upstream refuses the era it was remembered by", async () => {
    const name = marker("stale")
      .replace(/[^a-z0-9-]/g, "")
      .slice(0, 30);
    // Another isolate once found it 2025 (KV says so): initialize is refused with -32022, discovery runs again.
    await initialize("/mcp", { vars: vars("probe") }); // any upstream, to learn the key's shape
    const listed = await env.GATEWAY_KV.list({ prefix: "upstream-era/probe/" });
    const suffix = listed.keys[0]!.name.split("/")[2];
    await env.GATEWAY_KV.put(`upstream-era/${name}/${suffix}`, JSON.stringify({ era: "legacy" }));
    const { result } = await initialize(`/mcp/${name}`, { vars: vars(name) });
    expect(result.serverInfo.name).toBe("modern");
    const key = `upstream-era/${name}/${suffix}`;
    expect(JSON.parse((await env.GATEWAY_KV.get(key))!).era).toBe("modern");
  });

  it("probes again when an upstream remembered as 2026-07-28 refuses modern requests", async () => {
    const name = marker("was-modern")
      .replace(/[^a-z0-9-]/g, "")
      .slice(0, 30);
    const upstreams = { UPSTREAMS: JSON.stringify([{ name: "probe-alpha", url: alpha }]) };
    await initialize("/mcp", { vars: upstreams });
    const listed = await env.GATEWAY_KV.list({ prefix: "upstream-era/probe-alpha/" });
    const key = `upstream-era/${name}/${listed.keys[0]!.name.split("/")[2]}`;
    await env.GATEWAY_KV.put(
      key,
      JSON.stringify({ era: "modern", discover: { supportedVersions: [MODERN], capabilities: { tools: {} } } }),
    );
    const own = { UPSTREAMS: JSON.stringify([{ name, url: alpha }]) };
    const { session } = await initialize(`/mcp/${name}`, { vars: own });
    const echo = await request(
      `/mcp/${name}`,
      session,
      "tools/call",
      { name: "echo", arguments: { text: "back to 2025" } },
      { vars: own },
    );
    expect(echo.result.content[0].text).toBe("alpha: back to 2025");
    expect(JSON.parse((await env.GATEWAY_KV.get(key))!)).toEqual({ era: "legacy" });
  });

  it("keeps the era when a 2026-07-28 upstream refuses one caller (403): no forgetting, no probe per request", async () => {
    const raw = rawUpstream("forbidden-call");
    const { session } = await initialize(`/mcp/${raw.name}`, { vars: raw.vars });
    for (let call = 0; call < 2; call++) {
      const refused = await post(
        `/mcp/${raw.name}`,
        { jsonrpc: "2.0", id: call + 1, method: "tools/call", params: { name: "any", arguments: {} } },
        { session, vars: raw.vars },
      );
      expect(JSON.stringify(await refused.json())).toContain("403");
    }
    const methods = await rawSeen(raw.path);
    expect(methods.filter((method) => method === "server/discover")).toHaveLength(1);
    expect(methods.filter((method) => method === "tools/call")).toHaveLength(2);
  });

  it("sends the identity assertion with the discovery probe of an upstream that opted in", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const key = JSON.stringify({ ...((await crypto.subtle.exportKey("jwk", pair.privateKey)) as object), kid: "k1" });
    const name = marker("ident")
      .replace(/[^a-z0-9-]/g, "")
      .slice(0, 30);
    const upstreams = {
      UPSTREAMS: JSON.stringify([{ name, url: modernUrl, identity: { header: "X-MCP-Identity" } }]),
      IDENTITY_SIGNING_KEY: key,
    };
    await initialize(`/mcp/${name}`, { vars: upstreams });
    const all = (await (await fetch(seenUrl)).json()) as Seen[];
    const audiences = all
      .filter((entry) => entry.method === "server/discover" && entry.headers["x-mcp-identity"] !== undefined)
      .map(
        (entry) =>
          JSON.parse(atob(entry.headers["x-mcp-identity"]!.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))).aud,
      );
    expect(audiences).toContain(name);
  });

  it("skips discovery for an upstream configured as 2025-11-25 (and so cannot reach a modern-only one)", async () => {
    const response = await post(
      "/mcp/pinned",
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: marker("pinned"), version: "1" },
        },
      },
      { vars: vars("pinned", { protocol: "2025-11-25" }) },
    );
    const body = (await response.json()) as Json;
    expect(body.error.message).toContain("Unsupported protocol version");
  });

  it("takes protocol in UPSTREAMS, and refuses one it does not know", () => {
    const parsed = parseUpstreams([{ name: "m", url: "https://example.com/mcp", protocol: "2026-07-28" }]);
    expect(parsed.ok && parsed.value[0]!.protocol).toBe("2026-07-28");
    const bad = parseUpstreams([{ name: "m", url: "https://example.com/mcp", protocol: "2024-11-05" }]);
    expect(!bad.ok && bad.problems[0]).toContain("UPSTREAMS[0].protocol: must be one of");
  });
});

describe("server/discover answered as servers of each era do", () => {
  const upstream = (mode: string): UpstreamConfig => ({
    name: `raw-${mode}`,
    url: new URL(`/raw/${mode}`, modernUrl).href,
    headers: {},
    timeoutMs: 5_000,
    idleTimeoutMs: 5_000,
  });
  it.each([
    ["careless", "modern"],
    ["unsupported", "modern"],
    ["not-found", "legacy"],
    ["method-not-found", "legacy"],
    ["plain-400", "legacy"],
    ["unsupported-other", "legacy"],
  ])("%s: %s", async (mode, era) => {
    const verdict = await discoverEra(upstream(mode), env as unknown as Record<string, unknown>);
    expect(verdict.ok && verdict.value.era).toBe(era);
  });

  it("is a failure, not a verdict, when the upstream refuses the gateway's credential", async () => {
    const verdict = await discoverEra(upstream("unauthorized"), env as unknown as Record<string, unknown>);
    expect(!verdict.ok && verdict.reason === "http-status" && verdict.status).toBe(401);
  });

  it("is probed once for concurrent lookups in a cold isolate, and a refused KV write fails no request", async () => {
    const raw = rawUpstream("careless");
    const config = { ...upstream("careless"), name: raw.name, url: new URL(raw.path, modernUrl).href };
    // KV refuses writes to a key written more than about once a second; the stand-in refuses them all.
    const kv = {
      get: (key: string) => env.GATEWAY_KV.get(key),
      put: () => Promise.reject(new Error("KV PUT failed: 429 Too Many Requests")),
      delete: () => Promise.resolve(),
    };
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const verdicts = await Promise.all(
        Array.from({ length: 5 }, () =>
          upstreamEra(config, { env: env as unknown as Record<string, unknown>, kv: kv as unknown as KVNamespace }),
        ),
      );
      expect(verdicts.map((verdict) => verdict.ok && verdict.value.era)).toEqual(Array(5).fill("modern"));
    } finally {
      warn.mockRestore();
    }
    // One server/discover, and one initialize asking whether it serves 2025 clients too.
    expect(await rawSeen(raw.path)).toEqual(["server/discover", "initialize"]);
  });

  it("is a failure, not a verdict, when the answer is cut short (its deadline passed mid-body)", async () => {
    const verdict = await discoverEra(
      { ...upstream("stall-discover"), timeoutMs: 200 },
      env as unknown as Record<string, unknown>,
    );
    expect(!verdict.ok && verdict.reason).toBe("timeout");
  });

  it("is a failure, not an empty verdict, for an upstream configured as 2026-07-28 that does not answer as one", async () => {
    const raw = rawUpstream("not-found");
    const config: UpstreamConfig = {
      ...upstream("not-found"),
      name: raw.name,
      url: new URL(raw.path, modernUrl).href,
      protocol: "2026-07-28",
    };
    const verdict = await upstreamEra(config, { env: env as unknown as Record<string, unknown>, kv: env.GATEWAY_KV });
    expect(!verdict.ok && verdict.reason).toBe("bad-response");
  });

  it("is a failure, not a verdict, when the upstream cannot be reached", async () => {
    const verdict = await discoverEra(
      { ...upstream("x"), url: "http://127.0.0.1:1/mcp" },
      env as unknown as Record<string, unknown>,
    );
    expect(!verdict.ok && verdict.reason).toBe("unreachable");
  });
});

describe("a 2026-07-28 upstream's listen stream", () => {
  async function identityVars(label: string): Promise<{ name: string; vars: Record<string, string> }> {
    const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const key = JSON.stringify({ ...((await crypto.subtle.exportKey("jwk", pair.privateKey)) as object), kid: "k1" });
    const name = marker(label)
      .replace(/[^a-z0-9-]/g, "")
      .slice(0, 30);
    return {
      name,
      vars: {
        UPSTREAMS: JSON.stringify([{ name, url: modernUrl, identity: { header: "X-MCP-Identity" } }]),
        IDENTITY_SIGNING_KEY: key,
      },
    };
  }
  async function listenAudiences(): Promise<unknown[]> {
    const all = (await (await fetch(seenUrl)).json()) as Seen[];
    return all
      .filter((entry) => entry.method === "subscriptions/listen" && entry.headers["x-mcp-identity"] !== undefined)
      .map(
        (entry) =>
          JSON.parse(atob(entry.headers["x-mcp-identity"]!.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))).aud,
      );
  }

  it("is opened with the identity assertion for a 2025 client's GET stream", async () => {
    const { name, vars: upstreams } = await identityVars("get-ident");
    const { session } = await initialize(`/mcp/${name}`, { vars: upstreams });
    const abort = new AbortController();
    const stream = await gatewayFetch(
      `/mcp/${name}`,
      {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
        signal: abort.signal,
      },
      upstreams,
    );
    expect(stream.status).toBe(200);
    expect(await listenAudiences()).toContain(name);
    abort.abort();
    await stream.body?.cancel().catch(() => {});
  });

  it("is opened with the identity assertion for a 2026-07-28 client's subscriptions/listen", async () => {
    const { name, vars: upstreams } = await identityVars("listen-ident");
    const meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "listener", version: "2" },
    };
    const abort = new AbortController();
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: "l1",
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true }, _meta: meta },
    });
    const response = await gatewayFetch(
      `/mcp/${name}`,
      {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": "subscriptions/listen",
        },
        signal: abort.signal,
      },
      upstreams,
    );
    const events = readSse(response.body!)[Symbol.asyncIterator]();
    const ack = JSON.parse((await events.next()).value.data) as Json;
    expect(ack.params.notifications).toMatchObject({ toolsListChanged: true });
    expect(await listenAudiences()).toContain(name);
    abort.abort();
    await events.return?.(undefined);
  });
});

describe("a 2026-07-28 upstream's quiet listen stream", () => {
  it("stays open past the upstream's idleTimeoutMs (it is not an answer being awaited)", async () => {
    // The fixture is silent for 400 ms after the acknowledgement; the idle deadline is 100 ms.
    const raw = rawUpstream("slow-listen", { idleTimeoutMs: 100 });
    const { session } = await initialize(`/mcp/${raw.name}`, { vars: raw.vars });
    const abort = new AbortController();
    const stream = await gatewayFetch(
      `/mcp/${raw.name}`,
      {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
        signal: abort.signal,
      },
      raw.vars,
    );
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!)[Symbol.asyncIterator]();
    const first = await events.next();
    expect(first.done).toBe(false);
    expect(JSON.parse(first.value.data).method).toBe("notifications/tools/list_changed");
    abort.abort();
    await events.return?.(undefined);
  });
});

describe("a 2025 client's GET stream", () => {
  it("carries a 2026-07-28 upstream's list changes, from its subscriptions/listen", async () => {
    const { session } = await initialize("/mcp/modern", { vars: vars() });
    const abort = new AbortController();
    const stream = await gatewayFetch(
      "/mcp/modern",
      {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
        signal: abort.signal,
      },
      vars(),
    );
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!)[Symbol.asyncIterator]();
    const touched = await request(
      "/mcp/modern",
      session,
      "tools/call",
      { name: "touch", arguments: {} },
      { vars: vars() },
    );
    expect(touched.result.content[0].text).toBe("touched");
    const event = JSON.parse((await events.next()).value.data) as Json;
    expect(event.method).toBe("notifications/tools/list_changed");
    abort.abort();
    await events.return?.(undefined);
  });
});
