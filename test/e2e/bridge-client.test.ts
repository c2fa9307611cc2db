/**
 * End to end: the SDK v2 client pinned to 2026-07-28, with handlers for elicitation,
 * sampling and roots, against the gateway started as README says (`npm start`: wrangler
 * dev, the BridgedCall Durable Object from wrangler.toml) in front of a 2025 SDK upstream
 * that asks those questions mid-call. The client sees input_required answers and
 * fulfils them itself (its multi-round-trip auto-fulfilment); the upstream gets its
 * answers as a 2025 client's.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { alphaBehindGateway } from "./alpha-behind-gateway.ts";

describe("an SDK v2 client answers a 2025 upstream's questions through the bridge", () => {
  const gateway = alphaBehindGateway(".wrangler/e2e-bridge");

  it.each([
    ["/mcp", "alpha___"],
    ["/mcp/alpha", ""],
  ])("elicitation, sampling and roots on %s", async (path, prefix) => {
    const client = new ModernClient(
      { name: "e2e-bridge", version: "2.0.0" },
      {
        capabilities: { elicitation: {}, sampling: {}, roots: {} },
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      },
    );
    const rounds: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      rounds.push(request.method);
      return { action: "accept", content: { name: "Ada" } };
    });
    client.setRequestHandler("sampling/createMessage", async (request) => {
      rounds.push(request.method);
      return { model: "test-model", role: "assistant", content: { type: "text", text: "Paris" } };
    });
    client.setRequestHandler("roots/list", async (request) => {
      rounds.push(request.method);
      return { roots: [{ uri: "file:///work/project" }] };
    });
    await client.connect(new ModernTransport(new URL(`${gateway.url()}${path}`)));
    const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]!.text;
    expect(text(await client.callTool({ name: `${prefix}ask_user`, arguments: {} }))).toBe('accept: {"name":"Ada"}');
    expect(
      text(await client.callTool({ name: `${prefix}ask_llm`, arguments: { question: "Capital of France?" } })),
    ).toBe("model said: Paris");
    expect(text(await client.callTool({ name: `${prefix}list_roots`, arguments: {} }))).toBe("file:///work/project");
    expect(rounds).toEqual(["elicitation/create", "sampling/createMessage", "roots/list"]);
    await client.close();
  });
});
