/**
 * Rate limits per principal through the rate-limiting binding (a tight one declared for
 * the tests in vitest.config.ts): chosen by the persona, 429 with Retry-After for a
 * request on its own, the JSON-RPC error inside a batch, notifications counted on their
 * own (refused ones never reach the upstream), other principals unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, authVars, makeKey } from "./helpers/auth";
import { answer, initialize, post, type Json } from "./helpers/gateway";

const VARS = authVars({ apiKeys: true, rateLimits: { tight: "RATE_LIMIT_TEST", missing: "RATE_LIMIT_NOT_BOUND" } });
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

beforeAll(async () => {
  expect((await admin("PUT", "/personas/limited", { roles: ["r-limited"], allow: ["alpha___*"], rateLimit: "tight" }, VARS)).status).toBe(200);
  expect((await admin("PUT", "/personas/misconfigured", { roles: ["r-misconfigured"], allow: ["alpha___*"], rateLimit: "missing" }, VARS)).status).toBe(200);
  expect((await admin("PUT", "/personas/unlimited", { roles: ["r-unlimited"], allow: ["alpha___*"] }, VARS)).status).toBe(200);
  expect((await admin("PUT", "/personas/limited-raw", { roles: ["r-limited-raw"], allow: ["raw___*"], rateLimit: "tight" }, VARS)).status).toBe(200);
});
afterAll(async () => {
  for (const name of ["limited", "misconfigured", "unlimited", "limited-raw"]) await admin("DELETE", `/personas/${name}`, undefined, VARS);
});

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
    expect(((await over!.json()) as Json).error).toMatchObject({ code: -32029, message: expect.stringContaining('the rate limit "tight" is used up') });
    // A batch (2025-03-26) answers each request in the body: the limit shows as JSON-RPC errors.
    const batch = await post("/mcp", [LIST, { ...LIST, id: 2 }], { vars: VARS, session, headers, version: "2025-03-26" });
    const answers = (await batch.json()) as Json[];
    expect(answers.map((a) => a.error?.code)).toEqual([-32029, -32029]);
  });

  it("counts notifications: over the limit one is answered 429 and never reaches the upstream", async () => {
    const { headers } = await makeKey({ principal: `limited-raw-${crypto.randomUUID()}`, roles: ["r-limited-raw"] }, VARS);
    const { session } = await initialize("/mcp/raw", { vars: VARS, headers }); // request 1, and notifications/initialized: notification 1
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
    expect((await over!.json()) as Json).toMatchObject({ id: null, error: { code: -32029, message: expect.stringContaining("for notifications is used up") } });
    // Requests keep their own count (1 of 3 so far): the upstream saw the two accepted notifications only.
    const count = (await answer(await post("/mcp/raw", { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "notifications", arguments: { marker } } }, { vars: VARS, session, headers }))) as Json;
    expect(count.result.content[0].text).toBe("2");
  });

  it("drops an over-limit notification inside a batch and answers the batch's requests", async () => {
    const { headers } = await makeKey({ principal: `limited-raw-${crypto.randomUUID()}`, roles: ["r-limited-raw"] }, VARS);
    const options = { vars: VARS, headers, version: "2025-03-26", settle: true };
    const { session } = await initialize("/mcp/raw", { vars: VARS, headers, version: "2025-03-26" }); // request 1, notification 1
    const marker = `marker-${crypto.randomUUID()}`;
    const notification = { jsonrpc: "2.0", method: "notifications/roots/list_changed", params: { _meta: { marker } } };
    for (let i = 0; i < 2; i++) expect((await post("/mcp/raw", notification, { ...options, session })).status).toBe(202); // notifications 2, 3
    const batch = await post("/mcp/raw", [{ jsonrpc: "2.0", id: 5, method: "ping" }, notification], { ...options, session }); // request 2; the notification is over
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as Json[]).map((a) => [a.id, a.result])).toEqual([[5, {}]]);
    const count = (await answer(await post("/mcp/raw", { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "notifications", arguments: { marker } } }, { ...options, session }))) as Json;
    expect(count.result.content[0].text).toBe("2");
  });

  it("does not count other principals, or personas without a limit", async () => {
    const other = await makeKey({ principal: `limited-${crypto.randomUUID()}`, roles: ["r-limited"] }, VARS);
    expect((await post("/mcp", { ...LIST, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }, { vars: VARS, headers: other.headers })).status).toBe(200);
    const free = await makeKey({ principal: `free-${crypto.randomUUID()}`, roles: ["r-unlimited"] }, VARS);
    const { session } = await initialize("/mcp", { vars: VARS, headers: free.headers });
    for (let i = 0; i < 5; i++) expect((await post("/mcp", LIST, { vars: VARS, session, headers: free.headers })).status).toBe(200);
  });

  it("fails closed when a persona names a limit without a binding", async () => {
    const { headers } = await makeKey({ principal: "misconfigured", roles: ["r-misconfigured"] }, VARS);
    const response = await post("/mcp", { ...LIST, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }, { vars: VARS, headers });
    expect(response.status).toBe(500);
    expect(((await response.json()) as Json).error.message).toContain('the rate limit "missing" is not configured');
  });
});
