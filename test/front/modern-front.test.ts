/**
 * The 2026-07-28 front: modern requests (per-request `_meta`, no session) beside 2025
 * sessions on the same URLs, the envelope and header checks, `server/discover`, removed
 * methods, and tools through to real 2025 upstreams with `resultType` and caching hints.
 */
import { completeResult, LIST_TTL_MS } from "../../src/front/modern/caching";
import { describe, expect, inject, it } from "vitest";
import { version as packageVersion } from "../../package.json";
import { TRAP_INPUT_SCHEMA, TRAP_OUTPUT_SCHEMA, TRAP_TOOL } from "../fixtures/raw-upstream-bytes";
import { ADMIN_VARS, admin, putDocument } from "../helpers/admin";
import { answer, initialize, messageTexts, post, request, type Json, type Vars } from "../helpers/gateway";

const MODERN = "2026-07-28";
const { raw } = inject("fixtureUrls");
const RAW_VARS = {
  UPSTREAMS: JSON.stringify([{ name: "raw", url: raw }]),
  OFFLOAD: JSON.stringify({ exclude: ["raw___*"] }),
};

type ModernOptions = {
  capabilities?: Record<string, unknown>;
  client?: string;
  headers?: Record<string, string | null>;
  vars?: Vars;
  meta?: Record<string, unknown>;
};

let nextId = 1;

/** A modern request: `_meta` envelope and the mirrored headers, as an SDK v2 client sends them. */
function modernBody(
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
  id: number | string = nextId++,
): string {
  const meta = options.meta ?? {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
    "io.modelcontextprotocol/clientInfo": { name: options.client ?? "modern-test", version: "2" },
  };
  return JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
}

function modernHeaders(
  method: string,
  params: Record<string, unknown>,
  extra: Record<string, string | null> = {},
): Record<string, string> {
  const name =
    typeof params["name"] === "string" ? params["name"] : typeof params["uri"] === "string" ? params["uri"] : undefined;
  const headers: Record<string, string | null> = {
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
    ...extra,
  };
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== null));
}

function modernPost(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
  id?: number | string,
): Promise<Response> {
  return post(path, modernBody(method, params, options, id), {
    headers: modernHeaders(method, params, options.headers),
    vars: options.vars,
  });
}

async function modern(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
): Promise<Json> {
  return answer(await modernPost(path, method, params, options));
}

describe("both eras on one URL", () => {
  it.each(["/mcp", "/mcp/alpha"])("serves a 2025 session and modern requests side by side on %s", async (path) => {
    const { session } = await initialize(path);
    const echo = path === "/mcp" ? "alpha___echo" : "echo";
    const legacy = await request(path, session, "tools/call", { name: echo, arguments: { text: "old" } });
    const current = await modern(path, "tools/call", { name: echo, arguments: { text: "new" } });
    const legacyAgain = await request(path, session, "tools/call", { name: echo, arguments: { text: "old again" } });
    expect(legacy.result.content[0].text).toBe("alpha: old");
    expect(legacy.result.resultType).toBeUndefined();
    expect(current.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "alpha: new" }] });
    expect(legacyAgain.result.content[0].text).toBe("alpha: old again");
  });

  it("mints no session for a modern client", async () => {
    const response = await modernPost("/mcp", "tools/list");
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toBeNull();
  });

  it("leaves a legacy initialize on the legacy front", async () => {
    const { result } = await initialize("/mcp");
    expect(result.protocolVersion).toBe("2025-11-25");
  });
});

