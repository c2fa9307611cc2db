/**
 * End to end: a 2026-07-28-only upstream (SDK v2, `legacy: "reject"`) and a 2025 one
 * behind the gateway started as README says, used by an SDK v1 client (which the
 * gateway serves in 2025 terms, turning the upstream's `input_required` into server
 * requests) and by an SDK v2 client pinned to 2026-07-28 (which gets `input_required`
 * as the upstream sent it and retries), on both routes.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startModernUpstream } from "../fixtures/modern-upstream.ts";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

const ROUTES = [
  ["/mcp/modern", ""],
  ["/mcp", "modern___"],
] as const;

function firstText(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]!.text;
}

describe("a 2026-07-28-only upstream behind the gateway", () => {
  let modern: Awaited<ReturnType<typeof startModernUpstream>>;
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    [modern, alpha] = await Promise.all([startModernUpstream(), startAlpha()]);
    gateway = await startGateway({
      port: await freePort(),
      vars: {
        UPSTREAMS: [
          { name: "alpha", url: alpha.url },
          { name: "modern", url: modern.url },
        ],
      },
      persistTo: ".wrangler/e2e-modern-upstream",
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([modern?.close(), alpha?.close()]);
  });

  it.each(ROUTES)("serves an SDK v1 client on %s, elicitation and sampling included", async (path, prefix) => {
    const client = new Client(
      { name: "e2e-v1", version: "1.0.0" },
      { capabilities: { elicitation: {}, sampling: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { ok: true } }));
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "Paris" },
      model: "m",
      stopReason: "endTurn",
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain(`${prefix}add`);
    expect(firstText(await client.callTool({ name: `${prefix}echo`, arguments: { text: "v1" } }))).toBe("modern: v1");
    expect((await client.callTool({ name: `${prefix}add`, arguments: { a: 2, b: 3 } })).structuredContent).toEqual({
      sum: 5,
    });
    expect(firstText(await client.callTool({ name: `${prefix}confirm`, arguments: { text: "go" } }))).toBe(
      "confirmed go: true (state confirm:go)",
    );
    expect(firstText(await client.callTool({ name: `${prefix}ask`, arguments: { text: "capital?" } }))).toBe(
      "model said: Paris",
    );
    if (path === "/mcp")
      expect(firstText(await client.callTool({ name: "alpha___echo", arguments: { text: "v1" } }))).toBe("alpha: v1");
    await client.close();
  });

  it.each(ROUTES)(
    "serves an SDK v2 client pinned to 2026-07-28 on %s, which answers input_required itself",
    async (path, prefix) => {
      const client = new ModernClient(
        { name: "e2e-v2", version: "2.0.0" },
        { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      let elicited = 0;
      client.setRequestHandler("elicitation/create", async () => {
        elicited++;
        return { action: "accept", content: { ok: true } };
      });
      await client.connect(new ModernTransport(new URL(`${gateway.url}${path}`)));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain(`${prefix}shape`);
      expect(firstText(await client.callTool({ name: `${prefix}echo`, arguments: { text: "v2" } }))).toBe("modern: v2");
      // Modern on both sides: the array structured content passes untouched.
      expect((await client.callTool({ name: `${prefix}shape`, arguments: {} })).structuredContent).toEqual([1, 2, 3]);
      expect(firstText(await client.callTool({ name: `${prefix}confirm`, arguments: { text: "v2" } }))).toBe(
        "confirmed v2: true (state confirm:v2)",
      );
      expect(elicited).toBe(1);
      if (path === "/mcp")
        expect(firstText(await client.callTool({ name: "alpha___echo", arguments: { text: "v2" } }))).toBe("alpha: v2");
      await client.close();
    },
  );
});
