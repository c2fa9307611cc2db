/**
 * The bridge: a 2025 upstream (the SDK v1 "alpha" fixture) asks a 2026-07-28 client for
 * elicitation, roots or sampling mid-call; the client gets input_required, and its retry
 * completes the same upstream call, held by the BridgedCall Durable Object. The retry on
 * another isolate is in test/e2e/bridge-isolates.test.ts.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { openState } from "../../src/core/sealed-state";
import {
  BRIDGE_OBJECT_MEMORY_BUDGET_BYTES,
  BRIDGE_RETRY_DEADLINE_MS,
  MAX_BRIDGE_ROUNDS,
  MAX_CALLS_PER_OBJECT,
  MAX_HELD_NOTIFICATION_CHARS,
} from "../../src/eras/bridge-protocol";
import type { BridgeStart } from "../../src/context/object-rpc";
import { MAX_HELD_MESSAGE_BYTES } from "../../src/upstream/reply-body";
import type { BridgedCall } from "../../src/shell/bridged-call";
import { hugePayloadBytes } from "../fixtures/raw-upstream-bytes";
import { createApp } from "../../src/gateway";
import type { CallRecord } from "../../src/context/call-record";
import type { Json } from "../helpers/gateway";
import { gatewayFetch, messages } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";
import { ADMIN_VARS, admin, putDocument } from "../helpers/admin";

const bindings = env as unknown as {
  SESSION_SECRET: string;
  BRIDGED_CALLS: DurableObjectNamespace<BridgedCall>;
  PAYLOADS: R2Bucket;
};

/** The Durable Object a sealed bridge state names (opened with the test's secret, as the gateway would). */
async function objectOf(requestState: string): Promise<DurableObjectStub<BridgedCall>> {
  const opened = await openState(bindings.SESSION_SECRET, "request-state", "anonymous", requestState);
  if (!opened.ok) throw new Error(`state did not open: ${opened.reason}`);
  const handle = JSON.parse(JSON.parse((opened.value as { state: string }).state) as string) as { object: string };
  return bindings.BRIDGED_CALLS.get(bindings.BRIDGED_CALLS.idFromString(handle.object));
}