describe("server/discover", () => {
  it("on /mcp: every served revision, the merged capabilities, caching hints", async () => {
    const { result } = await modern("/mcp", "server/discover");
    expect(result.resultType).toBe("complete");
    expect(result.supportedVersions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]);
    expect(result.capabilities.tools).toEqual({ listChanged: true });
    expect(result.capabilities.resources).toEqual({ listChanged: true });
    expect(result.capabilities.tasks).toBeUndefined();
    expect(result.instructions).toContain("## alpha");
    expect(result).toMatchObject({ ttlMs: 0, cacheScope: "public" });
    expect(result._meta["io.modelcontextprotocol/serverInfo"]).toEqual({
      name: "mcp-edge-gateway",
      version: packageVersion,
    });
  });

  it("on /mcp/<upstream>: what that upstream declared", async () => {
    const { result } = await modern("/mcp/alpha", "server/discover");
    expect(result.capabilities.logging).toEqual({});
    expect(result.capabilities.resources.listChanged).toBe(true);
    expect(result.capabilities.resources.subscribe).toBeUndefined();
    expect(result.instructions).toBe("Alpha answers echo calls.");
    expect(result._meta["io.modelcontextprotocol/serverInfo"].name).toBe("alpha");
    const beta = await modern("/mcp/beta", "server/discover");
    expect(beta.result._meta["io.modelcontextprotocol/serverInfo"].name).toBe("beta");
  });
});

describe("the envelope and the headers, checked on every request", () => {
  const params = { name: "alpha___echo", arguments: { text: "x" } };
  const base = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  it.each([
    ["no clientCapabilities", { meta: { "io.modelcontextprotocol/protocolVersion": MODERN } }, -32602],
    [
      "clientCapabilities not an object",
      { meta: { ...base, "io.modelcontextprotocol/clientCapabilities": "all" } },
      -32602,
    ],
    [
      "an unsupported version (header and _meta agree)",
      {
        meta: { ...base, "io.modelcontextprotocol/protocolVersion": "2030-01-01" },
        headers: { "mcp-protocol-version": "2030-01-01" },
      },
      -32022,
    ],
    ["no MCP-Protocol-Version header", { headers: { "mcp-protocol-version": null } }, -32020],
    [
      "MCP-Protocol-Version not matching _meta",
      { meta: { ...base, "io.modelcontextprotocol/protocolVersion": "2030-01-01" } },
      -32020,
    ],
    ["no Mcp-Method header", { headers: { "mcp-method": null } }, -32020],
    ["Mcp-Method not matching the body", { headers: { "mcp-method": "tools/list" } }, -32020],
    ["no Mcp-Name header", { headers: { "mcp-name": null } }, -32020],
    ["Mcp-Name not matching the body", { headers: { "mcp-name": "alpha___add" } }, -32020],
    ["Mcp-Name in Base64 form not matching", { headers: { "mcp-name": `=?base64?${btoa("alpha___add")}?=` } }, -32020],
    ["Mcp-Name in broken Base64 form", { headers: { "mcp-name": "=?base64?!!!?=" } }, -32020],
  ] as const)("%s: HTTP 400 and %s, the id echoed", async (_case, options, code) => {
    const response = await modernPost("/mcp", "tools/call", params, options as ModernOptions, "req-7");
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(body.id).toBe("req-7");
    expect(body.error.code).toBe(code);
    if (code === -32022)
      expect(body.error.data).toEqual({
        supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        requested: "2030-01-01",
      });
  });

  it("takes Mcp-Name in Base64 form when it matches (a name that is not plain ASCII)", async () => {
    const response = await modernPost("/mcp", "tools/call", params, {
      headers: { "mcp-name": `=?base64?${btoa("alpha___echo")}?=` },
    });
    expect(response.status).toBe(200);
    expect(((await answer(response)) as Json).result.content[0].text).toBe("alpha: x");
  });

  it("classifies by the header too: a modern header without _meta is a malformed modern request", async () => {
    const response = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
      { headers: { "mcp-protocol-version": MODERN, "mcp-method": "tools/list" } },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error).toMatchObject({ code: -32602 });
  });
});

