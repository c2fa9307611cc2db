/**
 * The audit outbox of an isolate (features/audit/audit-trail.ts) where its timer is not what
 * sends it: when the request that opened it never does (its context torn down before its
 * timer fired), the next request to find it takes it over and sends every event in it
 * once, and the opener's timer, if it fires after all, sends nothing again; when the
 * calls it gathers hold much text (the answers its events are built from), the request
 * that fills it sends it at once. Through the Worker in workerd, with real upstreams; the
 * Queue is the real one with each sendBatch recorded (what is asserted is how events were
 * grouped into sends), and the clock is the test's, so the opener's timer can be held
 * back while time passes.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import worker from "../../src/index";
import { recordingQueue, upstreamVars } from "../helpers/audit";
import { initialize, type GatewayTarget, type Vars } from "../helpers/gateway";

/** Longer than audit-trail.ts's ABANDONED_AFTER_MS: an outbox still open this long was abandoned. */
const PAST_ABANDONED_MS = 2_000;
/** Calls answered by the faulty upstream's `json-large` (200 KiB of text each) that hold more than audit-trail.ts's COALESCE_MAX_HELD_CHARS. */
const LARGE_CALLS = 3;

/** One tools/call of `tool` through the Worker, read to its end; its context is returned unsettled (its audit timer may be pending). */
async function toolCall(
  name: string,
  session: string,
  i: number,
  vars: Vars,
  tool = "whoami",
): Promise<ExecutionContext> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: i,
    method: "tools/call",
    params: { name: `${name}___${tool}`, arguments: { i } },
  });
  const request = new Request("http://gateway.test/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-11-25",
    },
    body,
  });
  const ctx = createExecutionContext();
  const response = await (worker as GatewayTarget).fetch(request, { ...env, ...vars }, ctx);
  expect(response.status).toBe(200);
  await response.text();
  return ctx;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the audit outbox", () => {
  it("an abandoned outbox is sent by the next request, with that request's event, once", async () => {
    const { name, vars } = upstreamVars();
    const { queue: recording, batches } = recordingQueue();
    const withQueue = { ...vars, AUDIT_QUEUE: recording };
    const { session } = await initialize("/mcp", { vars });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });

    const opener = await toolCall(name, session, 1, withQueue);
    // Time passes and the opener's timer does not fire: as if its context had gone.
    await vi.advanceTimersByTimeAsync(0);
    vi.setSystemTime(Date.now() + PAST_ABANDONED_MS);
    expect(batches).toHaveLength(0);
    const taker = await toolCall(name, session, 2, withQueue);
    // Every timer now fires, the opener's late one included.
    await vi.runAllTimersAsync();
    await waitOnExecutionContext(taker);
    await waitOnExecutionContext(opener);

    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((m) => m.body["gen_ai.tool.call.arguments"].i).sort()).toEqual([1, 2]);
  });

  it("an outbox whose calls hold much text is sent at once by the request that filled it, not by the opener's timer", async () => {
    const name = `large${crypto.randomUUID().slice(0, 8)}`;
    const vars = { UPSTREAMS: JSON.stringify([{ name, url: `${inject("faultyUpstreamUrl")}/json-large/${name}` }]) };
    const { queue: recording, batches } = recordingQueue();
    const { session } = await initialize("/mcp", { vars });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });

    const contexts: ExecutionContext[] = [];
    for (let i = 0; i < LARGE_CALLS; i++)
      contexts.push(await toolCall(name, session, i, { ...vars, AUDIT_QUEUE: recording }, "echo"));
    // Only the timers due now fire (the sends after an answer), not the opener's.
    await vi.advanceTimersByTimeAsync(0);
    await waitOnExecutionContext(contexts.at(-1)!);
    expect(batches.map((b) => b.map((m) => m.body["gen_ai.tool.call.arguments"].i).sort())).toEqual([
      Array.from({ length: LARGE_CALLS }, (_, i) => i),
    ]);

    await vi.runAllTimersAsync();
    for (const ctx of contexts) await waitOnExecutionContext(ctx);
    expect(batches).toHaveLength(1);
  });
});
