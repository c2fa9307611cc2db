/**
 * The audit trail through the real Queue and R2 inside workerd: calls through the
 * Worker produce events on AUDIT_QUEUE, the Worker's own queue() consumer (wrangler.toml
 * [[queues.consumers]]) writes them to R2, and GET /admin/audit reads them back. The
 * upstream is a real server on loopback that reports the trace context it received.
 * Only the test of a failing Queue binds a fake queue object: a send that throws is a
 * platform failure that cannot be produced for real.
 */
import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { auditSendFailures } from "../../src/features/audit/audit-queue";
import { MAX_EVENT_BYTES, TRIMMED_MARKER } from "../../src/features/audit/call-event";
import { hourPrefix } from "../../src/features/audit/audit-log";
import {
  AUDIT_ADMIN_TOKEN as ADMIN_TOKEN,
  call,
  eventsOnceWritten,
  readAudit,
  recordingQueue,
  upstreamVars,
} from "../helpers/audit";
import { admin, authVars, makeKey } from "../helpers/auth";
import { answer, gatewayFetch, initialize, post, type GatewayTarget, type Json, type Vars } from "../helpers/gateway";

/** Runs one request through the Worker and waits for its waitUntil work (the audit send). */
async function fetchAndSettle(request: Request, vars: Vars): Promise<{ response: Response; text: string }> {
  const ctx = createExecutionContext();
  const response = await (worker as GatewayTarget).fetch(request, { ...env, ...vars }, ctx);
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { response, text };
}