describe.each(["/mcp/alpha", "/mcp"])("a 2025 upstream's questions on %s", (path) => {
  const tool = (name: string) => (path === "/mcp" ? `alpha___${name}` : name);

  it("elicitation: input_required with the question, the retry completes the same upstream call", async () => {
    const capabilities = { elicitation: {} };
    const first = await modern(path, "tools/call", { name: tool("ask_user"), arguments: {} }, { capabilities });
    expect(first.result.resultType).toBe("input_required");
    expect(first.result.inputRequests).toEqual({
      "elicitation-1": {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "What is your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      },
    });
    expect(first.result.requestState).toMatch(/^s1\./);
    const retry = await modern(
      path,
      "tools/call",
      {
        name: tool("ask_user"),
        arguments: {},
        inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
        requestState: first.result.requestState,
      },
      { capabilities },
    );
    expect(retry.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: 'accept: {"name":"Ada"}' }],
    });
  });

  it("roots: the client's roots reach the upstream", async () => {
    const capabilities = { roots: {} };
    const first = await modern(path, "tools/call", { name: tool("list_roots"), arguments: {} }, { capabilities });
    expect(first.result.inputRequests).toEqual({ "roots-1": { method: "roots/list" } });
    const roots = { roots: [{ uri: "file:///work/a" }, { uri: "file:///work/b" }] };
    const retry = await modern(
      path,
      "tools/call",
      {
        name: tool("list_roots"),
        arguments: {},
        inputResponses: { "roots-1": roots },
        requestState: first.result.requestState,
      },
      { capabilities },
    );
    expect(retry.result.content[0].text).toBe("file:///work/a,file:///work/b");
  });

  it("sampling: the upstream registers its sampling tool for a client that can sample, and gets the client's completion", async () => {
    const capabilities = { sampling: {} };
    const first = await modern(
      path,
      "tools/call",
      { name: tool("ask_llm"), arguments: { question: "Capital of France?" } },
      { capabilities },
    );
    expect(first.result.inputRequests["sampling-1"]).toMatchObject({
      method: "sampling/createMessage",
      params: { messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }], maxTokens: 50 },
    });
    const completion = {
      role: "assistant",
      content: { type: "text", text: "Paris" },
      model: "test-model",
      stopReason: "endTurn",
    };
    const retry = await modern(
      path,
      "tools/call",
      {
        name: tool("ask_llm"),
        arguments: { question: "Capital of France?" },
        inputResponses: { "sampling-1": completion },
        requestState: first.result.requestState,
      },
      { capabilities },
    );
    expect(retry.result.content[0].text).toBe("model said: Paris");
  });

  it("three kinds of question in one call: one round each, in the order asked, then the call's result", async () => {
    const capabilities = { elicitation: {}, sampling: {}, roots: {} };
    const answers: Record<string, unknown> = {
      "elicitation/create": { action: "accept", content: { name: "Ada" } },
      "sampling/createMessage": {
        role: "assistant",
        content: { type: "text", text: "Hi" },
        model: "test-model",
        stopReason: "endTurn",
      },
      "roots/list": { roots: [{ uri: "file:///a" }, { uri: "file:///b" }] },
    };
    const asked: string[] = [];
    let answer = await modern(path, "tools/call", { name: tool("ask_all"), arguments: {} }, { capabilities });
    while (answer.result?.resultType === "input_required") {
      const [key, request] = Object.entries(answer.result.inputRequests as Record<string, { method: string }>)[0]!;
      asked.push(`${key} ${request.method}`);
      answer = await modern(
        path,
        "tools/call",
        {
          name: tool("ask_all"),
          arguments: {},
          inputResponses: { [key]: answers[request.method] },
          requestState: answer.result.requestState,
        },
        { capabilities },
      );
    }
    expect(asked).toEqual([
      "elicitation-1 elicitation/create",
      "sampling-2 sampling/createMessage",
      "roots-3 roots/list",
    ]);
    expect(answer.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "name=Ada greeting=Hi roots=2" }],
    });
  });
});

