/**
 * Default deny, explained to the operator: with AUTH on, a caller whose roles select no
 * persona still gets "Unknown tool" (nothing more is said to it), but the audit event names
 * the cause (`gateway.denied`), the gateway's log says once how to fix it, and the
 * console's Overview warns when no persona is defined or an API key's roles select none.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { admin, authVars, makeKey } from "../helpers/auth";
import { consoleGet, signIn } from "../helpers/console";
import { initialize, request, type Json } from "../helpers/gateway";

const VARS = authVars({ apiKeys: true });
const CONSUMER_DEADLINE_MS = 15_000;
const POLL_MS = 100;

/** The audit events of `principal`'s tools/call once the consumer has written `count` of them. */
async function callEventsOf(principal: string, count: number): Promise<Json[]> {
  for (let poll = 0; ; poll++) {
    const response = await admin("GET", `/audit?user=${encodeURIComponent(principal)}&limit=100`, undefined, VARS);
    const events = (await response.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Json);
    const calls = events.filter((event) => event["mcp.method.name"] === "tools/call");
    if (calls.length >= count || poll * POLL_MS > CONSUMER_DEADLINE_MS) return calls;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Calls alpha___echo as a new key with `roles`; returns its principal and the answer. */
async function callAs(roles: string[]): Promise<{ principal: string; answer: Json }> {
  const principal = `np-${crypto.randomUUID().slice(0, 8)}`;
  const { headers } = await makeKey({ principal, roles }, VARS);
  const { session } = await initialize("/mcp", { vars: VARS, headers });
  const params = { name: "alpha___echo", arguments: { text: "hi" } };
  const answer = await request("/mcp", session, "tools/call", params, { vars: VARS, headers });
  return { principal, answer };
}

/** The gateway's warnings about callers without a persona, as the log got them. */
function personaWarnings(warn: { mock: { calls: unknown[][] } }): string[] {
  return warn.mock.calls.map((args) => String(args[0])).filter((line) => line.includes("gets no persona"));
}

/** Revokes every API key, whichever file made it: the Overview names at most 20 keys. */
async function revokeEveryKey(): Promise<void> {
  for (let cursor: string | undefined, page = 0; page === 0 || cursor !== undefined; page++) {
    const query = cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    const listed = (await (await admin("GET", `/api-keys?limit=1000${query}`, undefined, VARS)).json()) as Json;
    for (const key of listed.apiKeys as Json[]) await admin("DELETE", `/api-keys/${key.id}`, undefined, VARS);
    cursor = listed.cursor;
  }
}

// Personas apply to every call, and other files share this KV: each test starts with none.
beforeEach(async () => {
  await admin("PUT", "/personas", { personas: {} }, VARS);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await admin("PUT", "/personas", { personas: {} }, VARS);
});

describe("a caller without a persona", () => {
  it("with no persona defined: Unknown tool, and the audit event and the log name the cause", async () => {
    const warn = vi.spyOn(console, "warn");
    const { principal, answer } = await callAs(["r-nobody"]);
    expect(answer.error).toMatchObject({ code: -32602, message: "Unknown tool: alpha___echo" });
    const [event] = await callEventsOf(principal, 1);
    expect(event).toMatchObject({ "gateway.persona": "(none)", "gateway.denied": "no persona defined" });
    const [line, ...more] = personaWarnings(warn);
    expect(more).toEqual([]);
    expect(line).toContain(`"${principal}" (roles: r-nobody) gets no persona (no persona defined)`);
    expect(line).toContain("PUT /admin/personas/<name>");
  });

  it("whose roles select none: the cause is 'no persona for roles', logged once per isolate and roles", async () => {
    expect((await admin("PUT", "/personas/someone", { roles: ["r-someone"], allow: ["*"] }, VARS)).status).toBe(200);
    const warn = vi.spyOn(console, "warn");
    const first = await callAs(["r-stranger"]);
    const second = await callAs(["r-stranger"]);
    for (const { answer } of [first, second]) expect(answer.error.message).toBe("Unknown tool: alpha___echo");
    const [event] = await callEventsOf(first.principal, 1);
    expect(event).toMatchObject({ "gateway.persona": "(none)", "gateway.denied": "no persona for roles" });
    const lines = personaWarnings(warn);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("no persona selects any of its roles and none is the default");
  });

  it("with a persona that does not allow the tool: the cause is 'not allowed by persona', nothing logged", async () => {
    const narrow = { roles: ["r-narrow"], allow: ["beta___*"] };
    expect((await admin("PUT", "/personas/narrow", narrow, VARS)).status).toBe(200);
    const warn = vi.spyOn(console, "warn");
    const { principal, answer } = await callAs(["r-narrow"]);
    expect(answer.error.message).toBe("Unknown tool: alpha___echo");
    const [event] = await callEventsOf(principal, 1);
    expect(event).toMatchObject({ "gateway.persona": "narrow", "gateway.denied": "not allowed by persona" });
    expect(personaWarnings(warn)).toEqual([]);
  });
});

describe("the console's Overview", () => {
  const AUTH = { AUTH: VARS["AUTH"] };

  it("warns when no persona is defined", async () => {
    const session = await signIn(AUTH);
    const html = await (await consoleGet("/", session, AUTH)).text();
    expect(html).toContain('data-access-warning="no persona defined"');
    expect(html).toContain("No persona is defined.");
  });

  it("names the API keys whose roles select no persona", async () => {
    await revokeEveryKey();
    expect((await admin("PUT", "/personas/someone", { roles: ["r-someone"], allow: ["*"] }, VARS)).status).toBe(200);
    const stranger = `stranger-${crypto.randomUUID().slice(0, 8)}`;
    const known = `known-${crypto.randomUUID().slice(0, 8)}`;
    await makeKey({ principal: stranger, roles: ["r-stranger"] }, VARS);
    await makeKey({ principal: known, roles: ["r-someone"] }, VARS);
    const session = await signIn(AUTH);
    const html = await (await consoleGet("/", session, AUTH)).text();
    expect(html).toContain('data-access-warning="no persona for roles"');
    expect(html).toContain(`<code>${stranger}</code> (roles: r-stranger)`);
    expect(html).not.toContain(known);
    expect(html).not.toContain('data-access-warning="no persona defined"');
  });

  it("says nothing with AUTH off", async () => {
    const session = await signIn();
    expect(await (await consoleGet("/", session)).text()).not.toContain("access-warnings");
  });
});
