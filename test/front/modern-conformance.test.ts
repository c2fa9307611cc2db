/**
 * What the conformance suite's 2026-07-28 run (`npm run conformance`) showed failing
 * through the gateway, each pinned here against real upstreams: the SDK v2 dual-era
 * fixture (test/fixtures/conformance-upstream-2026.ts), which refuses a 2025 request
 * whose body still claims 2026-07-28, and the SDK v1 upstreams of sdk-upstream.ts.
 */
import { describe, expect, inject, it } from "vitest";
import type { JsonRpcRequest } from "../../src/core/jsonrpc";
import { withoutEnvelope } from "../../src/front/modern/upstream-request";
import { answer, messageTexts, post, type Json, type Vars } from "../helpers/gateway";

const MODERN = "2026-07-28";
const DUAL_VARS = { UPSTREAMS: JSON.stringify([{ name: "dual", url: inject("dualEraUpstreamUrl") }]) };

let nextId = 1;

function modernPost(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
  vars: Vars = DUAL_VARS,
): Promise<Response> {
  const body = {
    jsonrpc: "2.0",
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "conformance-test", version: "1" },
        ...meta,
      },
    },
  };
  const name =
    typeof params["name"] === "string" ? params["name"] : typeof params["uri"] === "string" ? params["uri"] : undefined;
  const headers: Record<string, string> = {
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
  };
  return post(path, JSON.stringify(body), { headers, vars });
}

describe("a 2026 client's request relayed to an upstream the gateway speaks 2025 to", () => {
  it("reaches a dual-era SDK v2 upstream without the client's 2026 envelope (which it would refuse inside a 2025 session)", async () => {
    const response = await modernPost("/mcp/dual", "tools/call", { name: "test_simple_text", arguments: {} });
    expect(response.status).toBe(200);
    const body = (await answer(response)) as Json;
    expect(body.error).toBeUndefined();
    expect(body.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "This is a simple text response for testing." }],
    });
  });

  it("keeps the rest of _meta: the progress token still brings the upstream's progress", async () => {
    const texts = await messageTexts(
      await modernPost(
        "/mcp/dual",
        "tools/call",
        { name: "test_tool_with_progress", arguments: {} },
        { progressToken: "p-1" },
      ),
    );
    const progress = texts.map((text) => JSON.parse(text) as Json).filter((m) => m.method === "notifications/progress");
    expect(progress.map((m) => m.params.progress)).toEqual([0, 50, 100]);
    expect(progress.every((m) => m.params.progressToken === "p-1")).toBe(true);
    expect(JSON.parse(texts[texts.length - 1]!).result.content[0].text).toBe("Progress test completed (token: p-1)");
  });

  it("lists through the dual-era upstream on /mcp too, with the revision's result shape", async () => {
    const { result } = (await answer(await modernPost("/mcp", "tools/list"))) as Json;
    expect(result).toMatchObject({ resultType: "complete", cacheScope: "public" });
    expect((result.tools as { name: string }[]).map((t) => t.name)).toContain("dual___test_simple_text");
  });
});

describe("withoutEnvelope", () => {
  const wire = (text: string) => ({ text, message: JSON.parse(text) as JsonRpcRequest });
  it("removes the four envelope keys wherever they sit in _meta, every other byte kept (but the separator after a removed member)", () => {
    const text =
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{ "_meta" : {"io.modelcontextprotocol/protocolVersion":"2026-07-28", "progressToken" : 1.50,' +
      '"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c"},"traceparent":"00-x","io.modelcontextprotocol/logLevel":"info"},"name":"t"}}';
    const out = withoutEnvelope(wire(text));
    expect(out.text).toBe(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{ "_meta" : {"progressToken" : 1.50,"traceparent":"00-x"},"name":"t"}}',
    );
    expect(out.message.params?.["_meta"]).toEqual({ progressToken: 1.5, traceparent: "00-x" });
  });

  it("leaves an emptied _meta as {}, and a request without _meta as it was (the same object)", () => {
    const only = withoutEnvelope(
      wire(
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}',
      ),
    );
    expect(only.text).toBe('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}');
    const plain = wire('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
    expect(withoutEnvelope(plain)).toBe(plain);
  });
});
