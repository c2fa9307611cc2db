/**
 * Rate limits per principal through the rate-limiting binding (a tight one declared for
 * the tests in vitest.config.ts): chosen by the persona, 429 with Retry-After for a
 * request on its own, the JSON-RPC error inside a batch, notifications counted with
 * requests (refused ones never reach the upstream) but for the cancellation of a request
 * in flight, client progress that means nothing upstream dropped, other principals unaffected.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readSse } from "../../src/core/sse";
import { admin, authVars, makeKey } from "../helpers/auth";
import { answer, initialize, post, type Json } from "../helpers/gateway";

const VARS = authVars({ apiKeys: true, rateLimits: { tight: "RATE_LIMIT_TEST", missing: "RATE_LIMIT_NOT_BOUND" } });
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

beforeAll(async () => {
  expect(
    (await admin("PUT", "/personas/limited", { roles: ["r-limited"], allow: ["alpha___*"], rateLimit: "tight" }, VARS))
      .status,
  ).toBe(200);
  expect(
    (
      await admin(
        "PUT",
        "/personas/misconfigured",
        { roles: ["r-misconfigured"], allow: ["alpha___*"], rateLimit: "missing" },
        VARS,
      )
    ).status,
  ).toBe(200);
  expect(
    (await admin("PUT", "/personas/unlimited", { roles: ["r-unlimited"], allow: ["alpha___*"] }, VARS)).status,
  ).toBe(200);
  expect(
    (
      await admin(
        "PUT",
        "/personas/limited-raw",
        { roles: ["r-limited-raw"], allow: ["raw___*"], rateLimit: "tight" },
        VARS,
      )
    ).status,
  ).toBe(200);
  const both = ["alpha___*", "raw___*"];
  const limitedBoth = { roles: ["r-limited-both"], allow: both, rateLimit: "tight" };
  expect((await admin("PUT", "/personas/limited-both", limitedBoth, VARS)).status).toBe(200);
  const unlimitedBoth = { roles: ["r-unlimited-both"], allow: both };
  expect((await admin("PUT", "/personas/unlimited-both", unlimitedBoth, VARS)).status).toBe(200);
});
afterAll(async () => {
  const names = ["limited", "misconfigured", "unlimited", "limited-raw", "limited-both", "unlimited-both"];
  for (const name of names) await admin("DELETE", `/personas/${name}`, undefined, VARS);
});

/** The headers of a new key with `role`, for a principal named after `prefix`. */
async function keyFor(prefix: string, role: string): Promise<Record<string, string>> {
  return (await makeKey({ principal: `${prefix}-${crypto.randomUUID()}`, roles: [role] }, VARS)).headers;
}

function toolCall(id: number, name: string, extra: Json = {}): Json {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {}, ...extra } };
}

/** Calls a tool on `path` as a principal without a limit (to read what an upstream saw). */
async function callUnlimited(path: string, name: string, args: Record<string, unknown>): Promise<Json> {
  const headers = await keyFor("observer", "r-unlimited-both");
  const { session } = await initialize(path, { vars: VARS, headers });
  return answer(await post(path, toolCall(1, name, { arguments: args }), { vars: VARS, session, headers }));
}

/** How many notifications carrying `marker` the raw upstream received. */
async function rawNotifications(marker: string): Promise<string> {
  return (await callUnlimited("/mcp/raw", "notifications", { marker })).result.content[0].text;
}