describe("removed and unbridged methods", () => {
  it.each(["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"])(
    "%s in a modern request: HTTP 404 and -32601",
    async (method) => {
      const params =
        method === "resources/subscribe" || method === "resources/unsubscribe" ? { uri: "alpha://info" } : {};
      const response = await modernPost("/mcp", method, params, {}, 42);
      expect(response.status).toBe(404);
      const body = (await response.json()) as Json;
      expect(body).toMatchObject({ id: 42, error: { code: -32601 } });
      expect(body.error.message).toContain(method);
    },
  );

  it.each(["/mcp/alpha", "/mcp"])(
    "an unknown method (refused by the upstream, or by the gateway on /mcp) on %s: HTTP 404 and -32601",
    async (path) => {
      const response = await modernPost(path, "no/such/method", {}, {}, 5);
      expect(response.status).toBe(404);
      expect(((await response.json()) as Json).error).toMatchObject({ code: -32601 });
    },
  );

  it("without the BRIDGED_CALLS binding, a 2025 upstream is not told of capabilities the gateway cannot bridge: its tool answers without asking the client", async () => {
    const body = await modern(
      "/mcp/alpha",
      "tools/call",
      { name: "ask_user", arguments: {} },
      {
        capabilities: { elicitation: {} },
        client: `elicit-${crypto.randomUUID()}`,
        vars: { BRIDGED_CALLS: undefined },
      },
    );
    // The SDK upstream refuses to elicit from a client that did not declare elicitation: a tool error, at once.
    expect(body.result).toMatchObject({ isError: true, resultType: "complete" });
    expect(JSON.stringify(body.result.content)).toMatch(/elicitation/i);
  });
});

describe("results for modern clients", () => {
  it("tools/list through a real SDK upstream: resultType, caching hints, sorted by name", async () => {
    const { result } = await modern("/mcp", "tools/list");
    expect(result).toMatchObject({ resultType: "complete", ttlMs: LIST_TTL_MS, cacheScope: "public" });
    const names = (result.tools as { name: string }[]).map((t) => t.name);
    expect(names.length).toBeGreaterThan(3);
    expect(names).toEqual([...names].sort());
  });

  it("tools/call through a real SDK upstream: resultType, no caching hints, structured content kept", async () => {
    const { result } = await modern("/mcp/alpha", "tools/call", { name: "add", arguments: { a: 2, b: 3 } });
    expect(result).toMatchObject({ resultType: "complete", structuredContent: { sum: 5 } });
    expect(result.ttlMs).toBeUndefined();
  });

  it("log messages only for a request that set logLevel", async () => {
    const quiet = await messageTexts(
      await modernPost("/mcp/alpha", "tools/call", { name: "count", arguments: { steps: 2 } }),
    );
    expect(quiet.some((text) => text.includes("notifications/message"))).toBe(false);
    const meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/logLevel": "debug",
    };
    const loud = await messageTexts(
      await modernPost("/mcp/alpha", "tools/call", { name: "count", arguments: { steps: 2 } }, { meta }),
    );
    expect(loud.some((text) => text.includes("notifications/message"))).toBe(true);
    expect(JSON.parse(loud[loud.length - 1]!).result.resultType).toBe("complete");
    // The upstream logs at "info": a request that asked for "error" and above gets none of it.
    const strict = await messageTexts(
      await modernPost(
        "/mcp/alpha",
        "tools/call",
        { name: "count", arguments: { steps: 2 } },
        { meta: { ...meta, "io.modelcontextprotocol/logLevel": "error" } },
      ),
    );
    expect(strict.some((text) => text.includes("notifications/message"))).toBe(false);
  });

  it("keeps every byte of the upstream's tool schemas, splicing in only the new members", async () => {
    const text = (await messageTexts(await modernPost("/mcp/raw", "tools/list", {}, { vars: RAW_VARS }, 9)))[0]!;
    expect(text).toBe(
      `{"jsonrpc":"2.0","id":9,"result":{"tools":[${TRAP_TOOL}],"nextCursor":"page-2","resultType":"complete","ttlMs":${LIST_TTL_MS},"cacheScope":"public"}}`,
    );
    expect(text).toContain(`"inputSchema":${TRAP_INPUT_SCHEMA}`);
    expect(text).toContain(`"outputSchema":${TRAP_OUTPUT_SCHEMA}`);
  });
});

