/**
 * A large answer no layer reads flows to a 2025 client as the upstream sends it
 * (src/core/response-flow.ts): what happens when it breaks off after the client got its
 * start. A JSON answer's body is cut where it stands (the client's read fails, it is never
 * a whole answer); an SSE answer's event is ended as one no client dispatches
 * (`event: incomplete`), then the request is answered with the upstream's failure. Either
 * way the call is recorded as the upstream's failure, and the session goes on. Through the
 * real gateway in workerd, against a server on loopback that misbehaves on purpose
 * (test/fixtures/faulty-upstream.ts, its `flow-*` modes).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, inject, it } from "vitest";
import worker from "../../src/index";
import { readSse } from "../../src/core/sse";
import { Answer } from "../../src/context/answer";
import { ADMIN_VARS, admin } from "../helpers/admin";
import { recordingQueue } from "../helpers/audit";
import { ACCEPT_BOTH, gatewayFetch, initialize, LATEST, request, type Json, type Vars } from "../helpers/gateway";

const faulty = inject("faultyUpstreamUrl");
let tags = 0;

/** The `mode` upstream, offload off for it: nothing reads its answers. */
function upstream(mode: string, extra: Record<string, unknown> = {}): Vars {
  return {
    UPSTREAMS: JSON.stringify([{ name: "up", url: `${faulty}/${mode}/f${Date.now()}-${tags++}`, ...extra }]),
    OFFLOAD: JSON.stringify({ exclude: ["*"] }),
  };
}

/**
 * One tools/call on `session` whose answer is read to its end (or until it breaks), then the
 * work the Worker left to `waitUntil`: the answer's bytes, or the error its read ended with.
 */
async function callAndRead(vars: Vars, session: string, id: number) {
  const flowsBefore = Answer.counts.flows;
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request("http://gateway.test/mcp/up", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: ACCEPT_BOTH,
        "mcp-session-id": session,
        "mcp-protocol-version": LATEST,
        "cf-connecting-ip": "10.9.8.7",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: {} } }),
    }),
    { ...env, ...vars } as never,
    ctx,
  );
  let text: string | undefined;
  let readError: unknown;
  try {
    text = new TextDecoder().decode(await response.arrayBuffer());
  } catch (error) {
    readError = error;
  }
  await waitOnExecutionContext(ctx);
  return { response, text, readError, flowed: Answer.counts.flows - flowsBefore };
}

/** The SSE events of an answer's text. */
async function sseEvents(text: string) {
  const events = [];
  for await (const event of readSse(new Blob([text]).stream())) events.push(event);
  return events;
}

/** The audit event of the tools/call among `batches`. */
function callEvent(batches: { body: Json }[][]): Json | undefined {
  return batches
    .flat()
    .map((message) => message.body)
    .find((event) => event["mcp.method.name"] === "tools/call");
}