describe("bridged calls and their bounds", () => {
  const capabilities = { elicitation: {} };
  const call = (extra: Record<string, unknown> = {}, id?: string) =>
    modernPost(
      "/mcp/alpha",
      "tools/call",
      { name: "ask_user", arguments: {}, ...extra },
      { capabilities, ...(id ? { id } : {}) },
    );

  it("a retry without the answer is asked the same question again, and the call still completes", async () => {
    const first = (await messages(await call()))[0] as Json;
    const again = (
      await messages(await call({ inputResponses: {}, requestState: first.result.requestState }))
    )[0] as Json;
    expect(again.result.resultType).toBe("input_required");
    expect(again.result.inputRequests).toEqual(first.result.inputRequests);
    const done = (
      await messages(
        await call({
          inputResponses: { "elicitation-1": { action: "decline" } },
          requestState: again.result.requestState,
        }),
      )
    )[0] as Json;
    expect(done.result.content[0].text).toBe("decline: {}");
  });

  it("a state is used once: replaying it after the call completed is refused with -32602 and HTTP 400", async () => {
    const first = (await messages(await call()))[0] as Json;
    const answer = {
      inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
      requestState: first.result.requestState,
    };
    expect(((await messages(await call(answer)))[0] as Json).result.resultType).toBe("complete");
    const replay = await call(answer, "replay-1");
    expect(replay.status).toBe(400);
    const body = (await replay.json()) as Json;
    expect(body).toMatchObject({ id: "replay-1", error: { code: -32602, data: { reason: "unknown" } } });
    expect(body.error.message).toContain("send the original request again");
  });

  it("the retry deadline: when it passes, the upstream call is cancelled and a late retry is told to start again", async () => {
    const first = (await messages(await call()))[0] as Json;
    const object = await objectOf(first.result.requestState);
    // The alarm runs at the earliest deadline; before it, nothing is cancelled.
    await runInDurableObject(object, (instance: BridgedCall) => instance.expire(Date.now()));
    const second = (
      await messages(await call({ inputResponses: {}, requestState: first.result.requestState }))
    )[0] as Json;
    expect(second.result.resultType).toBe("input_required");
    await runInDurableObject(object, (instance: BridgedCall) =>
      instance.expire(Date.now() + BRIDGE_RETRY_DEADLINE_MS + 1),
    );
    const late = await call(
      {
        inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
        requestState: second.result.requestState,
      },
      "late-1",
    );
    expect(late.status).toBe(400);
    expect(((await late.json()) as Json).error).toMatchObject({ code: -32602, data: { reason: "unknown" } });
  });

  it("the alarm is set for the question's deadline", async () => {
    const before = Date.now();
    const first = (await messages(await call()))[0] as Json;
    const alarm = await runInDurableObject(await objectOf(first.result.requestState), (_instance: BridgedCall, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeGreaterThanOrEqual(before + BRIDGE_RETRY_DEADLINE_MS);
    expect(alarm).toBeLessThanOrEqual(Date.now() + BRIDGE_RETRY_DEADLINE_MS);
  });

  it("the final answer goes through the pipeline's output side on the isolate of the retry (call record: upstream, status, bytes)", async () => {
    const records: CallRecord[] = [];
    const target = createApp({ observers: [(record) => void records.push(record)] });
    const first = await modern(
      "/mcp/alpha",
      "tools/call",
      { name: "ask_user", arguments: {} },
      { capabilities, target },
    );
    expect(records.at(-1)).toMatchObject({ upstream: "alpha", bridgedCall: expect.any(String) });
    const retry = await modern(
      "/mcp/alpha",
      "tools/call",
      {
        name: "ask_user",
        arguments: {},
        inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
        requestState: first.result.requestState,
      },
      { capabilities, target },
    );
    expect(retry.result.resultType).toBe("complete");
    expect(records.at(-1)).toMatchObject({
      upstream: "alpha",
      upstreamStatus: 200,
      bytesFromUpstream: expect.any(Number),
      bytesToClient: expect.any(Number),
    });
  });
});

describe("the output side sees the final answer, not the question", () => {
  it("rules append their hint to the completed result only; an input_required result passes as it is", async () => {
    await putDocument("/rules", { hints: { alpha___ask_user: "Names are case-sensitive." } }, ADMIN_VARS);
    try {
      const capabilities = { elicitation: {} };
      const first = await modern(
        "/mcp/alpha",
        "tools/call",
        { name: "ask_user", arguments: {} },
        { capabilities, vars: ADMIN_VARS },
      );
      expect(first.result.resultType).toBe("input_required");
      expect(first.result.content).toBeUndefined();
      const retry = await modern(
        "/mcp/alpha",
        "tools/call",
        {
          name: "ask_user",
          arguments: {},
          inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
          requestState: first.result.requestState,
        },
        { capabilities, vars: ADMIN_VARS },
      );
      expect(retry.result.content.map((block: { text: string }) => block.text)).toEqual([
        'accept: {"name":"Ada"}',
        "Names are case-sensitive.",
      ]);
    } finally {
      await admin("DELETE", "/rules");
    }
  });
});

describe("output filters", () => {
  it("pass the question as it is, and apply to the retry's answer (fail closed: the non-JSON result is withheld)", async () => {
    expect((await admin("PUT", "/filter-sets/default", '{"tools":{"alpha___ask_user":{"retain":[""]}}}')).status).toBe(
      200,
    );
    try {
      const capabilities = { elicitation: {} };
      const first = await modern(
        "/mcp/alpha",
        "tools/call",
        { name: "ask_user", arguments: {} },
        { capabilities, vars: ADMIN_VARS },
      );
      expect(first.result).toMatchObject({
        resultType: "input_required",
        inputRequests: { "elicitation-1": { method: "elicitation/create" } },
      });
      const retry = await modern(
        "/mcp/alpha",
        "tools/call",
        {
          name: "ask_user",
          arguments: {},
          inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
          requestState: first.result.requestState,
        },
        { capabilities, vars: ADMIN_VARS },
      );
      expect(retry.result).toMatchObject({
        isError: true,
        content: [{ type: "text", text: expect.stringContaining("withheld") }],
      });
    } finally {
      await admin("DELETE", "/filter-sets/default");
    }
  });
});

describe("what a bridged call says on the way", () => {
  it("progress notifications reach the client (with the round's answer), then the result", async () => {
    const response = await modernPost(
      "/mcp/alpha",
      "tools/call",
      { name: "count", arguments: { steps: 3 } },
      { capabilities: { elicitation: {} }, progressToken: "p-1" },
    );
    const all = await messages(response);
    const progress = all.filter((m: Json) => m.method === "notifications/progress");
    expect(progress.map((m: Json) => m.params)).toEqual(
      [1, 2, 3].map((progress) => ({ progressToken: "p-1", progress, total: 3 })),
    );
    expect(all.at(-1).result).toMatchObject({ resultType: "complete", content: [{ text: "counted to 3" }] });
  });
});

describe("a hand-written 2025 upstream asking on its call's stream", () => {
  const MRTR_VARS = { UPSTREAMS: JSON.stringify([{ name: "mrtr", url: inject("mrtrUpstreamUrl") }]) };
  const capabilities = { elicitation: {} };
  const ask = (extra: Record<string, unknown> = {}, id?: string) =>
    modernPost(
      "/mcp/mrtr",
      "tools/call",
      { name: "two_questions", arguments: {}, ...extra },
      { capabilities, vars: MRTR_VARS, ...(id ? { id } : {}) },
    );

  it("two questions, two rounds; a round's state is refused once the call has moved past it", async () => {
    const first = (await messages(await ask()))[0] as Json;
    expect(first.result.inputRequests["elicitation-1"].params.message).toBe("First?");
    const second = (
      await messages(
        await ask({
          inputResponses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
          requestState: first.result.requestState,
        }),
      )
    )[0] as Json;
    expect(second.result.resultType).toBe("input_required");
    expect(second.result.inputRequests).toEqual({
      "elicitation-2": {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "Second?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        },
      },
    });
    const stale = await ask(
      {
        inputResponses: { "elicitation-1": { action: "accept", content: { name: "Eve" } } },
        requestState: first.result.requestState,
      },
      "stale-1",
    );
    expect(stale.status).toBe(400);
    expect(((await stale.json()) as Json).error).toMatchObject({ code: -32602, data: { reason: "stale-round" } });
    const done = (
      await messages(
        await ask({
          inputResponses: { "elicitation-2": { action: "accept", content: { name: "Grace" } } },
          requestState: second.result.requestState,
        }),
      )
    )[0] as Json;
    expect(done.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "first=Ada second=Grace" }],
    });
  });

  it.each([
    ["the retry's own token", "p-retry", [3, 4].map((progress) => ({ progressToken: "p-retry", progress, total: 4 }))],
    ["nothing, for a retry that asked for no progress", undefined, []],
  ])("the call's progress after a question goes under %s", async (_, retryToken, later) => {
    const progressOf = (all: Json[]) =>
      all.filter((m) => m.method === "notifications/progress").map((m) => m.params as Json);
    const call = (extra: Record<string, unknown>, progressToken: string | undefined) =>
      modernPost(
        "/mcp/mrtr",
        "tools/call",
        { name: "progress_question", arguments: {}, ...extra },
        {
          capabilities,
          vars: MRTR_VARS,
          ...(progressToken ? { progressToken } : {}),
        },
      );
    const first = await messages(await call({}, "p-first"));
    expect(progressOf(first)).toEqual([1, 2].map((progress) => ({ progressToken: "p-first", progress, total: 4 })));
    const question = first.at(-1) as Json;
    expect(question.result.resultType).toBe("input_required");
    const answered = { "elicitation-1": { action: "accept", content: { name: "Ada" } } };
    const { requestState } = question.result;
    const retry = await messages(await call({ inputResponses: answered, requestState }, retryToken));
    // The 2025 upstream reports under the first request's token throughout; that request has been answered.
    expect(progressOf(retry)).toEqual(later);
    const done = (retry.at(-1) as Json).result;
    expect(done).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "done for Ada" }] });
  });

  it("a question the client did not declare it can answer is refused to the upstream, never put to the client", async () => {
    const body = await modern(
      "/mcp/mrtr",
      "tools/call",
      { name: "rude_sample", arguments: {} },
      { capabilities, vars: MRTR_VARS },
    );
    expect(body.result.resultType).toBe("complete");
    expect(body.result.content[0].text).toMatch(/^sampling: error .*sampling/);
  });
});

