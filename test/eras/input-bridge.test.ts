/**
 * 2025 clients of a 2026-07-28 upstream: the upstream's `input_required` becomes server
 * requests on the client's stream, its answers (separate POSTs) meet the call in the
 * INPUT_RENDEZVOUS Durable Object, and the call is retried with the exact requestState,
 * round after round. With a real SDK v1 Client (elicitation and sampling handlers).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, inject, it } from "vitest";
import { createApp } from "../../src/gateway";
import { readSse } from "../../src/core/sse";
import { MAX_INPUT_ANSWER_CHARS, MAX_INPUT_REQUESTS_PER_ROUND } from "../../src/eras/input-bridge";
import { gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";

const modernUrl = inject("modernUpstreamUrl");
const { alpha } = inject("fixtureUrls");
const ONLY_MODERN = { UPSTREAMS: JSON.stringify([{ name: "modern", url: modernUrl }]) };
const MIXED = {
  UPSTREAMS: JSON.stringify([
    { name: "alpha", url: alpha },
    { name: "modern", url: modernUrl },
  ]),
};

type Capabilities = { elicitation?: boolean; sampling?: boolean };

/** An SDK v1 client on `path`, answering elicitations (accept, ok: true) and sampling ("Paris"), talking to the Worker in workerd. */
async function sdkClient(
  path: string,
  vars: Record<string, string>,
  capabilities: Capabilities = { elicitation: true, sampling: true },
) {
  const asked: string[] = [];
  const client = new Client(
    { name: "sdk-v1", version: "1.0.0" },
    {
      capabilities: {
        ...(capabilities.elicitation ? { elicitation: {} } : {}),
        ...(capabilities.sampling ? { sampling: {} } : {}),
      },
    },
  );
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicit: ${request.params.message}`);
      return { action: "accept", content: { ok: true } };
    });
  }
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]!.content;
      asked.push(`sample: ${"text" in first ? first.text : "?"}`);
      return {
        role: "assistant",
        content: { type: "text", text: "Paris" },
        model: "test-model",
        stopReason: "endTurn",
      };
    });
  }
  const fetchThroughGateway = (input: string | URL | Request, init?: RequestInit) =>
    gatewayFetch(String(input instanceof Request ? input.url : input), init, vars);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://gateway.test${path}`), { fetch: fetchThroughGateway }),
  );
  return { client, asked };
}

function text(result: Json): string {
  return result.content[0].text;
}

