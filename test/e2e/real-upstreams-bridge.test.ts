/**
 * End to end: real 2026-07-28 clients (the SDK v2 client pinned to 2026-07-28 and in
 * `auto` mode, and `@ai-sdk/mcp`) answer the questions of real 2025 servers through the
 * call bridge, on `/mcp/<upstream>` and `/mcp`, with the gateway started as README says.
 * The servers: a `fastmcp` httpStream server (elicitation and sampling, both asked on its
 * session's GET stream, unrelated to the call) and `@modelcontextprotocol/server-everything`
 * (roots asked on the GET stream; elicitation and sampling asked on the call's own stream;
 * progress of its long-running operation, before and after its roots question).
 * `@ai-sdk/mcp` answers form elicitation only (it refuses any other input request).
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { createMCPClient, ElicitationRequestSchema } from "@ai-sdk/mcp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startFastMcpUpstream } from "../fixtures/fastmcp-upstream.ts";
import { startEverythingUpstream } from "../fixtures/everything-upstream.ts";
import { textOf } from "./tool-result.ts";

/** Longer than a bridged round takes here, far shorter than the client's own 60 s: a hang fails the test, not the file. */
const CALL_TIMEOUT_MS = 20_000;

type Started = { url: string; close: () => Promise<void> };
let fm: Started | undefined;
let everything: Started | undefined;
let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;

beforeAll(async () => {
  [fm, everything] = await Promise.all([startFastMcpUpstream(), startEverythingUpstream()]);
  gateway = await startGateway({
    port: await freePort(),
    vars: {
      UPSTREAMS: [
        { name: "fm", url: fm.url },
        { name: "everything", url: everything.url },
      ],
    },
    persistTo: ".wrangler/e2e-real-upstreams",
  });
});
afterAll(async () => {
  await gateway?.stop();
  await Promise.all([fm?.close(), everything?.close()]);
});

/** The route's URL and the prefix tool names carry on it. */
function routeOf(path: string, upstream: string): { url: URL; prefix: string } {
  return { url: new URL(`${gateway!.url}${path}`), prefix: path === "/mcp" ? `${upstream}___` : "" };
}

const ROUTES = [
  ["/mcp/fm", "fm"],
  ["/mcp", "fm"],
] as const;

/** An SDK v2 client declaring every capability a 2025 server may ask for, answering each; it negotiates `revision`. */
async function sdkClient(
  url: URL,
  mode: "auto" | "pinned",
  asked: string[],
  revision = "2026-07-28",
): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "e2e-real-upstreams", version: "2.0.0" },
    // The gateway keeps upstream sessions per principal, route and capabilities, and server-everything
    // remembers a session's roots: the two modes differ in `roots` so each is asked for its own.
    {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: mode === "auto" ? { listChanged: true } : {} },
      versionNegotiation: { mode: mode === "auto" ? "auto" : { pin: "2026-07-28" } },
    },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.method);
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setRequestHandler("sampling/createMessage", async (request) => {
    asked.push(request.method);
    return { model: "test-model", role: "assistant", content: { type: "text", text: "Paris" } };
  });
  client.setRequestHandler("roots/list", async (request) => {
    asked.push(request.method);
    return { roots: [{ uri: `file:///work/${mode}`, name: mode }] };
  });
  await client.connect(new ModernTransport(url));
  expect(client.getNegotiatedProtocolVersion()).toBe(revision);
  return client;
}