it("a client that goes away during a bridged round cancels the upstream call", async () => {
  const mrtr = inject("mrtrUpstreamUrl");
  const events = new URL(mrtr).origin;
  const started = fetch(`${events}/events/hang-started`).then((r) => r.json());
  const abort = new AbortController();
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: "hang-1",
    method: "tools/call",
    params: {
      name: "hang",
      arguments: {},
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
      },
    },
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "hang",
  };
  const pending = gatewayFetch(
    "/mcp/mrtr",
    { method: "POST", headers, body, signal: abort.signal },
    { UPSTREAMS: JSON.stringify([{ name: "mrtr", url: mrtr }]) },
  ).catch(() => undefined);
  // The upstream knows the call by the gateway's id for it (stateless clients' ids are replaced upstream: forward.ts).
  const upstreamId = (await started) as string;
  expect(upstreamId).toMatch(/^gw-req-/);
  abort.abort();
  expect(await (await fetch(`${events}/events/cancelled/${upstreamId}`)).json()).toMatchObject({
    requestId: upstreamId,
  });
  await pending;
});

it("an answer too large to hold is offloaded while it streams from the Durable Object, as on the direct path", {
  timeout: 120_000,
}, async () => {
  const { raw } = inject("fixtureUrls");
  const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]) };
  const MB = 20; // past the 16 MiB an isolate (or the object) holds whole
  const body = await modern(
    "/mcp/raw",
    "tools/call",
    { name: "huge", arguments: { mb: MB } },
    { capabilities: { elicitation: {} }, vars },
  );
  const envelope = JSON.parse(body.result.content[0].text) as Json;
  expect(envelope.originalSize).toBe(hugePayloadBytes(MB));
  expect((await bindings.PAYLOADS.head(`payloads/${envelope.payloadId}`))?.size).toBe(hugePayloadBytes(MB));
});