describe("rate limits", () => {
  it("answers 429 with Retry-After once the principal's limit is used up, as a JSON-RPC error in a batch", async () => {
    const { headers } = await makeKey({ principal: `limited-${crypto.randomUUID()}`, roles: ["r-limited"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers, version: "2025-03-26" }); // 1 (initialize)
    const statuses: number[] = [];
    let over: Response | undefined;
    for (let i = 0; i < 4 && !over; i++) {
      const response = await post("/mcp", LIST, { vars: VARS, session, headers, version: "2025-03-26" });
      statuses.push(response.status);
      if (response.status === 429) over = response;
      else await response.text();
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(over!.headers.get("retry-after")).toBe("60");
    expect(((await over!.json()) as Json).error).toMatchObject({
      code: -32029,
      message: expect.stringContaining('the rate limit "tight" is used up'),
    });
    // A batch (2025-03-26) answers each request in the body: the limit shows as JSON-RPC errors.
    const batch = await post("/mcp", [LIST, { ...LIST, id: 2 }], {
      vars: VARS,
      session,
      headers,
      version: "2025-03-26",
    });
    const answers = (await batch.json()) as Json[];
    expect(answers.map((a) => a.error?.code)).toEqual([-32029, -32029]);
  });

  it("counts notifications with requests: over the limit, one is answered 429 and reaches no upstream", async () => {
    const { headers } = await makeKey(
      { principal: `limited-raw-${crypto.randomUUID()}`, roles: ["r-limited-raw"] },
      VARS,
    );
    // Request 1; notifications/initialized is free (the gateway told the upstream itself, and never relays it).
    const { session } = await initialize("/mcp/raw", { vars: VARS, headers });
    const marker = `marker-${crypto.randomUUID()}`;
    const notification = { jsonrpc: "2.0", method: "notifications/roots/list_changed", params: { _meta: { marker } } };
    const statuses: number[] = [];
    let over: Response | undefined;
    for (let i = 0; i < 6; i++) {
      // Settled: each accepted notification has reached the upstream before the next is sent.
      const response = await post("/mcp/raw", notification, { vars: VARS, session, headers, settle: true });
      statuses.push(response.status);
      if (response.status === 429) over ??= response;
      else await response.text();
    }
    expect(statuses).toEqual([202, 202, 429, 429, 429, 429]);
    expect(over!.headers.get("retry-after")).toBe("60");
    const message = expect.stringContaining("(notifications count with requests)");
    expect((await over!.json()) as Json).toMatchObject({ id: null, error: { code: -32029, message } });
    // One count: the notifications used the principal's requests up.
    const refused = await post("/mcp/raw", { jsonrpc: "2.0", id: 2, method: "ping" }, { vars: VARS, session, headers });
    expect(refused.status).toBe(429);
    await refused.text();
    expect(await rawNotifications(marker)).toBe("2");
  });

  it("drops an over-limit notification inside a batch and answers the batch's requests", async () => {
    const { headers } = await makeKey(
      { principal: `limited-raw-${crypto.randomUUID()}`, roles: ["r-limited-raw"] },
      VARS,
    );
    const options = { vars: VARS, headers, version: "2025-03-26", settle: true };
    const { session } = await initialize("/mcp/raw", { vars: VARS, headers, version: "2025-03-26" }); // request 1
    const marker = `marker-${crypto.randomUUID()}`;
    const notification = (n: number) => ({
      jsonrpc: "2.0",
      method: "notifications/roots/list_changed",
      params: { _meta: { marker, n } },
    });
    expect((await post("/mcp/raw", notification(1), { ...options, session })).status).toBe(202); // 2
    // The batch's notifications go first: one is counted (3), the other is over and dropped;
    // so is the ping, answered with the error.
    const messages = [{ jsonrpc: "2.0", id: 5, method: "ping" }, notification(2), notification(3)];
    const batch = await post("/mcp/raw", messages, { ...options, session });
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as Json[]).map((a) => [a.id, a.error?.code])).toEqual([[5, -32029]]);
    expect(await rawNotifications(marker)).toBe("2");
  });

  it("over the limit, forwards only the cancellation of a request in flight, and drops client progress", async () => {
    const headers = await keyFor("limited-both", "r-limited-both");
    const client = `cancel-${crypto.randomUUID()}`;
    const version = "2025-03-26"; // batches
    const params = { protocolVersion: version, capabilities: {}, clientInfo: { name: client, version: "1" } };
    const init = { jsonrpc: "2.0", id: 0, method: "initialize", params };
    const opened = await post("/mcp", init, { vars: VARS, headers }); // request 1
    const session = opened.headers.get("mcp-session-id")!;
    await opened.text();
    const options = { vars: VARS, headers, session, version };
    const initialized = await post("/mcp", { jsonrpc: "2.0", method: "notifications/initialized" }, options);
    expect(initialized.status).toBe(202); // free
    // Request 2: a call that runs until it is cancelled; its first progress says it is in flight.
    const meta = { _meta: { progressToken: "mine" } };
    const call = await post("/mcp", toolCall(42, "alpha___wait_for_cancel", meta), options);
    const events = readSse(call.body!);
    const first = JSON.parse((await events.next()).value!.data);
    expect(first).toMatchObject({ method: "notifications/progress", params: { progressToken: "mine" } });
    // Request 3: the limit is used up.
    const ping = await post("/mcp", { jsonrpc: "2.0", id: 43, method: "ping" }, options);
    expect(ping.status).toBe(200);
    await ping.text();
    // 50 cancellations (one of the call in flight, 49 of requests never sent) and 30 progress notifications.
    const marker = `marker-${crypto.randomUUID()}`;
    const cancelled = (requestId: number) => ({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: marker },
    });
    const progress = (n: number) => ({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: `t${n}`, progress: n, message: marker },
    });
    const batch = [{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 42, reason: "stop" } }];
    for (let n = 0; n < 49; n++) batch.push(cancelled(1_000 + n) as (typeof batch)[number]);
    for (let n = 0; n < 30; n++) batch.push(progress(n) as unknown as (typeof batch)[number]);
    const refused = await post("/mcp", batch, { ...options, settle: true });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Json).error.code).toBe(-32029);
    // The call in flight was cancelled at alpha; nothing else of the batch reached an upstream.
    const cancelledAtAlpha = async () => {
      const stats = await callUnlimited("/mcp", "alpha___listen_stats", { client });
      return JSON.parse(stats.result.content[0].text).cancelled;
    };
    await vi.waitFor(async () => expect(await cancelledAtAlpha()).toEqual([42]), { timeout: 5_000, interval: 50 });
    expect(await rawNotifications(marker)).toBe("0");
    await events.return(undefined);
  });

  it("forwards the client's progress on a request an upstream sent it", async () => {
    const headers = await keyFor("sampler", "r-unlimited-both");
    const { session } = await initialize("/mcp", { vars: VARS, headers, capabilities: { sampling: {} } });
    const options = { vars: VARS, headers, session };
    const call = await post("/mcp", toolCall(7, "alpha___ask_llm_progress"), options);
    const events = readSse(call.body!);
    const asked = JSON.parse((await events.next()).value!.data) as Json;
    const meta = { progressToken: expect.anything() };
    expect(asked).toMatchObject({ method: "sampling/createMessage", params: { _meta: meta } });
    const progressToken = asked.params._meta.progressToken;
    const notice = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: 1 } };
    expect((await post("/mcp", notice, { ...options, settle: true })).status).toBe(202);
    const sampled = { role: "assistant", content: { type: "text", text: "done" }, model: "m" };
    const reply = { jsonrpc: "2.0", id: asked.id, result: sampled };
    expect((await post("/mcp", reply, options)).status).toBe(202);
    const result = JSON.parse((await events.next()).value!.data) as Json;
    expect(result).toMatchObject({ id: 7, result: { content: [{ text: "progress: [1]" }] } });
    await events.return(undefined);
  });

  it("does not count other principals, or personas without a limit", async () => {
    const other = await makeKey({ principal: `limited-${crypto.randomUUID()}`, roles: ["r-limited"] }, VARS);
    expect(
      (
        await post(
          "/mcp",
          {
            ...LIST,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
          },
          { vars: VARS, headers: other.headers },
        )
      ).status,
    ).toBe(200);
    const free = await makeKey({ principal: `free-${crypto.randomUUID()}`, roles: ["r-unlimited"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers: free.headers });
    for (let i = 0; i < 5; i++)
      expect((await post("/mcp", LIST, { vars: VARS, session, headers: free.headers })).status).toBe(200);
  });

  it("fails closed when a persona names a limit without a binding", async () => {
    const { headers } = await makeKey({ principal: "misconfigured", roles: ["r-misconfigured"] }, VARS);
    const response = await post(
      "/mcp",
      {
        ...LIST,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { vars: VARS, headers },
    );
    expect(response.status).toBe(500);
    expect(((await response.json()) as Json).error.message).toContain('the rate limit "missing" is not configured');
  });
});
