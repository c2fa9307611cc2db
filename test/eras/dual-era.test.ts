/**
 * Upstreams that speak both eras. Through the gateway a client of either era gets what the
 * upstream offers to any era, natively where the upstream speaks the client's era
 * (upstream/era-choice.ts): SDK v1 and SDK v2 clients (pinned, `auto`, `legacy`) on
 * `/mcp/<upstream>` and `/mcp`, against
 *
 * - test/fixtures/dual-era-upstream.ts: a sessionful 2025 side and a stateless 2026-07-28
 *   side on one URL (its 2026 side answers streams as newline-delimited JSON);
 * - test/fixtures/conformance-upstream-2026.ts: SDK v2 `createMcpHandler` as it comes
 *   (`legacy: "stateless"`), whose 2025 side cannot ask a client anything.
 *
 * Each fixture counts the requests each side served (`/counts`): the tests show which one did.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { readSse } from "../../src/core/sse";
import { gatewayFetch, initialize, LATEST, request, type Json } from "../helpers/gateway";
import { modern, modernPost, MODERN } from "../helpers/modern";

const sessionful = inject("sessionfulDualUpstream");
const stateless = inject("dualEraUpstreamUrl");
const { alpha } = inject("fixtureUrls");
const statelessCounts = new URL("/counts", stateless).href;

type Counts = { legacy: Record<string, number>; modern: Record<string, number> };

/** The fixture's counts of `key` per side, while `run` runs. */
async function servedBy(
  countsUrl: string,
  key: string,
  run: () => Promise<void>,
): Promise<{ legacy: number; modern: number }> {
  const read = async () => (await (await fetch(countsUrl)).json()) as Counts;
  const before = await read();
  await run();
  const after = await read();
  return {
    legacy: (after.legacy[key] ?? 0) - (before.legacy[key] ?? 0),
    modern: (after.modern[key] ?? 0) - (before.modern[key] ?? 0),
  };
}

/** UPSTREAMS naming `url` as `name` (a name of the test's own: the era verdict is per name and URL). */
function only(name: string, url: string): Record<string, string> {
  return { UPSTREAMS: JSON.stringify([{ name, url }]) };
}

function beside(name: string, url: string): Record<string, string> {
  return {
    UPSTREAMS: JSON.stringify([
      { name, url },
      { name: "alpha", url: alpha },
    ]),
  };
}

const throughGateway = (vars: Record<string, string>) => (input: string | URL | Request, init?: RequestInit) =>
  gatewayFetch(String(input instanceof Request ? input.url : input), init, vars);

/** An SDK v1 client that answers sampling ("Paris"), elicitation (accept) and roots (one root). */
async function v1Client(path: string, vars: Record<string, string>, answers = true) {
  const asked: string[] = [];
  const client = new Client(
    { name: "sdk-v1", version: "1.0.0" },
    { capabilities: answers ? { sampling: {}, elicitation: {}, roots: {} } : {} },
  );
  if (answers) {
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked.push("sampling");
      return {
        role: "assistant",
        content: { type: "text", text: "Paris" },
        model: "test-model",
        stopReason: "endTurn",
      };
    });
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked.push("elicitation");
      return { action: "accept", content: { username: "ada", email: "ada@example.com" } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      asked.push("roots");
      return { roots: [{ uri: "file:///work", name: "work" }] };
    });
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://gateway.test${path}`), { fetch: throughGateway(vars) }),
  );
  return { client, asked };
}

/** An SDK v2 client in `mode` that answers the same questions (as input_required when it speaks 2026-07-28). */
async function v2Client(path: string, vars: Record<string, string>, mode: "auto" | "legacy" | { pin: string }) {
  const asked: string[] = [];
  const client = new ModernClient(
    { name: "sdk-v2", version: "2.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: {} }, versionNegotiation: { mode } },
  );
  client.setRequestHandler("sampling/createMessage", async () => {
    asked.push("sampling");
    return { model: "test-model", role: "assistant", content: { type: "text", text: "Paris" } };
  });
  client.setRequestHandler("elicitation/create", async () => {
    asked.push("elicitation");
    return { action: "accept", content: { username: "ada", email: "ada@example.com", name: "Ada" } };
  });
  client.setRequestHandler("roots/list", async () => {
    asked.push("roots");
    return { roots: [{ uri: "file:///work", name: "work" }] };
  });
  await client.connect(new ModernTransport(new URL(`http://gateway.test${path}`), { fetch: throughGateway(vars) }));
  return { client, asked };
}

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]!.text;
}

const routes = (name: string, url: string) =>
  [
    [`/mcp/${name}`, "", only(name, url)],
    ["/mcp", `${name}___`, beside(name, url)],
  ] as const;