it("an answer too large to hold after a question is offloaded on the retry's isolate, and answers the retry", {
  timeout: 120_000,
}, async () => {
  const mrtr = inject("mrtrUpstreamUrl");
  const vars = { UPSTREAMS: JSON.stringify([{ name: "mrtr", url: mrtr, timeoutMs: 60_000 }]) };
  const capabilities = { elicitation: {} };
  const first = await modern(
    "/mcp/mrtr",
    "tools/call",
    { name: "ask_then_huge", arguments: {} },
    { capabilities, vars, id: "huge-1" },
  );
  expect(first.result.resultType).toBe("input_required");
  const [key] = Object.keys(first.result.inputRequests);
  const retry = await modern(
    "/mcp/mrtr",
    "tools/call",
    {
      name: "ask_then_huge",
      arguments: {},
      inputResponses: { [key!]: { action: "accept", content: {} } },
      requestState: first.result.requestState,
    },
    { capabilities, vars, id: "huge-2" },
  );
  expect(retry.id).toBe("huge-2");
  const envelope = JSON.parse(retry.result.content[0].text) as Json;
  expect(envelope.originalSize).toBeGreaterThan(MAX_HELD_MESSAGE_BYTES);
  expect((await bindings.PAYLOADS.head(`payloads/${envelope.payloadId}`))?.size).toBe(envelope.originalSize);
});