describe.each(["pinned", "auto"] as const)("the SDK v2 client (%s)", (mode) => {
  it.each(ROUTES)("completes fastmcp's elicitation and sampling on %s", async (path, upstream) => {
    const { url, prefix } = routeOf(path, upstream);
    const asked: string[] = [];
    const client = await sdkClient(url, mode, asked);
    try {
      const options = { timeout: CALL_TIMEOUT_MS };
      expect(textOf(await client.callTool({ name: `${prefix}ask_name`, arguments: {} }, options))).toBe(
        'accept: {"name":"Ada"}',
      );
      expect(
        textOf(
          await client.callTool({ name: `${prefix}ask_llm`, arguments: { question: "Capital of France?" } }, options),
        ),
      ).toBe("model said: Paris");
      expect(asked).toEqual(["elicitation/create", "sampling/createMessage"]);
    } finally {
      await client.close();
    }
  });

  it.each([
    ["/mcp/everything", "everything"],
    ["/mcp", "everything"],
  ] as const)("completes server-everything's roots, elicitation and sampling on %s", async (path, upstream) => {
    const { url, prefix } = routeOf(path, upstream);
    const asked: string[] = [];
    const client = await sdkClient(url, mode, asked);
    try {
      const options = { timeout: CALL_TIMEOUT_MS };
      expect(textOf(await client.callTool({ name: `${prefix}get-roots-list`, arguments: {} }, options))).toContain(
        `URI: file:///work/${mode}`,
      );
      expect(asked).toContain("roots/list");
      const elicited = textOf(
        await client.callTool({ name: `${prefix}trigger-elicitation-request`, arguments: {} }, options),
      );
      expect(elicited).toContain("Ada");
      const sampled = textOf(
        await client.callTool(
          { name: `${prefix}trigger-sampling-request`, arguments: { prompt: "Capital of France?" } },
          options,
        ),
      );
      expect(sampled).toContain("Paris");
      expect(asked).toEqual(expect.arrayContaining(["roots/list", "elicitation/create", "sampling/createMessage"]));
    } finally {
      await client.close();
    }
  });
});

describe("server-everything's long-running operation, with a progress token", () => {
  /** The upstream's progress values the client is told of (the SDK adds its own, without `total`, per round). */
  async function progressSeen(client: ModernClient, name: string): Promise<number[]> {
    const seen: number[] = [];
    const onprogress = (progress: { progress: number; total?: number }) =>
      void (progress.total !== undefined && seen.push(progress.progress));
    const options = { timeout: CALL_TIMEOUT_MS, onprogress };
    const result = await client.callTool({ name, arguments: { duration: 0.4, steps: 4 } }, options);
    expect(textOf(result)).toContain("Steps: 4");
    return seen;
  }

  it("reaches the SDK v2 client directly (2025-11-25, server-everything's) as 1, 2, 3, 4", async () => {
    const client = await sdkClient(new URL(everything!.url), "auto", [], "2025-11-25");
    try {
      expect(await progressSeen(client, "trigger-long-running-operation")).toEqual([1, 2, 3, 4]);
    } finally {
      await client.close();
    }
  });

  // The call is bridged and asks a question: the client declares only roots (capabilities no other test here
  // declares, so the upstream session is new), and server-everything asks a new session for its roots as the
  // call starts. Progress after the question must go under the retry's own token, or the client drops it.
  it.each([
    ["/mcp/everything", "everything"],
    ["/mcp", "everything"],
  ] as const)("reaches it through %s as 1, 2, 3, 4, across the roots question", async (path, upstream) => {
    const { url, prefix } = routeOf(path, upstream);
    const options = { capabilities: { roots: {} }, versionNegotiation: { mode: "auto" as const } };
    const client = new ModernClient({ name: "e2e-progress", version: "2.0.0" }, options);
    const asked: string[] = [];
    client.setRequestHandler("roots/list", async (request) => {
      asked.push(request.method);
      return { roots: [] };
    });
    await client.connect(new ModernTransport(url));
    try {
      expect(await progressSeen(client, `${prefix}trigger-long-running-operation`)).toEqual([1, 2, 3, 4]);
      expect(asked).toEqual(["roots/list"]);
    } finally {
      await client.close();
    }
  });
});

describe("@ai-sdk/mcp", () => {
  it.each([
    ["/mcp/fm", "fm", "ask_name"],
    ["/mcp", "fm", "ask_name"],
    ["/mcp/everything", "everything", "trigger-elicitation-request"],
    ["/mcp", "everything", "trigger-elicitation-request"],
  ] as const)("completes form elicitation on %s (%s)", async (path, upstream, tool) => {
    const { url, prefix } = routeOf(path, upstream);
    const client = await createMCPClient({
      transport: { type: "http", url: url.href },
      capabilities: { elicitation: {} },
    });
    const asked: string[] = [];
    client.onElicitationRequest(ElicitationRequestSchema, async (request) => {
      asked.push(request.method);
      return { action: "accept", content: { name: "Ada" } };
    });
    try {
      const result = await client.callTool({
        name: `${prefix}${tool}`,
        arguments: {},
        options: { timeout: CALL_TIMEOUT_MS },
      });
      expect(textOf(result)).toContain("Ada");
      expect(asked).toEqual(["elicitation/create"]);
    } finally {
      await client.close();
    }
  });
});