describe("a dual-era upstream with a sessionful 2025 side", () => {
  const counts = `${sessionful.origin}/counts`;

  it.each(routes("dual-v1", sessionful.url))(
    "serves a 2025 SDK v1 client on %s natively: sampling, elicitation, roots and subscriptions from its 2025 side",
    async (path, prefix, vars) => {
      const { client, asked } = await v1Client(path, vars);
      const served = await servedBy(counts, "tools/call test_sampling", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_sampling`, arguments: { prompt: "Capital of France?" } })),
        ).toBe("LLM response: Paris");
      });
      expect(served).toEqual({ legacy: 1, modern: 0 });
      expect(
        text(await client.callTool({ name: `${prefix}test_elicitation`, arguments: { message: "Who are you?" } })),
      ).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
      const roots = await servedBy(counts, "tools/call test_input_required_result_list_roots", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_input_required_result_list_roots`, arguments: {} })),
        ).toBe("Found 1 root(s)");
      });
      expect(roots).toEqual({ legacy: 1, modern: 0 });
      expect(asked).toEqual(["sampling", "elicitation", "roots"]);
      // resources/subscribe exists only in 2025: bridged to the 2026 side it was -32601.
      const subscribed = await servedBy(counts, "resources/subscribe", async () => {
        await client.subscribeResource({ uri: "test://watched-resource" });
        await client.unsubscribeResource({ uri: "test://watched-resource" });
      });
      expect(subscribed).toEqual({ legacy: 1, modern: 0 });
      await client.close();
    },
  );

  it.each(routes("dual-task", sessionful.url))(
    "runs a 2025 client's task call on %s at the 2025 side (tasks/result gives its outcome)",
    async (path, prefix, vars) => {
      const { session } = await initialize(path, { vars });
      const served = await servedBy(counts, "tools/call test_echo_task", async () => {
        const created = await request(
          path,
          session,
          "tools/call",
          { name: `${prefix}test_echo_task`, arguments: { text: "hi" }, task: { ttl: 60_000 } },
          { vars },
        );
        const taskId = created.result.task.taskId as string;
        const outcome = await request(path, session, "tasks/result", { taskId }, { vars });
        expect(outcome.result.content[0].text).toBe("task echo: hi");
      });
      expect(served).toEqual({ legacy: 1, modern: 0 });
    },
  );

  it.each(routes("dual-v2-legacy", sessionful.url))(
    "serves an SDK v2 client in legacy mode on %s from its 2025 side",
    async (path, prefix, vars) => {
      const { client, asked } = await v2Client(path, vars, "legacy");
      const served = await servedBy(counts, "tools/call test_input_required_result_sampling", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_input_required_result_sampling`, arguments: {} })),
        ).toBe("Sampling result: Paris");
      });
      expect(served).toEqual({ legacy: 1, modern: 0 });
      expect(asked).toEqual(["sampling"]);
      await client.close();
    },
  );

  it.each([
    ...routes("dual-v2-pin", sessionful.url).map(
      ([path, prefix, vars]) => [path, prefix, vars, { pin: MODERN }] as const,
    ),
    ...routes("dual-v2-auto", sessionful.url).map(([path, prefix, vars]) => [path, prefix, vars, "auto"] as const),
  ])(
    "serves an SDK v2 client on %s (%s) from its 2026-07-28 side: input_required natively, every round, and its own listen",
    async (path, prefix, vars, mode) => {
      const { client, asked } = await v2Client(path, vars, mode);
      const served = await servedBy(counts, "tools/call test_input_required_result_sampling", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_input_required_result_sampling`, arguments: {} })),
        ).toBe("Sampling result: Paris");
      });
      // Two rounds, both at the 2026-07-28 side: the question, then the retry with its answer.
      expect(served).toEqual({ legacy: 0, modern: 2 });
      const roots = await servedBy(counts, "tools/call test_input_required_result_list_roots", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_input_required_result_list_roots`, arguments: {} })),
        ).toBe("Found 1 root(s)");
      });
      expect(roots).toEqual({ legacy: 0, modern: 2 });
      expect(
        text(await client.callTool({ name: `${prefix}test_input_required_result_elicitation`, arguments: {} })),
      ).toBe("Hello, Ada!");
      expect(asked).toEqual(["sampling", "roots", "elicitation"]);
      // subscriptions/listen: the 2026-07-28 side's own listen (newline-delimited JSON), acknowledged and then told of a change.
      let changed!: () => void;
      const toldOfChange = new Promise<void>((resolve) => (changed = resolve));
      client.setNotificationHandler("notifications/tools/list_changed", () => changed());
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      await client.callTool({ name: `${prefix}test_trigger_tool_change`, arguments: {} });
      await toldOfChange;
      await subscription.close();
      await client.close();
    },
  );

  it("acknowledges a 2026-07-28 client's subscriptions/listen from the upstream's own listen, answered as newline-delimited JSON", async () => {
    const vars = only("dual-listen", sessionful.url);
    const served = await servedBy(counts, "subscriptions/listen", async () => {
      const response = await modernPost(
        "/mcp/dual-listen",
        "subscriptions/listen",
        { notifications: { toolsListChanged: true } },
        { vars },
      );
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      while (!seen.includes("\n\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += value;
      }
      await reader.cancel();
      const first = JSON.parse(
        seen
          .split("\n")
          .find((line) => line.startsWith("data:"))!
          .slice(5),
      ) as Json;
      expect(first.method).toBe("notifications/subscriptions/acknowledged");
      expect(first.params.notifications).toEqual({ toolsListChanged: true });
    });
    expect(served.modern).toBe(1);
  });

  it("relays a 2026-07-28 call whose answer comes as newline-delimited JSON (a notification, then the result)", async () => {
    const vars = only("dual-ndjson", sessionful.url);
    const answer = await modern(
      "/mcp/dual-ndjson",
      "tools/call",
      { name: "test_tool_with_progress", arguments: {} },
      { vars, progressToken: "p1" },
    );
    expect(answer.error).toBeUndefined();
    expect(answer.result.content[0].type).toBe("text");
  });

  it("remembers both sides: what server/discover declared and what initialize learned (sessionful)", async () => {
    const vars = only("dual-verdict", sessionful.url);
    await modern("/mcp/dual-verdict", "tools/list", {}, { vars });
    const listed = await env.GATEWAY_KV.list({ prefix: "upstream-era/dual-verdict/" });
    const verdict = JSON.parse((await env.GATEWAY_KV.get(listed.keys[0]!.name))!) as Json;
    expect(verdict.era).toBe("modern");
    expect(verdict.discover.supportedVersions).toContain(MODERN);
    expect(verdict.legacy.sessionful).toBe(true);
    expect(verdict.legacy.capabilities.resources.subscribe).toBe(true);
  });
});

describe("an SDK v2 createMcpHandler upstream as it comes (its 2025 side stateless)", () => {
  it.each(routes("sdk-default", stateless))(
    "bridges a 2025 client that answers questions on %s to its 2026-07-28 side (a stateless 2025 side cannot ask)",
    async (path, prefix, vars) => {
      const { client, asked } = await v1Client(path, vars);
      const served = await servedBy(statelessCounts, "tools/call test_input_required_result_sampling", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_input_required_result_sampling`, arguments: {} })),
        ).toBe("Sampling result: Paris");
      });
      expect(served).toEqual({ legacy: 0, modern: 2 });
      expect(asked).toEqual(["sampling"]);
      await client.close();
    },
  );

  it.each(routes("sdk-default-plain", stateless))(
    "serves a 2025 client that answers no questions on %s from its stateless 2025 side",
    async (path, prefix, vars) => {
      const { client } = await v1Client(path, vars, false);
      const served = await servedBy(statelessCounts, "tools/call test_simple_text", async () => {
        expect(text(await client.callTool({ name: `${prefix}test_simple_text`, arguments: {} }))).toContain(
          "simple text",
        );
      });
      expect(served).toEqual({ legacy: 1, modern: 0 });
      await client.close();
    },
  );

  it.each(routes("sdk-default-stream", stateless))(
    "gives such a client's GET stream on %s the list changes of its 2026-07-28 side's listen (its stateless 2025 side has no stream)",
    async (path, prefix, vars) => {
      const { session } = await initialize(path, { vars });
      const stream = await gatewayFetch(
        path,
        {
          method: "GET",
          headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LATEST },
        },
        vars,
      );
      expect(stream.status).toBe(200);
      await request(
        path,
        session,
        "tools/call",
        { name: `${prefix}test_trigger_tool_change`, arguments: {} },
        { vars },
      );
      const events = readSse(stream.body!)[Symbol.asyncIterator]();
      let method: unknown;
      while (method !== "notifications/tools/list_changed")
        method = (JSON.parse((await events.next()).value.data) as Json).method;
      await events.return?.(undefined);
    },
  );

  it.each(routes("sdk-default-v2", stateless))(
    "serves an SDK v2 client (auto) on %s from its 2026-07-28 side",
    async (path, prefix, vars) => {
      const { client, asked } = await v2Client(path, vars, "auto");
      const served = await servedBy(statelessCounts, "tools/call test_input_required_result_list_roots", async () => {
        expect(
          text(await client.callTool({ name: `${prefix}test_input_required_result_list_roots`, arguments: {} })),
        ).toBe("Found 1 root(s)");
      });
      expect(served).toEqual({ legacy: 0, modern: 2 });
      expect(asked).toEqual(["roots"]);
      await client.close();
    },
  );
});

describe("an operator's pin", () => {
  it("keeps a dual-era upstream configured as 2026-07-28 on that side, even for a 2025 client (no initialize probe)", async () => {
    const vars = { UPSTREAMS: JSON.stringify([{ name: "dual-pinned", url: sessionful.url, protocol: MODERN }]) };
    const { client, asked } = await v1Client("/mcp/dual-pinned", vars);
    const served = await servedBy(
      `${sessionful.origin}/counts`,
      "tools/call test_input_required_result_sampling",
      async () => {
        expect(text(await client.callTool({ name: "test_input_required_result_sampling", arguments: {} }))).toBe(
          "Sampling result: Paris",
        );
      },
    );
    expect(served).toEqual({ legacy: 0, modern: 2 });
    expect(asked).toEqual(["sampling"]);
    await client.close();
  });
});