it("an object holds at most MAX_CALLS_PER_OBJECT calls; the next is refused as full (the isolate then tries the principal's next object)", async () => {
  const url = inject("mrtrUpstreamUrl");
  const object = bindings.BRIDGED_CALLS.get(bindings.BRIDGED_CALLS.idFromName(`full-test-${crypto.randomUUID()}`));
  const start = (n: number): BridgeStart => ({
    call: `call-${n}`,
    upstream: { name: "mrtr", url, headers: {}, timeoutMs: 10_000, idleTimeoutMs: 10_000 },
    client: {
      sid: `full-${n}`,
      protocolVersion: "2025-11-25",
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: "t" },
      upstreams: {},
      exp: Math.floor(Date.now() / 1000) + 3600,
    },
    caller: { principal: "anonymous", roles: [] },
    text: JSON.stringify({
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: { name: "two_questions", arguments: {} },
    }),
    id: n,
  });
  const outcomes = await Promise.all(Array.from({ length: MAX_CALLS_PER_OBJECT }, (_, n) => object.start(start(n))));
  expect(new Set(outcomes.map((outcome) => outcome.kind as string))).toEqual(new Set(["input"]));
  expect(await object.start(start(MAX_CALLS_PER_OBJECT))).toEqual({ kind: "gone", reason: "full" });
  await runInDurableObject(object, (instance: BridgedCall) =>
    instance.expire(Date.now() + BRIDGE_RETRY_DEADLINE_MS + 1),
  );
  expect((await object.start(start(MAX_CALLS_PER_OBJECT + 1))).kind as string).toBe("input");
});

it("an upstream that asks more than MAX_BRIDGE_ROUNDS questions has its call cancelled; the client is told why", async () => {
  const mrtr = inject("mrtrUpstreamUrl");
  const vars = { UPSTREAMS: JSON.stringify([{ name: "mrtr", url: mrtr }]) };
  const capabilities = { elicitation: {} };
  const started = fetch(`${new URL(mrtr).origin}/events/endless-started`).then((r) => r.json() as Promise<string>);
  const cancelled = started
    .then((upstreamId) => fetch(`${new URL(mrtr).origin}/events/cancelled/${upstreamId}`))
    .then((r) => r.json());
  let answer = await modern(
    "/mcp/mrtr",
    "tools/call",
    { name: "endless_questions", arguments: {} },
    { capabilities, vars, id: "endless-1" },
  );
  for (let round = 1; round <= MAX_BRIDGE_ROUNDS; round++) {
    expect(Object.keys(answer.result.inputRequests)).toEqual([`elicitation-${round}`]);
    const inputResponses = { [`elicitation-${round}`]: { action: "accept", content: {} } };
    answer = await modern(
      "/mcp/mrtr",
      "tools/call",
      { name: "endless_questions", arguments: {}, inputResponses, requestState: answer.result.requestState },
      { capabilities, vars },
    );
  }
  expect(answer.error).toMatchObject({ code: -32603, data: { reason: "too-many-rounds" } });
  expect(answer.error.message).toContain(`more than ${MAX_BRIDGE_ROUNDS} questions`);
  expect(await cancelled).toMatchObject({ requestId: await started });
});

it("a retry without the answer does not extend the question's deadline: one request a minute cannot hold a call forever", async () => {
  const url = inject("mrtrUpstreamUrl");
  const object = bindings.BRIDGED_CALLS.get(bindings.BRIDGED_CALLS.idFromName(`deadline-test-${crypto.randomUUID()}`));
  const start: BridgeStart = {
    call: "held",
    upstream: { name: "mrtr", url, headers: {}, timeoutMs: 10_000, idleTimeoutMs: 10_000 },
    client: {
      sid: "deadline",
      protocolVersion: "2025-11-25",
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: "t" },
      upstreams: {},
      exp: Math.floor(Date.now() / 1000) + 3600,
    },
    caller: { principal: "anonymous", roles: [] },
    text: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "two_questions", arguments: {} },
    }),
    id: 1,
  };
  expect((await object.start(start)).kind as string).toBe("input");
  const deadline = (await runInDurableObject(object, (_instance: BridgedCall, state) => state.storage.getAlarm()))!;
  // The object's clock moves past the question's time, so a deadline set anew would be later.
  while ((await runInDurableObject(object, () => Date.now())) <= deadline - BRIDGE_RETRY_DEADLINE_MS);
  expect(await object.answer({ call: "held", principal: "anonymous", round: 1, responses: {} })).toMatchObject({
    kind: "input",
    round: 1,
  });
  expect(await runInDurableObject(object, (_instance: BridgedCall, state) => state.storage.getAlarm())).toBe(deadline);
  await runInDurableObject(object, (instance: BridgedCall) => instance.expire(deadline));
  expect(
    await object.answer({
      call: "held",
      principal: "anonymous",
      round: 1,
      responses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
    }),
  ).toEqual({ kind: "gone", reason: "unknown" });
});

