/**
 * Multi-round-trip requests toward 2026-07-28 clients: an upstream's input_required answer
 * reaches the client with a requestState sealed by the gateway, the retry gets the
 * upstream's own state back byte for byte (test/fixtures/mrtr-upstream.ts checks the raw
 * text), and every state the gateway did not issue for this caller and this request is
 * refused with -32602 and HTTP 400.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { MAX_SEALED_TOKEN_CHARS, sealState } from "../../src/core/sealed-state";
import { requestDigest } from "../../src/eras/request-state";
import type { Json } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";
import { admin, authVars, makeKey } from "../helpers/auth";
import { STATE_RAW } from "../fixtures/mrtr-upstream";

const mrtr = inject("mrtrUpstreamUrl");
const { alpha } = inject("fixtureUrls");
const VARS = {
  UPSTREAMS: JSON.stringify([
    { name: "mrtr", url: mrtr },
    { name: "alpha", url: alpha },
  ]),
};
const SECRET = (env as unknown as { SESSION_SECRET: string }).SESSION_SECRET;
const ANSWER = { name: { action: "accept", content: { name: "Ada" } } };

describe.each([
  ["/mcp/mrtr", "ask", "ask_stateless"],
  ["/mcp", "mrtr___ask", "mrtr___ask_stateless"],
])("input_required on %s", (path, ask, askStateless) => {
  it("is relayed with the upstream's questions and a sealed state; the retry gives the upstream its own state byte for byte", async () => {
    const first = await modern(path, "tools/call", { name: ask, arguments: { x: 1 } }, { vars: VARS });
    expect(first.result.resultType).toBe("input_required");
    expect(first.result.inputRequests.name.method).toBe("elicitation/create");
    expect(first.result.requestState).toMatch(/^s1\./);
    expect(first.result.requestState).not.toContain("t\u00e9te");
    const retry = await modern(
      path,
      "tools/call",
      { name: ask, arguments: { x: 1 }, inputResponses: ANSWER, requestState: first.result.requestState },
      { vars: VARS },
    );
    expect(retry.result).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "name=Ada state=exact" }],
    });
  });

  it("an upstream that sent no requestState gets none back, though the client holds the gateway's", async () => {
    const first = await modern(path, "tools/call", { name: askStateless, arguments: {} }, { vars: VARS });
    expect(first.result.requestState).toMatch(/^s1\./);
    const retry = await modern(
      path,
      "tools/call",
      { name: askStateless, arguments: {}, inputResponses: ANSWER, requestState: first.result.requestState },
      { vars: VARS },
    );
    expect(retry.result.content[0].text).toBe("state=absent");
  });
});

it("a resource read's retry on /mcp goes to the upstream that asked", async () => {
  const first = await modern("/mcp", "resources/read", { uri: "mrtr://doc" }, { vars: VARS });
  expect(first.result.resultType).toBe("input_required");
  const retry = await modern(
    "/mcp",
    "resources/read",
    { uri: "mrtr://doc", inputResponses: ANSWER, requestState: first.result.requestState },
    { vars: VARS },
  );
  expect(retry.result.contents[0].text).toBe("name=Ada state=exact");
  // server/utilities/caching: an interim result carries no hints; a retry's result must not be cached.
  expect(first.result).not.toHaveProperty("ttlMs");
  expect(first.result).not.toHaveProperty("cacheScope");
  expect(retry.result).not.toHaveProperty("ttlMs");
  expect(retry.result).not.toHaveProperty("cacheScope");
  const plain = await modern("/mcp", "resources/list", {}, { vars: VARS });
  expect(plain.result).toHaveProperty("ttlMs");
});

describe("refused states: -32602, HTTP 400, the retry's id, and what to do", () => {
  async function refused(params: Record<string, unknown>, path = "/mcp/mrtr"): Promise<Json> {
    const response = await modernPost(path, "tools/call", params, { vars: VARS, id: "retry-7" });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({ id: "retry-7", error: { code: -32602 } });
    expect(body.error.message).toContain("send the original request again");
    return body.error;
  }

  async function issued(): Promise<string> {
    return (await modern("/mcp/mrtr", "tools/call", { name: "ask", arguments: { x: 1 } }, { vars: VARS })).result
      .requestState;
  }

  it("tampered", async () => {
    const token = await issued();
    const at = token.length - 5;
    const tampered = token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
    const error = await refused({ name: "ask", arguments: { x: 1 }, inputResponses: ANSWER, requestState: tampered });
    expect(error.data.reason).toBe("malformed");
  });

  it("the upstream's own state, handed back unsealed", async () => {
    const error = await refused({
      name: "ask",
      arguments: { x: 1 },
      inputResponses: ANSWER,
      requestState: JSON.parse(STATE_RAW),
    });
    expect(error.data.reason).toBe("malformed");
  });

  it("another request: other arguments, another tool, another route", async () => {
    const token = await issued();
    expect(
      (await refused({ name: "ask", arguments: { x: 2 }, inputResponses: ANSWER, requestState: token })).data.reason,
    ).toBe("other-request");
    expect(
      (await refused({ name: "ask_stateless", arguments: { x: 1 }, inputResponses: ANSWER, requestState: token })).data
        .reason,
    ).toBe("other-request");
    expect(
      (await refused({ name: "mrtr___ask", arguments: { x: 1 }, inputResponses: ANSWER, requestState: token }, "/mcp"))
        .data.reason,
    ).toBe("other-request");
  });

  it("issued to another principal", async () => {
    const digest = await requestDigest("mrtr", { method: "tools/call", params: { name: "ask", arguments: { x: 1 } } });
    const token = await sealState(SECRET, "request-state", "mallory", 60_000, {
      digest,
      upstream: "mrtr",
      state: STATE_RAW,
    });
    expect(
      (await refused({ name: "ask", arguments: { x: 1 }, inputResponses: ANSWER, requestState: token })).data.reason,
    ).toBe("other-principal");
  });

  it("expired", async () => {
    const digest = await requestDigest("mrtr", { method: "tools/call", params: { name: "ask", arguments: { x: 1 } } });
    const token = await sealState(
      SECRET,
      "request-state",
      "anonymous",
      60_000,
      { digest, upstream: "mrtr", state: STATE_RAW },
      Date.now() - 61_000,
    );
    expect(
      (await refused({ name: "ask", arguments: { x: 1 }, inputResponses: ANSWER, requestState: token })).data.reason,
    ).toBe("expired");
  });

  it("the control: the same token built the same way but current opens", async () => {
    const digest = await requestDigest("mrtr", { method: "tools/call", params: { name: "ask", arguments: { x: 1 } } });
    const token = await sealState(SECRET, "request-state", "anonymous", 60_000, {
      digest,
      upstream: "mrtr",
      state: STATE_RAW,
    });
    const retry = await modern(
      "/mcp/mrtr",
      "tools/call",
      { name: "ask", arguments: { x: 1 }, inputResponses: ANSWER, requestState: token },
      { vars: VARS },
    );
    expect(retry.result.content[0].text).toBe("name=Ada state=exact");
  });
});

it("on /mcp, a read that a bridged 2025 upstream answered 'not found' before a 2026-07-28 upstream asked: the retry reaches the one that asked", async () => {
  // alpha (2025, bridged for a client that can answer elicitations) is tried first and has no such resource; careless asks.
  const careless = new URL("/raw/careless", inject("modernUpstreamUrl")).href;
  const vars = {
    UPSTREAMS: JSON.stringify([
      { name: "alpha", url: alpha },
      { name: "careless", url: careless },
    ]),
  };
  const capabilities = { elicitation: {} };
  const uri = `careless://doc/${crypto.randomUUID()}`;
  const first = await modern("/mcp", "resources/read", { uri }, { vars, capabilities });
  expect(first.result).toMatchObject({
    resultType: "input_required",
    inputRequests: { ok: { method: "elicitation/create" } },
  });
  const retry = await modern(
    "/mcp",
    "resources/read",
    { uri, inputResponses: { ok: { action: "accept", content: {} } }, requestState: first.result.requestState },
    { vars, capabilities, id: "read-retry" },
  );
  expect(retry).toMatchObject({
    id: "read-retry",
    result: { resultType: "complete", contents: [{ uri, text: "read after asking" }] },
  });
});

it("an upstream state too large to come back sealed ends the call with -32603 instead of a requestState every retry of which is refused", async () => {
  const fits = await modern(
    "/mcp/mrtr",
    "tools/call",
    { name: "ask_big", arguments: { chars: 40_000 } },
    { vars: VARS },
  );
  expect(fits.result.resultType).toBe("input_required");
  expect(fits.result.requestState.length).toBeLessThanOrEqual(MAX_SEALED_TOKEN_CHARS);
  const big = await modern(
    "/mcp/mrtr",
    "tools/call",
    { name: "ask_big", arguments: { chars: 60_000 } },
    { vars: VARS, id: "big-1" },
  );
  expect(big).toMatchObject({
    id: "big-1",
    error: { code: -32603, data: { upstream: "mrtr", reason: "request-state-too-large" } },
  });
  expect(big.error.message).toContain(`past the ${MAX_SEALED_TOKEN_CHARS} a retry may bring back`);
});

it("a read's retry on /mcp never carries the client's input to an upstream its persona no longer reaches", async () => {
  const vars = authVars({ apiKeys: true }, VARS);
  for (const [name, allow] of [
    ["mrtr-reader", ["mrtr___*"]],
    ["alpha-only", ["alpha___*"]],
  ] as const) {
    expect((await admin("PUT", `/personas/${name}`, { roles: [`r-${name}`], allow }, vars)).status).toBe(200);
  }
  // One principal, two keys: its roles changed between the rounds.
  const principal = `reader-${crypto.randomUUID()}`;
  const before = await makeKey({ principal, roles: ["r-mrtr-reader"] }, vars);
  const after = await makeKey({ principal, roles: ["r-alpha-only"] }, vars);
  const first = await modern("/mcp", "resources/read", { uri: "mrtr://doc" }, { vars, headers: before.headers });
  expect(first.result.resultType).toBe("input_required");
  const retry = { uri: "mrtr://doc", inputResponses: ANSWER, requestState: first.result.requestState };
  const refused = await modernPost("/mcp", "resources/read", retry, { vars, headers: after.headers, id: "read-2" });
  expect(refused.status).toBe(400);
  expect(await refused.json()).toMatchObject({
    id: "read-2",
    error: {
      code: -32602,
      message: expect.stringContaining('names upstream "mrtr", which this route no longer serves'),
    },
  });
  // The control: the same retry under the roles that reached mrtr completes.
  expect(
    (await modern("/mcp", "resources/read", retry, { vars, headers: before.headers })).result.contents[0].text,
  ).toBe("name=Ada state=exact");
});

it("a state naming an upstream the route no longer serves (the configuration changed between rounds) is refused with -32602 and HTTP 400", async () => {
  const first = await modern("/mcp", "tools/call", { name: "mrtr___ask", arguments: { x: 1 } }, { vars: VARS });
  expect(first.result.resultType).toBe("input_required");
  const withoutMrtr = { UPSTREAMS: JSON.stringify([{ name: "alpha", url: alpha }]) };
  const retry = await modernPost(
    "/mcp",
    "tools/call",
    { name: "mrtr___ask", arguments: { x: 1 }, inputResponses: ANSWER, requestState: first.result.requestState },
    { vars: withoutMrtr, id: "gone-1" },
  );
  expect(retry.status).toBe(400);
  expect(await retry.json()).toMatchObject({
    id: "gone-1",
    error: {
      code: -32602,
      message: expect.stringContaining(
        'names upstream "mrtr", which this route no longer serves; send the original request again without requestState',
      ),
    },
  });
});