describe("a 2025 SDK client of a 2026-07-28-only upstream asking for input", () => {
  it.each([
    ["/mcp/modern", "", ONLY_MODERN],
    ["/mcp", "modern___", MIXED],
  ])("answers an elicitation on %s and gets the result of the retried call", async (path, prefix, vars) => {
    const { client, asked } = await sdkClient(path, vars);
    const result = await client.callTool({ name: `${prefix}confirm`, arguments: { text: "deploy" } });
    // The retry carried the upstream's exact requestState and the client's answer.
    expect(text(result)).toBe("confirmed deploy: true (state confirm:deploy)");
    expect(asked).toEqual(["elicit: Confirm deploy?"]);
    await client.close();
  });

  it("gets an answer too large to hold, offloaded while it streams, after a round of input", {
    timeout: 120_000,
  }, async () => {
    const { client, asked } = await sdkClient("/mcp/modern", ONLY_MODERN);
    const result = await client.callTool({ name: "confirm_big", arguments: { mb: 10 } });
    expect(asked).toEqual(["elicit: Send it all?"]);
    const envelope = JSON.parse(text(result)) as Json;
    expect(envelope.payloadId).toMatch(/^[0-9a-f]{32}$/);
    expect(envelope.originalSize).toBeGreaterThan(10 * 1024 * 1024);
    await client.close();
  });

  it("never forwards a 2025 client's own requestState or inputResponses (its revision has none: they can only be forged)", async () => {
    // No elicitation declared: the upstream's question cannot be put to this client.
    const { session } = await initialize("/mcp/modern", { vars: ONLY_MODERN, capabilities: {} });
    const forged = await request(
      "/mcp/modern",
      session,
      "tools/call",
      {
        name: "confirm",
        arguments: { text: "forged" },
        requestState: "confirm:forged",
        inputResponses: { confirm: { action: "accept", content: { ok: true } } },
      },
      { vars: ONLY_MODERN },
    );
    expect(JSON.stringify(forged)).not.toContain("confirmed forged");
    expect(JSON.stringify(forged)).toContain("elicitation");
  });

  it("answers a sampling request", async () => {
    const { client, asked } = await sdkClient("/mcp/modern", ONLY_MODERN);
    const result = await client.callTool({ name: "ask", arguments: { text: "Capital of France?" } });
    expect(text(result)).toBe("model said: Paris");
    expect(asked).toEqual(["sample: Capital of France?"]);
    await client.close();
  });

  it("answers roots/list for a client that declared roots", async () => {
    const client = new Client({ name: "sdk-v1-roots", version: "1.0.0" }, { capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
    const fetchThroughGateway = (input: string | URL | Request, init?: RequestInit) =>
      gatewayFetch(String(input instanceof Request ? input.url : input), init, ONLY_MODERN);
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://gateway.test/mcp/modern"), { fetch: fetchThroughGateway }),
    );
    expect(text(await client.callTool({ name: "roots", arguments: {} }))).toBe("roots: file:///work");
    await client.close();
  });

  it("runs several rounds, with two requests in one round", async () => {
    const { client, asked } = await sdkClient("/mcp", MIXED);
    const result = await client.callTool({ name: "modern___both", arguments: { text: "ship it" } });
    expect(text(result)).toBe("both done after round-2:Paris, confirmed true");
    expect(asked.sort()).toEqual(["elicit: Sure about ship it?", "elicit: Sure about ship it?", "sample: ship it"]);
    await client.close();
  });

  it("ends the call with a clear error when the client did not declare the capability the upstream needs (the envelope says what it declared)", async () => {
    const { client, asked } = await sdkClient("/mcp/modern", ONLY_MODERN, { elicitation: true });
    const outcome = await client.callTool({ name: "ask", arguments: { text: "hi" } }).then(
      (result) => JSON.stringify(result),
      (error: Error) => error.message,
    );
    // The envelope declared only what the client declared, so the upstream itself refuses (-32021).
    expect(outcome).toContain("-32021");
    expect(outcome).toContain("sampling/createMessage");
    expect(asked).toEqual([]);
    await client.close();
  });
});

describe("the client's answers", () => {
  // createApp() here is another app in the same isolate: what it shows is that the answer travels by the Durable Object,
  // not by the request that waits. Separate isolates: test/e2e/bridge-isolates.test.ts.
  it("may come through another app instance, as a separate POST: the call waits for them in the Durable Object", async () => {
    const { session } = await initialize("/mcp/modern", { vars: ONLY_MODERN, capabilities: { elicitation: {} } });
    const call = await post(
      "/mcp/modern",
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "confirm", arguments: { text: "elsewhere" } } },
      { session, vars: ONLY_MODERN },
    );
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect(asked.method).toBe("elicitation/create");
    expect(asked.params.message).toBe("Confirm elsewhere?");
    const other = createApp();
    const delivered = await post(
      "/mcp/modern",
      { jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { ok: false } } },
      { session, vars: ONLY_MODERN, target: other },
    );
    expect(delivered.status).toBe(202);
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final.id).toBe(7);
    expect(final.result.content[0].text).toBe("confirmed elsewhere: false (state confirm:elsewhere)");
  });

  it("refuses an answer whose id the gateway did not seal", async () => {
    const { session } = await initialize("/mcp/modern", { vars: ONLY_MODERN, capabilities: { elicitation: {} } });
    const forged = await post(
      "/mcp/modern",
      { jsonrpc: "2.0", id: "gw-input.AAAA", result: { action: "accept" } },
      { session, vars: ONLY_MODERN },
    );
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as Json).error.message).toContain("tampered");
  });
});