describe("a round that throws (rather than reporting a failure) frees its call's slot", () => {
  const url = inject("mrtrUpstreamUrl");
  const startOf = (call: string): BridgeStart => ({
    call,
    upstream: { name: "mrtr", url, headers: {}, timeoutMs: 10_000, idleTimeoutMs: 10_000 },
    client: {
      sid: `throws-${call}`,
      protocolVersion: "2025-11-25",
      clientCapabilities: { elicitation: {} },
      clientInfo: { name: "t" },
      upstreams: {},
      exp: Math.floor(Date.now() / 1000) + 3600,
    },
    caller: { principal: "anonymous", roles: [] },
    text: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "two_questions", arguments: {} },
    }),
    id: 1,
  });
  const fresh = () =>
    bindings.BRIDGED_CALLS.get(bindings.BRIDGED_CALLS.idFromName(`throws-test-${crypto.randomUUID()}`));
  // Called inside the object (no RPC, so nothing is cloned): values that throw when the round uses them.
  const throwing = {
    toJSON: () => {
      throw new Error("boom");
    },
  };

  it("in answer, after it took the question: the call is forgotten, not left neither waiting nor done", async () => {
    const object = fresh();
    expect((await object.start(startOf("c"))).kind as string).toBe("input");
    await runInDurableObject(object, async (instance: BridgedCall) => {
      await expect(
        instance.answer({ call: "c", principal: "anonymous", round: 1, responses: { "elicitation-1": throwing } }),
      ).rejects.toThrow("boom");
    });
    expect(
      await object.answer({
        call: "c",
        principal: "anonymous",
        round: 1,
        responses: { "elicitation-1": { action: "accept", content: { name: "Ada" } } },
      }),
    ).toEqual({ kind: "gone", reason: "unknown" });
  });

  it("in start: the call's id and slot are free again", async () => {
    const object = fresh();
    const start = startOf("c");
    await runInDurableObject(object, async (instance: BridgedCall) => {
      const large = {
        take: async () => "",
        get minBytes(): number {
          throw new Error("boom");
        },
      };
      await expect(instance.start({ ...start, large })).rejects.toThrow("boom");
    });
    expect((await object.start(start)).kind as string).toBe("input");
  });
});

it("a bridged call's stream cut before the answer is resumed with Last-Event-ID, as on the direct path", async () => {
  const { raw } = inject("fixtureUrls");
  const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw }]) };
  // A client that can answer elicitations: its call to this 2025 upstream runs in the Durable Object.
  const response = await modernPost(
    "/mcp/raw",
    "tools/call",
    { name: "cut", arguments: {} },
    { capabilities: { elicitation: {} }, vars },
  );
  expect((await messages(response)).at(-1).result).toMatchObject({ content: [{ type: "text", text: "resumed" }] });
});

it("what an object's calls may hold at once stays within its memory budget, below a Durable Object's 128 MB", () => {
  const perCall = MAX_HELD_MESSAGE_BYTES + 2 * MAX_HELD_NOTIFICATION_CHARS;
  expect(MAX_CALLS_PER_OBJECT * perCall).toBeLessThanOrEqual(BRIDGE_OBJECT_MEMORY_BUDGET_BYTES);
  expect(BRIDGE_OBJECT_MEMORY_BUDGET_BYTES).toBeLessThan(128 * 1000 * 1000);
});
