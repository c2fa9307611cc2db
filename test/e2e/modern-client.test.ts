/**
 * End to end: the SDK v2 client pinned to 2026-07-28 (no handshake, `_meta` on every
 * request) against the gateway started as README says, in front of a 2025 SDK upstream,
 * on both routes; and a 2025 client on the same URL at the same time.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { alphaBehindGateway } from "./alpha-behind-gateway.ts";

describe("an SDK v2 client pinned to 2026-07-28", () => {
  const gateway = alphaBehindGateway(".wrangler/e2e-modern");

  it.each([
    ["/mcp", "alpha___"],
    ["/mcp/alpha", ""],
  ])("lists and calls tools on %s, beside a 2025 client", async (path, prefix) => {
    const modern = new ModernClient(
      { name: "e2e-modern", version: "2.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const sent: { version: string | null; method: string }[] = [];
    const recording: typeof fetch = async (input, init) => {
      if (init?.method === "POST" && typeof init.body === "string") {
        sent.push({
          version: new Headers(init.headers).get("mcp-protocol-version"),
          method: (JSON.parse(init.body) as { method: string }).method,
        });
      }
      return fetch(input, init);
    };
    await modern.connect(new ModernTransport(new URL(`${gateway.url()}${path}`), { fetch: recording }));
    const legacy = new Client({ name: "e2e-legacy", version: "1.0.0" });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url()}${path}`)));

    const { tools } = await modern.listTools();
    expect(tools.map((t) => t.name)).toContain(`${prefix}add`);
    const sum = await modern.callTool({ name: `${prefix}add`, arguments: { a: 2, b: 3 } });
    expect(sum.structuredContent).toEqual({ sum: 5 });
    const echo = await legacy.callTool({ name: `${prefix}echo`, arguments: { text: "old" } });
    expect((echo.content as { text: string }[])[0]!.text).toBe("alpha: old");
    expect(modern.getServerVersion()?.name).toBe(path === "/mcp" ? "mcp-edge-gateway" : "alpha");
    // The modern client never initialized: every POST it sent was a 2026-07-28 request.
    expect(sent.map((s) => s.method)).not.toContain("initialize");
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sent.map((s) => s.version))).toEqual(new Set(["2026-07-28"]));
    await Promise.all([modern.close(), legacy.close()]);
  });
});