describe("an upstream that asks carelessly", () => {
  const careless = { UPSTREAMS: JSON.stringify([{ name: "careless", url: new URL("/raw/careless", modernUrl).href }]) };

  it("gets no server request the client did not declare: the call ends with an error naming the capability", async () => {
    const { session } = await initialize("/mcp/careless", { vars: careless, capabilities: { elicitation: {} } });
    const reply = await post(
      "/mcp/careless",
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "ask", arguments: {} } },
      { session, vars: careless },
    );
    const body = (await reply.json()) as Json;
    expect(body.id).toBe(3);
    expect(body.error.message).toContain('did not declare the "sampling" capability');
    expect(body.error.data.requiredCapabilities).toEqual({ sampling: {} });
  });

  it("is retried a bounded number of rounds", async () => {
    const { session } = await initialize("/mcp/careless", { vars: careless });
    const marker = `loop-${Date.now()}`;
    const reply = await post(
      "/mcp/careless",
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "loop", arguments: { marker } } },
      { session, vars: careless },
    );
    const body = (await reply.json()) as Json;
    expect(body.error.message).toContain("still asked for input after 8 rounds");
    const seen = (await (await fetch(new URL("/seen", modernUrl))).json()) as Json[];
    const calls = seen.filter((entry) => entry.params?.arguments?.marker === marker);
    // The call and 8 retries, each with the upstream's exact requestState and a new id.
    expect(calls).toHaveLength(9);
    expect(calls.slice(1).every((entry) => entry.params.requestState === "again")).toBe(true);
  });
});

describe("bounds an upstream or a client cannot push past", () => {
  const careless = { UPSTREAMS: JSON.stringify([{ name: "careless", url: new URL("/raw/careless", modernUrl).href }]) };

  it(`a round of more than ${MAX_INPUT_REQUESTS_PER_ROUND} input requests ends the call with an error before the client is asked anything`, async () => {
    const { session } = await initialize("/mcp/careless", { vars: careless, capabilities: { elicitation: {} } });
    const reply = await post(
      "/mcp/careless",
      {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "many", arguments: { count: MAX_INPUT_REQUESTS_PER_ROUND + 1 } },
      },
      { session, vars: careless },
    );
    // The first message is the answer: no server request went out.
    const first = (
      reply.headers.get("content-type")?.includes("text/event-stream")
        ? JSON.parse((await readSse(reply.body!)[Symbol.asyncIterator]().next()).value.data)
        : await reply.json()
    ) as Json;
    expect(first).toMatchObject({ id: 5, error: { code: -32603 } });
    expect(first.error.message).toContain(`asked for ${MAX_INPUT_REQUESTS_PER_ROUND + 1} inputs in one round`);
  });

  it("a refused question ends a round of several at once, though the others are still unanswered", async () => {
    const { session } = await initialize("/mcp/careless", { vars: careless, capabilities: { elicitation: {} } });
    const call = await post(
      "/mcp/careless",
      { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "many", arguments: { count: 2 } } },
      { session, vars: careless },
    );
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const first = JSON.parse((await events.next()).value.data) as Json;
    const second = JSON.parse((await events.next()).value.data) as Json;
    expect([first.method, second.method]).toEqual(["elicitation/create", "elicitation/create"]);
    // Only the first is answered, with a refusal; the second never is.
    const refused = await post(
      "/mcp/careless",
      { jsonrpc: "2.0", id: first.id, error: { code: -1, message: "user declined to look" } },
      { session, vars: careless },
    );
    expect(refused.status).toBe(202);
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final).toMatchObject({ id: 6, error: { code: -32603 } });
    expect(final.error.message).toContain("user declined to look");
  });

  it("an answer too large to carry is refused with HTTP 413, and the call ends at once with the reason", async () => {
    const { session } = await initialize("/mcp/modern", { vars: ONLY_MODERN, capabilities: { elicitation: {} } });
    const call = await post(
      "/mcp/modern",
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "confirm", arguments: { text: "big" } } },
      { session, vars: ONLY_MODERN },
    );
    const events = readSse(call.body!)[Symbol.asyncIterator]();
    const asked = JSON.parse((await events.next()).value.data) as Json;
    expect(asked.method).toBe("elicitation/create");
    const delivered = await post(
      "/mcp/modern",
      {
        jsonrpc: "2.0",
        id: asked.id,
        result: { action: "accept", content: { ok: true, note: "x".repeat(MAX_INPUT_ANSWER_CHARS) } },
      },
      { session, vars: ONLY_MODERN },
    );
    expect(delivered.status).toBe(413);
    const final = JSON.parse((await events.next()).value.data) as Json;
    expect(final).toMatchObject({ id: 8, error: { code: -32603 } });
    expect(final.error.message).toContain(`past the ${MAX_INPUT_ANSWER_CHARS} the gateway carries`);
  });
});
