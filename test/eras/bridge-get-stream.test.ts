/**
 * The call bridge with real 2025 servers that ask their questions unrelated to the call,
 * on the session's GET stream: `fastmcp` (`elicit`, `requestSampling`) and
 * server-everything (`roots/list`). A 2026-07-28 client gets input_required for each, as
 * for a question asked on the call's own stream, and its retry completes the call; before
 * the gateway read the GET stream of a bridged call's session, such a call hung until the
 * client gave up. The SDK and @ai-sdk/mcp clients doing the same end to end:
 * test/e2e/real-upstreams-bridge.test.ts.
 */
import { describe, expect, inject, it } from "vitest";
import type { Json } from "../helpers/gateway";
import { modern } from "../helpers/modern";

const VARS = {
  UPSTREAMS: JSON.stringify([
    { name: "fm", url: inject("fastmcpUpstreamUrl") },
    { name: "everything", url: inject("everythingUpstreamUrl") },
  ]),
};
/** Questions a call may bring before these tests give up on it (server-everything asks for roots twice on a new session). */
const MAX_ROUNDS = 4;

/**
 * Calls `tool` as a modern client and answers each question with `answers[method]` until
 * the call completes: the result and the methods asked, round by round.
 */
async function callAnswering(
  path: string,
  tool: string,
  args: Record<string, unknown>,
  capabilities: Record<string, unknown>,
  answers: Record<string, unknown>,
): Promise<{ result: Json; asked: string[][] }> {
  const asked: string[][] = [];
  let extra: Record<string, unknown> = {};
  for (let round = 0; round <= MAX_ROUNDS; round++) {
    const body = await modern(
      path,
      "tools/call",
      { name: tool, arguments: args, ...extra },
      { capabilities, vars: VARS },
    );
    expect(body.error).toBeUndefined();
    if (body.result.resultType !== "input_required") return { result: body.result, asked };
    const requests = Object.entries(body.result.inputRequests as Record<string, { method: string }>);
    asked.push(requests.map(([, request]) => request.method));
    extra = {
      requestState: body.result.requestState,
      inputResponses: Object.fromEntries(requests.map(([key, request]) => [key, answers[request.method]])),
    };
  }
  throw new Error(`${tool} still asked after ${MAX_ROUNDS} rounds: ${JSON.stringify(asked)}`);
}

const ANSWERS = {
  "elicitation/create": { action: "accept", content: { name: "Ada" } },
  "sampling/createMessage": { model: "test-model", role: "assistant", content: { type: "text", text: "Paris" } },
  "roots/list": { roots: [{ uri: "file:///work/project", name: "project" }] },
};

describe.each([
  ["/mcp/fm", ""],
  ["/mcp", "fm___"],
])("fastmcp on %s", (path, prefix) => {
  it("elicitation asked on the GET stream: one round, the form as the input request, then the tool's result", async () => {
    const first = await modern(
      path,
      "tools/call",
      { name: `${prefix}ask_name`, arguments: {} },
      { capabilities: { elicitation: {} }, vars: VARS },
    );
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
    const { result, asked } = await callAnswering(path, `${prefix}ask_name`, {}, { elicitation: {} }, ANSWERS);
    expect(asked).toEqual([["elicitation/create"]]);
    expect(result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: 'accept: {"name":"Ada"}' }],
    });
  });

  it("a client that cannot sample gets the tool's error at once, never a hang or a question it cannot answer", async () => {
    const body = await modern(
      path,
      "tools/call",
      { name: `${prefix}ask_llm`, arguments: { question: "Capital of France?" } },
      { capabilities: { elicitation: {} }, vars: VARS },
    );
    expect(body.result).toMatchObject({ resultType: "complete", isError: true });
    expect(JSON.stringify(body.result.content)).toMatch(/sampling/i);
  });

  it("sampling asked on the GET stream: the client's completion reaches the tool", async () => {
    const { result, asked } = await callAnswering(
      path,
      `${prefix}ask_llm`,
      { question: "Capital of France?" },
      { sampling: {} },
      ANSWERS,
    );
    expect(asked).toEqual([["sampling/createMessage"]]);
    expect(result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "model said: Paris" }] });
  });
});

describe.each([
  ["/mcp/everything", ""],
  ["/mcp", "everything___"],
])("server-everything on %s", (path, prefix) => {
  it("roots asked on the GET stream: every question is roots/list, and the tool lists the client's roots", async () => {
    const { result, asked } = await callAnswering(path, `${prefix}get-roots-list`, {}, { roots: {} }, ANSWERS);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.flat().every((method) => method === "roots/list")).toBe(true);
    expect(result.content[0].text).toContain("URI: file:///work/project");
  });
});

it("a question on the GET stream of a bridged call's session while no call waits there is refused to the upstream at once", async () => {
  const { url, origin } = inject("getStreamUpstream");
  const vars = { UPSTREAMS: JSON.stringify([{ name: "gs", url }]) };
  const body = await modern(
    "/mcp/gs",
    "tools/call",
    { name: "quick", arguments: {} },
    { capabilities: { roots: {} }, vars },
  );
  expect(body.result).toMatchObject({ resultType: "complete", content: [{ text: "quick answer" }] });
  // The call is over; its session (kept for the next call) still has its GET stream open.
  const asked = (await (await fetch(`${origin}/ask`, { method: "POST" })).json()) as { streams: number };
  expect(asked.streams).toBeGreaterThan(0);
  const answer = (await (await fetch(`${origin}/events/answer`)).json()) as Json;
  expect(answer.error).toMatchObject({ code: -32601 });
  expect(answer.error.message).toMatch(/roots\/list.*no call/);
});

it("a question on the GET stream that comes with the call's answer is refused to the upstream, not lost with the call's session", async () => {
  const { url, origin } = inject("getStreamUpstream");
  const vars = { UPSTREAMS: JSON.stringify([{ name: "gs", url }]) };
  const capabilities = { roots: {} };
  const first = await modern("/mcp/gs", "tools/call", { name: "held", arguments: {} }, { capabilities, vars });
  expect(first.result.resultType).toBe("input_required");
  const requests = Object.entries(first.result.inputRequests as Record<string, { method: string }>);
  expect(requests.map(([, request]) => request.method)).toEqual(["roots/list"]);
  const key = requests[0]![0];
  // While the call waits for its retry, the upstream asks again on the GET stream and answers the call.
  const finished = (await (await fetch(`${origin}/finish`, { method: "POST" })).json()) as { finished: number };
  expect(finished.finished).toBe(1);
  const retry = await modern(
    "/mcp/gs",
    "tools/call",
    {
      name: "held",
      arguments: {},
      requestState: first.result.requestState,
      inputResponses: { [key]: ANSWERS["roots/list"] },
    },
    { capabilities, vars },
  );
  expect(retry.result).toMatchObject({ resultType: "complete", content: [{ text: "held answer" }] });
  const answered = (await (await fetch(`${origin}/events/answer`)).json()) as Json;
  expect(answered).toMatchObject({ id: expect.stringMatching(/^held-/), result: ANSWERS["roots/list"] });
  // The late question belongs to no call any more: the upstream is told so instead of waiting for ever
  // (left unanswered, the fixture never has a second answer to give and this test times out).
  const refused = (await (await fetch(`${origin}/events/answer`)).json()) as Json;
  expect(refused).toMatchObject({ id: expect.stringMatching(/^late-/), error: { code: -32601 } });
  expect(refused.error.message).toMatch(/roots\/list.*call/);
});