describe("the audit trail", () => {
  it("N = 200 concurrent calls give exactly 200 distinct events in /admin/audit, and a batch delivered twice doubles none", async () => {
    const N = 200;
    const { name, vars } = upstreamVars();
    const { session } = await initialize(`/mcp`, { vars });
    const answers = await Promise.all(
      Array.from({ length: N }, (_, i) => call("/mcp", session, `${name}___whoami`, { i }, vars).then(answer)),
    );
    expect(answers.every((a) => a.result?.structuredContent?.header)).toBe(true);

    const query = `upstream=${name}&limit=1000`;
    const events = await eventsOnceWritten(query, N);
    expect(events).toHaveLength(N);
    expect(new Set(events.map((e) => e["gateway.event_id"])).size).toBe(N);
    expect(events.map((e) => e["gen_ai.tool.call.arguments"].i).sort((a, b) => a - b)).toEqual(
      Array.from({ length: N }, (_, i) => i),
    );
    // Newest last.
    const times = events.map((e) => e.timestamp);
    expect([...times].sort()).toEqual(times);

    // Deliver the same events to the consumer again: once as a new batch (other message
    // ids: new objects in R2), and that batch a second time (same ids: its objects rewritten).
    const redelivered = createMessageBatch(
      "mcp-edge-gateway-audit",
      events.map((body, i) => ({ id: `again-${name}-${i}`, timestamp: Date.now(), attempts: 2, body })),
    );
    for (let delivery = 0; delivery < 2; delivery++) {
      const ctx = createExecutionContext();
      await worker.queue(redelivered, { ...env });
      const result = await getQueueResult(redelivered, ctx);
      expect(result.explicitAcks).toHaveLength(N);
    }
    // R2 now holds each event twice; the reader still gives each once.
    const stored = await env.PAYLOADS.list({ prefix: hourPrefix(Date.parse(events[0].timestamp)) });
    let copies = 0;
    for (const object of stored.objects)
      copies += (
        (await (await env.PAYLOADS.get(object.key))!.text()).match(new RegExp(`"gateway.upstream":"${name}"`, "g")) ??
        []
      ).length;
    expect(copies).toBeGreaterThanOrEqual(2 * N);
    const again = (await readAudit(query)).events;
    expect(again).toHaveLength(N);
    expect(new Set(again.map((e) => e["gateway.event_id"]))).toEqual(new Set(events.map((e) => e["gateway.event_id"])));
  });

  it("records who called what with which result: identity, route, upstream, bytes, trace, hashed session", async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize(`/mcp/${name}`, { vars });
    const text = await (await call(`/mcp/${name}`, session, "whoami", { q: 1 }, vars)).text();
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(event).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "whoami",
      "gen_ai.tool.call.arguments": { q: 1 },
      "mcp.protocol.version": "2025-11-25",
      "user.id": "anonymous",
      "gateway.route": `/mcp/${name}`,
      "gateway.upstream": name,
      "gateway.upstream.status_code": 200,
      "gateway.outcome": "success",
      "gateway.bytes_to_client": new TextEncoder().encode(text).length,
    });
    expect(event["gateway.bytes_from_upstream"]).toBeGreaterThan(0);
    expect(event["gateway.duration_ms"]).toBeGreaterThanOrEqual(0);
    expect(event["jsonrpc.request.id"]).toBe(String(JSON.parse(text).id));
    expect(event["mcp.session.id"]).toMatch(/^[0-9a-f]{32}$/);
    // Neither the sealed token nor anything of it.
    expect(JSON.stringify(event)).not.toContain(session.slice(0, 24));
    expect(event.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it("records the caller's persona and principal when authentication is on", async () => {
    const { name, vars: upstreamOnly } = upstreamVars();
    const vars = { ...upstreamOnly, ...authVars({ apiKeys: true }) };
    expect((await admin("PUT", "/personas/auditors", { roles: ["r-audit"], allow: ["*"] }, vars)).status).toBe(200);
    const { headers } = await makeKey({ principal: "auditor-1", roles: ["r-audit"] }, vars);
    const { session } = await initialize(`/mcp/${name}`, { vars, headers });
    await (await call(`/mcp/${name}`, session, "whoami", {}, vars, headers)).text();
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(event).toMatchObject({ "user.id": "auditor-1", "gateway.persona": "auditors" });
    await admin("DELETE", "/personas/auditors", undefined, vars);
  });

  it("redacts parameters by key at any depth, by the default patterns and by AUDIT's own", async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize("/mcp", { vars });
    const args = {
      user: "ada",
      password: "hunter2-secret-value",
      nested: {
        list: [{ deeper: { "X-Api-Key": "k-123-secret", access_token: "t-456-secret", note: "kept" } }],
        Authorization: "Bearer b-789-secret",
      },
      ssn: "078-05-1120",
    };
    await (await call("/mcp", session, `${name}___whoami`, args, vars)).text();
    const custom = { ...vars, AUDIT: JSON.stringify({ redactKeys: ["ssn", "*_note"] }) };
    await (
      await call(
        "/mcp",
        session,
        `${name}___whoami`,
        { ssn: "078-05-1120", password: "not-a-default-now", my_note: "x", notes: "y" },
        custom,
      )
    ).text();
    const events = await eventsOnceWritten(`upstream=${name}`, 2);
    expect(events[0]["gen_ai.tool.call.arguments"]).toEqual({
      user: "ada",
      password: "[redacted]",
      nested: {
        list: [{ deeper: { "X-Api-Key": "[redacted]", access_token: "[redacted]", note: "kept" } }],
        Authorization: "[redacted]",
      },
      ssn: "078-05-1120",
    });
    expect(events[1]["gen_ai.tool.call.arguments"]).toEqual({
      ssn: "[redacted]",
      password: "not-a-default-now",
      my_note: "[redacted]",
      notes: "y",
    });
    // Nothing of the secret values reached R2.
    const listed = await env.PAYLOADS.list({ prefix: hourPrefix(Date.parse(events[0].timestamp)) });
    for (const object of listed.objects)
      expect(await (await env.PAYLOADS.get(object.key))!.text()).not.toMatch(/hunter2|k-123|t-456|b-789/);
  });

  it('keeps a "__proto__" argument as a member of the event, redacted inside, never as its prototype', async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize("/mcp", { vars });
    const args = JSON.parse('{"__proto__":{"password":"p-321-secret","kept":1},"a":1}') as Record<string, unknown>;
    await (await call("/mcp", session, `${name}___whoami`, args, vars)).text();
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    const recorded = event["gen_ai.tool.call.arguments"] as Record<string, unknown>;
    expect(Object.keys(recorded)).toEqual(["__proto__", "a"]);
    expect(Object.getOwnPropertyDescriptor(recorded, "__proto__")?.value).toEqual({ password: "[redacted]", kept: 1 });
  });

  it("trims an event over the Queue's message limit (parameters cut with a marker), never drops it", async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize("/mcp", { vars });
    const big = "é".repeat(200_000); // 400 KB of UTF-8
    const text = await (await call("/mcp", session, `${name}___whoami`, { big, small: 1 }, vars)).text();
    expect(JSON.parse(text).result).toBeDefined();
    const [event] = await eventsOnceWritten(`upstream=${name}`, 1);
    expect(event["gateway.params_trimmed"]).toBe(true);
    expect(event["gateway.params_bytes"]).toBeGreaterThan(400_000);
    expect(event["gen_ai.tool.call.arguments"]).toMatch(
      new RegExp(`^\\{"big":"é+${TRIMMED_MARKER.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
    );
    expect(new TextEncoder().encode(JSON.stringify(event)).length).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    expect(event).toMatchObject({ "gen_ai.tool.name": `${name}___whoami`, "gateway.outcome": "success" });
  });

  it("a Queue whose send throws leaves the answer intact; the failure is logged with the event id and counted", async () => {
    const { name, vars } = upstreamVars();
    const sent: unknown[] = [];
    const failing = {
      send: () => Promise.reject(new Error("queue down")),
      sendBatch: (batch: unknown) => {
        sent.push(batch);
        return Promise.reject(new Error("queue down"));
      },
    };
    const failingVars = { ...vars, AUDIT_QUEUE: failing };
    const { session } = await initialize("/mcp", { vars });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const before = auditSendFailures();
    try {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: `${name}___whoami`, arguments: {} },
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
      const { response, text } = await fetchAndSettle(request, failingVars);
      expect(response.status).toBe(200);
      expect(JSON.parse(text)).toMatchObject({ id: 5, result: { structuredContent: { meta: expect.any(String) } } });
      expect(sent).toHaveLength(1);
      expect(auditSendFailures()).toBe(before + 1);
      const logged = errors.mock.calls.map((args) => String(args[0])).find((line) => line.includes("not queued"));
      const eventId = (sent[0] as { body: Json }[])[0]!.body["gateway.event_id"];
      expect(logged).toContain(eventId);
    } finally {
      errors.mockRestore();
    }
  });

  it("sends the events of one HTTP request in one sendBatch", async () => {
    const { name, vars } = upstreamVars();
    const { queue: recording, batches } = recordingQueue();
    const { session } = await initialize("/mcp", { vars, version: "2025-03-26" });
    const body = JSON.stringify(
      [1, 2, 3].map((id) => ({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: `${name}___whoami`, arguments: { id } },
      })),
    );
    const request = new Request("http://gateway.test/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-03-26",
      },
      body,
    });
    const { response } = await fetchAndSettle(request, { ...vars, AUDIT_QUEUE: recording });
    expect(response.status).toBe(200);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((m) => m.body["gen_ai.tool.call.arguments"].id).sort()).toEqual([1, 2, 3]);
  });

  /** `n` tools/calls at once, each its own request, with a Queue that records each sendBatch; every request settled. */
  async function concurrentAuditedCalls(n: number): Promise<{ body: Json }[][]> {
    const { name, vars } = upstreamVars();
    const { queue: recording, batches } = recordingQueue();
    const { session } = await initialize("/mcp", { vars });
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: i,
          method: "tools/call",
          params: { name: `${name}___whoami`, arguments: { i } },
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
        expect((await fetchAndSettle(request, { ...vars, AUDIT_QUEUE: recording })).response.status).toBe(200);
      }),
    );
    expect(
      batches
        .flat()
        .map((m) => m.body["gen_ai.tool.call.arguments"].i)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: n }, (_, i) => i));
    return batches;
  }

  it("sends the events of requests that end close together in one isolate in shared sendBatches, every event sent once the requests have settled", async () => {
    const batches = await concurrentAuditedCalls(20);
    // One send per request before; together they share a few (200 ms windows, at most 50 events each).
    expect(batches.length).toBeLessThan(10);
  });

  it("sends an outbox once it holds 50 events, by the request that filled it: no sendBatch carries more", async () => {
    const batches = await concurrentAuditedCalls(120);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(50);
    expect(batches.length).toBeGreaterThanOrEqual(3);
  });

  it("continues the client's trace (header or _meta), mints one otherwise, and sends it upstream in header and _meta", async () => {
    const { name, vars } = upstreamVars();
    const { session } = await initialize("/mcp", { vars });
    const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const fromHeader = await answer(
      await call("/mcp", session, `${name}___whoami`, { via: "header" }, vars, {
        traceparent: `00-${clientTrace}-00f067aa0ba902b7-01`,
      }),
    );
    const fromMeta = await answer(
      await call(
        "/mcp",
        session,
        `${name}___whoami`,
        { via: "meta" },
        vars,
        {},
        { traceparent: `00-${clientTrace}-1111111111111111-00` },
      ),
    );
    const minted = await answer(await call("/mcp", session, `${name}___whoami`, { via: "none" }, vars));
    const events = await eventsOnceWritten(`upstream=${name}`, 3);
    const byVia = Object.fromEntries(events.map((e) => [e["gen_ai.tool.call.arguments"].via, e]));

    for (const [seen, event, parent, flags] of [
      [fromHeader, byVia["header"], "00f067aa0ba902b7", "01"],
      [fromMeta, byVia["meta"], "1111111111111111", "00"],
    ] as const) {
      expect(event).toMatchObject({ trace_id: clientTrace, parent_span_id: parent });
      expect(event.span_id).not.toBe(parent);
      const sentUp = `00-${clientTrace}-${event.span_id}-${flags}`;
      expect(seen.result.structuredContent).toEqual({ header: sentUp, meta: sentUp });
    }
    const mintedEvent = byVia["none"];
    expect(mintedEvent.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(mintedEvent.trace_id).not.toBe(clientTrace);
    expect(mintedEvent.parent_span_id).toBeUndefined();
    expect(minted.result.structuredContent).toEqual({
      header: `00-${mintedEvent.trace_id}-${mintedEvent.span_id}-01`,
      meta: `00-${mintedEvent.trace_id}-${mintedEvent.span_id}-01`,
    });
  });

  it("records tool errors, JSON-RPC errors and unreachable upstreams; the admin filters and limit select among them", async () => {
    const { name, vars } = upstreamVars();
    const down = `${name}down`;
    const withDown = {
      ...vars,
      UPSTREAMS: JSON.stringify([
        ...JSON.parse(vars["UPSTREAMS"] as string),
        { name: down, url: "http://127.0.0.1:9/mcp", timeoutMs: 2000 },
      ]),
    };
    const { session } = await initialize("/mcp", { vars: withDown });
    for (const tool of ["whoami", "fail", "refuse"])
      await (await call("/mcp", session, `${name}___${tool}`, {}, withDown)).text();
    await (await call("/mcp", session, `${down}___whoami`, {}, withDown)).text();
    await eventsOnceWritten(`tool=${name}*`, 4);

    const one = async (query: string) => (await readAudit(`tool=${name}*&${query}`)).events;
    expect(await one("outcome=tool_error")).toEqual([
      expect.objectContaining({
        "gen_ai.tool.name": `${name}___fail`,
        "error.type": "tool_error",
        "gateway.error.message": "the tool failed: disk full",
      }),
    ]);
    const errors = await one("outcome=error");
    expect(errors).toEqual([
      expect.objectContaining({
        "gen_ai.tool.name": `${name}___refuse`,
        "error.type": "-32602",
        "rpc.response.status_code": "-32602",
        "gateway.error.message": "refused: bad arguments",
      }),
      expect.objectContaining({
        "gen_ai.tool.name": `${down}___whoami`,
        "gateway.upstream": down,
        "error.type": "unreachable",
        "gateway.failure": "unreachable",
      }),
    ]);
    expect(await one(`upstream=${down}`)).toHaveLength(1);
    expect(await one("outcome=success&user=anonymous")).toEqual([
      expect.objectContaining({ "gen_ai.tool.name": `${name}___whoami` }),
    ]);
    expect(await one("user=someone-else")).toEqual([]);
    // limit keeps the latest: the last call made.
    expect((await one("limit=1")).map((e) => e["gen_ai.tool.name"])).toEqual([`${down}___whoami`]);
    expect(await one(`to=${Date.now() - 3_600_000}`)).toEqual([]);
  });

  it("records every request with AUDIT record=requests, and nothing with enabled=false", async () => {
    const { name, vars } = upstreamVars();
    const requests = { ...vars, AUDIT: JSON.stringify({ record: "requests" }) };
    const { session } = await initialize(`/mcp/${name}`, { vars: requests });
    await post(`/mcp/${name}`, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { session, vars: requests }).then((r) =>
      r.text(),
    );
    await (
      await call(`/mcp/${name}`, session, "whoami", { n: 1 }, { ...vars, AUDIT: JSON.stringify({ enabled: false }) })
    ).text();
    await (await call(`/mcp/${name}`, session, "whoami", { n: 2 }, vars)).text();
    const events = await eventsOnceWritten(`upstream=${name}`, 3);
    expect(events.map((e) => e["mcp.method.name"])).toEqual(["initialize", "tools/list", "tools/call"]);
    expect(events[2]["gen_ai.tool.call.arguments"]).toEqual({ n: 2 });
  });

  it("records a session's end (DELETE) with AUDIT record=all: who ended which session on which route", async () => {
    const { name, vars } = upstreamVars({ AUDIT: JSON.stringify({ record: "all" }) });
    const { session } = await initialize(`/mcp/${name}`, { vars });
    const ended = await gatewayFetch(
      `/mcp/${name}`,
      { method: "DELETE", headers: { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } },
      vars,
    );
    expect(ended.status).toBe(200);
    const events = await eventsOnceWritten(`upstream=${name}`, 2);
    const started = events.find((e) => e["mcp.method.name"] === "initialize");
    const end = events.find((e) => e["mcp.method.name"] === "(end)");
    expect(end).toMatchObject({
      "user.id": "anonymous",
      "gateway.route": `/mcp/${name}`,
      "gateway.upstream": name,
      "gateway.outcome": "success",
    });
    expect(end?.["mcp.session.id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(end?.["mcp.session.id"]).toBe(started?.["mcp.session.id"]);
  });

  it("admin: bearer token required; bad queries refused with a reason", async () => {
    expect((await gatewayFetch("/admin/audit", {}, { ADMIN_TOKEN })).status).toBe(401);
    for (const query of [
      "limit=0",
      "limit=1001",
      "limit=x",
      "outcome=maybe",
      "from=yesterday",
      `from=${Date.now() - 8 * 86_400_000}`,
    ]) {
      const { status, events } = await readAudit(query);
      expect(status).toBe(400);
      expect(events[0].error).toMatch(/invalid audit query/);
    }
  });
});