describe("a large answer that flows to a 2025 client as JSON", () => {
  it.each([
    ["flow-cut", {}, "bad-response", /broke off/],
    ["flow-broken", {}, "bad-response", /not a JSON-RPC success response/],
    ["flow-other-id", {}, "bad-response", /answered id "other-21", not the request's/],
    ["flow-stall", { idleTimeoutMs: 300 }, "timeout", /sent nothing for 300 ms/],
  ] as const)(
    "%s: cuts the client's body short, is the upstream's failure, and the session goes on",
    async (mode, extra, failure, message) => {
      const { queue, batches } = recordingQueue();
      const vars = { ...upstream(mode, extra), AUDIT_QUEUE: queue };
      const { session } = await initialize("/mcp/up", { vars });
      const got = await callAndRead(vars, session, 21);
      expect(got.flowed).toBe(1);
      expect(got.response.status).toBe(200);
      expect(got.response.headers.get("content-type")).toBe("application/json");
      // Never a whole answer: the body ends in an error where the upstream's did (or the bytes stopped being
      // one), its last piece held back until the end is checked (flow-other-id's id comes last, as the SDK writes it).
      expect(got.readError).toBeDefined();
      const event = callEvent(batches);
      expect(event?.["gateway.outcome"]).toBe("error");
      expect(event?.["gateway.failure"]).toBe(failure);
      expect(event?.["gateway.error.message"]).toMatch(message);
      // What went out before it broke off: the answer's start, checked (more than the gateway reads before it lets one flow).
      expect(event?.["gateway.bytes_to_client"]).toBeGreaterThan(256 * 1024);
      // The session and the gateway go on.
      const listed = await request("/mcp/up", session, "tools/list", {}, { vars });
      expect(listed.result.tools.length).toBeGreaterThan(0);
    },
  );
});

describe("a large answer that flows to a 2025 client as SSE", () => {
  it("ends its broken event as one no client dispatches, then answers with the upstream's failure", async () => {
    const vars = upstream("flow-cut-sse");
    const { session } = await initialize("/mcp/up", { vars });
    const got = await callAndRead(vars, session, 22);
    expect(got.flowed).toBe(1);
    expect(got.response.headers.get("content-type")).toBe("text/event-stream");
    expect(got.readError).toBeUndefined();
    const events = await sseEvents(got.text!);
    // The start of the answer went out, in an event whose type is no longer `message`.
    const cut = events.find((event) => event.event === "incomplete");
    expect(cut?.data.startsWith('{"jsonrpc":"2.0","id":22,"result":{"content":[{"type":"text","text":"fff')).toBe(true);
    const messages = events.filter((event) => event.event === "message" && event.data !== "");
    expect(messages).toHaveLength(1);
    const answer = JSON.parse(messages[0]!.data);
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: 22, error: { code: -32010, data: { upstream: "up" } } });
    expect(answer.error.message).toMatch(/upstream "up"/);
  });

  it.each(["flow-cut-sse", "flow-cut"])("%s: reaches an SDK client as the call's error, not a hang", async (mode) => {
    const vars = upstream(mode);
    const client = new Client({ name: "flow-test", version: "1" });
    const fetchThroughGateway = (input: string | URL | Request, init?: RequestInit) =>
      gatewayFetch(String(input instanceof Request ? input.url : input), init, vars);
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://gateway.test/mcp/up"), { fetch: fetchThroughGateway }),
    );
    try {
      // Over SSE the error the gateway sent; a cut JSON body is the client's own read failing, at once.
      const error = await client.callTool({ name: "echo", arguments: {} }, undefined, { timeout: 10_000 }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(Error);
      expect(String(error)).not.toMatch(/timed out/i);
      if (mode === "flow-cut-sse") expect(String(error)).toMatch(/upstream "up"/);
      // The same client calls on.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

describe("an answer to another request", () => {
  it("is not let flow when its id comes first: it is read whole and dropped, and the request's own answer follows", async () => {
    const vars = upstream("flow-foreign-sse");
    const { session } = await initialize("/mcp/up", { vars });
    const got = await callAndRead(vars, session, 25);
    expect(got.flowed).toBe(0);
    const events = await sseEvents(got.text!);
    const answers = events.filter((event) => event.event === "message" && event.data !== "");
    expect(answers.map((event) => JSON.parse(event.data))).toEqual([
      { jsonrpc: "2.0", id: 25, result: { content: [{ type: "text", text: "yours" }] } },
    ]);
  });
});

describe("a whole large answer", () => {
  it("that is a tool error is audited as one (without its message, which went out unread)", async () => {
    const { queue, batches } = recordingQueue();
    const vars = { ...upstream("flow-tool-error"), AUDIT_QUEUE: queue };
    const { session } = await initialize("/mcp/up", { vars });
    const got = await callAndRead(vars, session, 26);
    expect(got.flowed).toBe(1);
    expect(JSON.parse(got.text!).result.isError).toBe(true);
    const event = callEvent(batches);
    expect(event?.["gateway.outcome"]).toBe("tool_error");
    expect(event?.["gateway.error.message"]).toBeUndefined();
  });

  afterAll(async () => {
    await admin("DELETE", "/rules");
  });

  it("flows when no layer reads it, and is held whole when one does (a rules hint for the tool)", async () => {
    const { queue, batches } = recordingQueue();
    const vars = { ...upstream("flow-whole"), ...ADMIN_VARS, AUDIT_QUEUE: queue };
    const { session } = await initialize("/mcp/up", { vars });
    const flowed = await callAndRead(vars, session, 23);
    expect(flowed.flowed).toBe(1);
    // Recorded once it ended: a success, every byte counted.
    const event = callEvent(batches);
    expect(event?.["gateway.outcome"]).toBe("success");
    expect(event?.["gateway.bytes_to_client"]).toBe(new TextEncoder().encode(flowed.text!).byteLength);
    const answer = JSON.parse(flowed.text!);
    expect(answer.id).toBe(23);
    expect(answer.result.content).toHaveLength(1);
    expect(answer.result.content[0].text).toHaveLength(600 * 1024);

    expect((await admin("PUT", "/rules", { hints: { up___echo: "Read it in parts." } })).status).toBe(200);
    const held = await callAndRead(vars, session, 24);
    expect(held.flowed).toBe(0);
    const hinted = JSON.parse(held.text!);
    expect(hinted.result.content).toHaveLength(2);
    expect(hinted.result.content[1].text).toBe("Read it in parts.");
  });
});
