/**
 * The UPSTREAMS var: validation with located errors, a bad list answering a clear
 * configuration error, credentials from secrets, service bindings, and the client's own
 * Authorization header never leaving the gateway.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it, vi } from "vitest";
import { parseUpstreams } from "../../src/config/upstreams";
import { gatewayFetch, initialize, post, request } from "../helpers/gateway";

const { raw } = inject("fixtureUrls");

describe("parseUpstreams", () => {
  it.each([
    ["not JSON", "[{", /UPSTREAMS: not valid JSON/],
    ["not a list", '{"name":"a"}', /UPSTREAMS: must be a JSON list/],
    ["unset", undefined, /UPSTREAMS: not set/],
    ["an entry that is not an object", "[1]", /UPSTREAMS\[0\]: must be an object/],
    ["the reserved name sys", '[{"name":"sys","url":"http://x/mcp"}]', /UPSTREAMS\[0\]\.name: "sys" is reserved/],
    ["a name with ___", '[{"name":"a___b","url":"http://x/mcp"}]', /UPSTREAMS\[0\]\.name: must be/],
    [
      "a name ending in _ (svc_ + ___tool would read as svc + _tool)",
      '[{"name":"svc_","url":"http://x/mcp"}]',
      /UPSTREAMS\[0\]\.name: must be .*not ending in '_'/,
    ],
    ["a name ending in __", '[{"name":"svc__","url":"http://x/mcp"}]', /UPSTREAMS\[0\]\.name: must be/],
    ["a name starting with _", '[{"name":"_svc","url":"http://x/mcp"}]', /UPSTREAMS\[0\]\.name: must be/],
    ["a name with a dot", '[{"name":"a.b","url":"http://x/mcp"}]', /UPSTREAMS\[0\]\.name: must be/],
    [
      "a duplicate name",
      '[{"name":"a","url":"http://x/mcp"},{"name":"a","url":"http://y/mcp"}]',
      /UPSTREAMS\[1\]\.name: "a" is used by another upstream/,
    ],
    ["no url", '[{"name":"a"}]', /UPSTREAMS\[0\]\.url: must be an absolute http/],
    ["a relative url", '[{"name":"a","url":"/mcp"}]', /UPSTREAMS\[0\]\.url/],
    ["a file url", '[{"name":"a","url":"file:///etc/passwd"}]', /UPSTREAMS\[0\]\.url/],
    ["a zero timeout", '[{"name":"a","url":"http://x/mcp","timeoutMs":0}]', /UPSTREAMS\[0\]\.timeoutMs/],
    [
      "a fractional idle timeout",
      '[{"name":"a","url":"http://x/mcp","idleTimeoutMs":1.5}]',
      /UPSTREAMS\[0\]\.idleTimeoutMs/,
    ],
    [
      "a credential without secret",
      '[{"name":"a","url":"http://x/mcp","credential":{}}]',
      /UPSTREAMS\[0\]\.credential/,
    ],
    [
      "a credential in a gateway-owned header",
      '[{"name":"a","url":"http://x/mcp","credential":{"secret":"S","header":"Mcp-Session-Id"}}]',
      /credential\.header/,
    ],
    ["an unknown field", '[{"name":"a","url":"http://x/mcp","tiemout":5}]', /UPSTREAMS\[0\]\.tiemout: unknown field/],
    [
      "an unknown pinning mode",
      '[{"name":"a","url":"http://x/mcp","pinning":"strict"}]',
      /UPSTREAMS\[0\]\.pinning: must be one of "off", "warn", "enforce"/,
    ],
    [
      "approveNew that is not a boolean",
      '[{"name":"a","url":"http://x/mcp","approveNew":"yes"}]',
      /UPSTREAMS\[0\]\.approveNew: must be true or false/,
    ],
    [
      "a listCache that is a number",
      '[{"name":"a","url":"http://x/mcp","listCache":60000}]',
      /UPSTREAMS\[0\]\.listCache: must be \{"ttlMs"/,
    ],
    [
      "a negative listCache.ttlMs",
      '[{"name":"a","url":"http://x/mcp","listCache":{"ttlMs":-1}}]',
      /UPSTREAMS\[0\]\.listCache\.ttlMs: must be an integer number of milliseconds from 0 \(hold none of its lists\) to 3600000/,
    ],
    [
      "a listCache.ttlMs over an hour",
      '[{"name":"a","url":"http://x/mcp","listCache":{"ttlMs":3600001}}]',
      /UPSTREAMS\[0\]\.listCache\.ttlMs/,
    ],
    [
      "an unknown listCache.cacheScope",
      '[{"name":"a","url":"http://x/mcp","listCache":{"ttlMs":1000,"cacheScope":"everyone"}}]',
      /UPSTREAMS\[0\]\.listCache\.cacheScope: must be "private"/,
    ],
    [
      "an unknown listCache field",
      '[{"name":"a","url":"http://x/mcp","listCache":{"ttlMs":1000,"ttl":5}}]',
      /UPSTREAMS\[0\]\.listCache\.ttl: unknown field/,
    ],
  ])("rejects %s", (_label, value, message) => {
    const parsed = parseUpstreams(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.join("\n")).toMatch(message);
  });

  it("accepts a JSON string and a structured list alike", () => {
    const list = [
      {
        name: "gh",
        url: "https://example.com/mcp",
        credential: { secret: "GH_TOKEN" },
        timeoutMs: 5000,
        idleTimeoutMs: 9000,
      },
      { name: "svc", service: "OTHER" },
    ];
    for (const value of [JSON.stringify(list), list]) {
      const parsed = parseUpstreams(value);
      expect(parsed.ok && parsed.value).toEqual([
        {
          name: "gh",
          url: "https://example.com/mcp",
          headers: {},
          timeoutMs: 5000,
          idleTimeoutMs: 9000,
          credential: { secret: "GH_TOKEN", header: "Authorization", scheme: "Bearer" },
        },
        {
          name: "svc",
          url: "https://upstream.internal/mcp",
          service: "OTHER",
          headers: {},
          timeoutMs: 30000,
          idleTimeoutMs: 300000,
        },
      ]);
    }
  });

  it("takes listCache with cacheScope private unless it says public", () => {
    const parsed = parseUpstreams(
      '[{"name":"a","url":"http://x/mcp","listCache":{"ttlMs":60000}},{"name":"b","url":"http://y/mcp","listCache":{"ttlMs":0,"cacheScope":"public"}}]',
    );
    expect(parsed.ok && parsed.value.map((u) => u.listCache)).toEqual([
      { ttlMs: 60000, cacheScope: "private" },
      { ttlMs: 0, cacheScope: "public" },
    ]);
  });

  it.each([["svc"], ["a_b"], ["a__b"], ["a-"], ["toString"]])("accepts the name %s", (name) => {
    expect(parseUpstreams(JSON.stringify([{ name, url: "http://x/mcp" }])).ok).toBe(true);
  });

  it("never lets two upstreams' aggregated names split the same way", () => {
    // With svc and svc_ both allowed, svc_'s tool "x" and svc's tool "_x" were one name.
    const parsed = parseUpstreams('[{"name":"svc","url":"http://x/mcp"},{"name":"svc_","url":"http://y/mcp"}]');
    expect(!parsed.ok && parsed.problems).toEqual([expect.stringMatching(/^UPSTREAMS\[1\]\.name: must be/)]);
  });

  it("reports every problem at once", () => {
    const parsed = parseUpstreams('[{"name":"sys"},{"name":"ok","url":"http://x/mcp","timeoutMs":-1}]');
    expect(!parsed.ok && parsed.problems.length).toBe(3);
  });
});

describe("a bad UPSTREAMS", () => {
  it("answers a configuration error and keeps serving", async () => {
    const vars = { UPSTREAMS: '[{"name":"sys","url":"nope"}]' };
    const response = await post(
      "/mcp",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { vars },
    );
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(
      /^Gateway configuration error: UPSTREAMS is invalid \(2 problems\); the gateway's log/,
    );
    const info = (await (await gatewayFetch("/", {}, vars)).json()) as { configurationErrors: string[] };
    expect(info.configurationErrors).toEqual([body.error.message]);
    // The same isolate still serves a good configuration.
    expect((await initialize()).session).toMatch(/^v1\./);
  });
});

describe("a bad UPSTREAMS holding a secret", () => {
  const SECRET = "ghp_s3cr3tTok3nValue0123456789";
  it.each([
    [
      "in a header (an unknown field beside it)",
      JSON.stringify([
        { name: "gh", url: "https://example.com/mcp", headers: { Authorization: `Bearer ${SECRET}` }, tiemout: 1 },
      ]),
    ],
    ["in a header name", JSON.stringify([{ name: "gh", url: "https://example.com/mcp", headers: { [SECRET]: 1 } }])],
    ["in a URL", JSON.stringify([{ name: "gh", url: `ftp://user:${SECRET}@example.com/mcp` }])],
    ["in the name", JSON.stringify([{ name: `x.${SECRET}`, url: "https://example.com/mcp" }])],
    [
      "in JSON that does not parse",
      `[{"name":"gh","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${SECRET}"}}`,
    ],
  ])("does not echo it %s on GET / or to clients, and logs the details", async (_label, upstreams) => {
    const logged: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args.join(" ")));
    try {
      const page = await (await gatewayFetch("/", {}, { UPSTREAMS: upstreams })).text();
      expect(page).toMatch(/UPSTREAMS is invalid/);
      expect(page).not.toContain("s3cr3t");
      const response = await post(
        "/mcp",
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        },
        { vars: { UPSTREAMS: upstreams } },
      );
      expect(await response.text()).not.toContain("s3cr3t");
      expect(logged.join("\n")).toMatch(/UPSTREAMS/);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("what reaches the upstream", () => {
  async function upstreamHeaders(
    vars: Record<string, unknown>,
    clientHeaders: Record<string, string>,
  ): Promise<Record<string, string>> {
    const { session } = await initialize("/mcp/raw", { vars });
    const answer = await request(
      "/mcp/raw",
      session,
      "tools/call",
      { name: "headers", arguments: {} },
      { vars, headers: clientHeaders },
    );
    return JSON.parse(answer.result.content[0].text) as Record<string, string>;
  }

  it("never forwards the client's Authorization or cookies", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw }]) };
    const headers = await upstreamHeaders(vars, {
      authorization: "Bearer client-token",
      cookie: "session=abc",
      "x-custom": "1",
    });
    expect(headers["authorization"]).toBeUndefined();
    expect(headers["cookie"]).toBeUndefined();
    expect(headers["x-custom"]).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain("client-token");
  });

  it("sends the credential from the named secret, in the configured header", async () => {
    const vars = {
      UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, credential: { secret: "RAW_TOKEN" } }]),
      RAW_TOKEN: "upstream-secret",
    };
    const headers = await upstreamHeaders(vars, { authorization: "Bearer client-token" });
    expect(headers["authorization"]).toBe("Bearer upstream-secret");
    const custom = await upstreamHeaders(
      {
        ...vars,
        UPSTREAMS: JSON.stringify([
          {
            name: "raw",
            url: raw,
            credential: { secret: "RAW_TOKEN", header: "X-Api-Key" },
            headers: { "X-Tenant": "t1" },
          },
        ]),
      },
      {},
    );
    expect(custom).toMatchObject({ "x-api-key": "upstream-secret", "x-tenant": "t1" });
  });

  it("names the missing secret instead of sending nothing", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, credential: { secret: "NOT_SET" } }]) };
    const response = await post(
      "/mcp/raw",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { vars },
    );
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /secret NOT_SET is not set \(wrangler secret put NOT_SET\)/,
    );
  });

  it("reaches an upstream through a service binding", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "svc", service: "RAW_SERVICE" }]) };
    const { session } = await initialize("/mcp", { vars });
    const list = await request("/mcp", session, "tools/list", undefined, { vars });
    expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(["svc___trap", "sys___read_payload"]);
    const missing = { UPSTREAMS: JSON.stringify([{ name: "svc", service: "NO_SUCH_BINDING" }]) };
    const response = await post(
      "/mcp/svc",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { vars: missing },
    );
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /service binding NO_SUCH_BINDING is not configured/,
    );
  });
});

describe("the test Worker's bindings", () => {
  it("hold nothing from a developer's .dev.vars or .env (vitest.config.ts; test/e2e/test-config.test.ts)", () => {
    // Set by no test configuration: only a local file beside wrangler.toml would bring it.
    expect(env).not.toHaveProperty("ADMIN_TOKEN");
  });
});