describe("upstream sessions for modern clients", () => {
  it("are opened once per principal, route and capability set, not per request", async () => {
    const client = `handshakes-${crypto.randomUUID()}`;
    const capabilities = { experimental: { probe: { id: client } } };
    const options = { vars: RAW_VARS, client, capabilities };
    const count = async () =>
      Number(
        (await modern("/mcp/raw", "tools/call", { name: "initializes", arguments: { client } }, options)).result
          .content[0].text,
      );
    await modern("/mcp/raw", "server/discover", {}, options);
    await modern("/mcp/raw", "tools/list", {}, options);
    expect(await count()).toBe(1);
    await modern("/mcp/raw", "tools/list", {}, options);
    await modern("/mcp/raw", "tools/call", { name: "trap", arguments: {} }, options);
    expect(await count()).toBe(1);
    // Another capability set is another upstream session.
    const other = { ...options, capabilities: { experimental: { probe: { id: client, other: true } } } };
    await modern("/mcp/raw", "tools/list", {}, other);
    expect(await count()).toBe(2);
  });
});

describe("caching hints", () => {
  it.each([
    [
      "adds public hints for a gateway without authentication",
      "none",
      '{"tools":[]}',
      { cacheScope: "public", ttlMs: LIST_TTL_MS },
    ],
    [
      "adds private hints for an authenticated caller",
      "api-key",
      '{"tools":[]}',
      { cacheScope: "private", ttlMs: LIST_TTL_MS },
    ],
    [
      "narrows an upstream's own public scope and longer ttl for an authenticated caller",
      "jwt",
      '{"tools":[],"cacheScope":"public","ttlMs":600000}',
      { cacheScope: "private", ttlMs: LIST_TTL_MS },
    ],
    [
      "keeps an upstream's private scope for anyone",
      "none",
      '{"tools":[],"cacheScope":"private","ttlMs":0}',
      { cacheScope: "private", ttlMs: 0 },
    ],
  ] as const)("%s", (_label, authMethod, result, expected) => {
    const text = completeResult(`{"jsonrpc":"2.0","id":1,"result":${result}}`, "tools/list", { authMethod });
    expect(JSON.parse(text).result).toMatchObject({ resultType: "complete", ...expected });
  });
});

describe("server/discover goes through the pipeline", () => {
  it("carries the operator's instruction override, as initialize does", async () => {
    await putDocument("/overrides", { upstreams: { alpha: { instructions: "Overridden for 2026 clients." } } });
    try {
      const { result } = await modern("/mcp/alpha", "server/discover", {}, { vars: ADMIN_VARS });
      expect(result.instructions).toBe("Overridden for 2026 clients.");
      expect(result).toMatchObject({ resultType: "complete", supportedVersions: expect.arrayContaining([MODERN]) });
    } finally {
      await admin("DELETE", "/overrides");
    }
  });
});

describe("offloaded payloads of a modern client", () => {
  it("are its principal's: readable by a later request that declares other capabilities", async () => {
    const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }) };
    const call = await modern(
      "/mcp",
      "tools/call",
      { name: "alpha___big_list", arguments: { count: 200 } },
      { vars, capabilities: {} },
    );
    const envelope = JSON.parse(call.result.content[0].text) as Json;
    expect(envelope.payloadId).toMatch(/^[0-9a-f]{32}$/);
    const read = await modern(
      "/mcp",
      "tools/call",
      { name: "sys___read_payload", arguments: { id: envelope.payloadId, byteOffset: 0, byteLength: 10 } },
      { vars, capabilities: { experimental: { other: {} } } },
    );
    expect(read.result.isError).toBeUndefined();
    expect(read.result.structuredContent).toBeDefined();
  });
});
