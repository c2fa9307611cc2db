/**
 * Tasks (MCP 2025-11-25) through the gateway, against real SDK upstreams with task
 * support: the task ids a client sees carry their upstream and are bound to its principal
 * (on both routes), and tasks/get, tasks/result, tasks/cancel and tasks/list reach the
 * upstream that owns each task. Personas and other principals: test/tasks/tasks-personas.test.ts.
 */
import { env } from "cloudflare:workers";
import { afterEach, inject, describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import { ANONYMOUS_PRINCIPAL } from "../../src/context/call-context";
import { encodeTaskId, type TaskIdBinding } from "../../src/features/tasks/task-ids";
import { gatewayFetch, initialize, request, type Json } from "../helpers/gateway";

const RELATED_TASK = "io.modelcontextprotocol/related-task";
const base = inject("tasksUpstreamUrl");
const { beta } = inject("fixtureUrls");
const ADMIN_TOKEN = "admin-token-for-tests-0123456789ab";
/** What the gateway binds the ids of these (unauthenticated) tests to. */
const ANONYMOUS: TaskIdBinding = {
  secret: (env as unknown as { SESSION_SECRET: string }).SESSION_SECRET,
  principal: ANONYMOUS_PRINCIPAL,
};
const vars = {
  ADMIN_TOKEN,
  FILTER_CACHE_TTL_MS: "0",
  UPSTREAMS: JSON.stringify([
    { name: "ta", url: `${base}/ta/mcp` },
    { name: "tb", url: `${base}/tb/mcp` },
    { name: "beta", url: beta },
  ]),
};

async function start(
  path = "/mcp",
): Promise<{ call: (method: string, params?: unknown) => Promise<Json>; session: string; result: Json }> {
  const { session, result } = await initialize(path, { vars });
  return { session, result, call: (method, params) => request(path, session, method, params, { vars }) };
}

/** A task id as the tasks upstream itself hands it out: a task made in a session of our own with it, not through the gateway. */
async function upstreamOwnId(): Promise<string> {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const rpc = async (body: unknown, session?: string) => {
    const response = await fetch(`${base}/tb/mcp`, {
      method: "POST",
      headers: { ...headers, ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } : {}) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const data = text.startsWith("{")
      ? text
      : text
          .split("\n")
          .find((line) => line.startsWith("data: "))!
          .slice(6);
    return { session: response.headers.get("mcp-session-id") ?? session, message: JSON.parse(data) as Json };
  };
  const { session } = await rpc({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "direct", version: "1" } },
  });
  await fetch(`${base}/tb/mcp`, {
    method: "POST",
    headers: { ...headers, "mcp-session-id": session!, "mcp-protocol-version": "2025-11-25" },
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  const created = await rpc(
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "hold_task", arguments: {}, task: {} } },
    session!,
  );
  return created.message.result.task.taskId as string;
}

async function allTasks(call: (method: string, params?: unknown) => Promise<Json>): Promise<Json[]> {
  const tasks: Json[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const answer = await call("tasks/list", cursor ? { cursor } : undefined);
    expect(answer.error).toBeUndefined();
    tasks.push(...answer.result.tasks);
    cursor = answer.result.nextCursor;
    if (!cursor) break;
  }
  return tasks;
}

describe("tasks on /mcp", () => {
  it("advertises the tasks capability of its upstreams", async () => {
    const { result } = await start();
    expect(result.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await request("/mcp", (await start()).session, "tools/list", undefined, { vars })).result
      .tools as Json[];
    expect(tools.find((t) => t.name === "tb___echo_task").execution).toEqual({ taskSupport: "optional" });
  });

  it("does not advertise tasks when no upstream has them", async () => {
    const { result } = await initialize("/mcp", { vars: { UPSTREAMS: JSON.stringify([{ name: "beta", url: beta }]) } });
    expect(result.capabilities.tasks).toBeUndefined();
  });

  it("creates a task whose id carries its upstream, and reaches that upstream for its status and result", async () => {
    const { call } = await start();
    const a = await call("tools/call", { name: "ta___echo_task", arguments: { text: "one" }, task: { ttl: 60_000 } });
    const b = await call("tools/call", { name: "tb___echo_task", arguments: { text: "two" }, task: { ttl: 60_000 } });
    const idA: string = a.result.task.taskId;
    const idB: string = b.result.task.taskId;
    expect(typeof idA).toBe("string");
    expect(idA).not.toBe(idB);

    // Each result comes from the upstream that ran the task (the text names it).
    const resultB = await call("tasks/result", { taskId: idB });
    expect(resultB.result.content).toEqual([{ type: "text", text: '{"from":"tb","text":"two"}' }]);
    expect(resultB.result._meta[RELATED_TASK]).toEqual({ taskId: idB });
    const resultA = await call("tasks/result", { taskId: idA });
    expect(resultA.result.content).toEqual([{ type: "text", text: '{"from":"ta","text":"one"}' }]);

    const got = await call("tasks/get", { taskId: idA });
    expect(got.result).toMatchObject({ taskId: idA, status: "completed" });
  });

  it("lists every upstream's tasks with the ids it handed out", async () => {
    const { call } = await start();
    const a = await call("tools/call", { name: "ta___hold_task", arguments: {}, task: {} });
    const b = await call("tools/call", { name: "tb___echo_task", arguments: { text: "x" }, task: {} });
    const ids = (await allTasks(call)).map((task) => task.taskId);
    expect(ids.sort()).toEqual([a.result.task.taskId, b.result.task.taskId].sort());
    // Every listed id works for tasks/get.
    for (const id of ids) expect((await call("tasks/get", { taskId: id })).result.taskId).toBe(id);
  });

  it("cancels a task at its upstream", async () => {
    const { call } = await start();
    const created = await call("tools/call", { name: "tb___hold_task", arguments: {}, task: {} });
    const id: string = created.result.task.taskId;
    expect((await call("tasks/get", { taskId: id })).result.status).toBe("working");
    const cancelled = await call("tasks/cancel", { taskId: id });
    expect(cancelled.result).toMatchObject({ taskId: id, status: "cancelled" });
    expect((await call("tasks/get", { taskId: id })).result.status).toBe("cancelled");
    // A task in a terminal status cannot be cancelled again: the upstream's -32602 reaches the client.
    expect((await call("tasks/cancel", { taskId: id })).error.code).toBe(-32602);
  });

  it("tells the client of status changes with the id it knows", async () => {
    const { session, call } = await start();
    const stream = await gatewayFetch(
      "/mcp",
      { headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } },
      vars,
    );
    expect(stream.status).toBe(200);
    const events = readSse(stream.body!);
    const created = await call("tools/call", { name: "tb___echo_task", arguments: { text: "n" }, task: {} });
    const id: string = created.result.task.taskId;
    let status: Json;
    for (let i = 0; i < 20 && !status; i++) {
      const message = JSON.parse((await events.next()).value!.data) as Json;
      if (message.method === "notifications/tasks/status") status = message;
    }
    expect(status.params).toMatchObject({ taskId: id, status: "completed" });
    expect((await call("tasks/get", { taskId: status.params.taskId })).result.status).toBe("completed");
    await events.return(undefined);
  });

  it.each([
    ["an upstream's own id", async (own: string) => own],
    ["a number", async () => 7],
    ["an id that is not base64url", async () => "gwt.!!!"],
    ["an id naming an upstream this route does not serve", (own: string) => encodeTaskId(ANONYMOUS, "elsewhere", own)],
    [
      "an id naming a task its upstream does not have",
      () => encodeTaskId(ANONYMOUS, "tb", "0123456789abcdef0123456789abcdef"),
    ],
    [
      "an id bound to another principal",
      (own: string) => encodeTaskId({ ...ANONYMOUS, principal: "someone-else" }, "tb", own),
    ],
    [
      "an id whose tag was altered",
      async (own: string) => `${(await encodeTaskId(ANONYMOUS, "tb", own)).slice(0, -2)}AA`,
    ],
  ])("refuses %s with -32602", async (_label, forge) => {
    const { call } = await start();
    await call("tools/call", { name: "tb___hold_task", arguments: {}, task: {} });
    // The id the upstream itself uses (the tb session of /mcp/tb shares nothing with this one, so it is taken from the task list of a direct upstream session).
    const own = await upstreamOwnId();
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const answer = await call(method, { taskId: await forge(own) });
      expect(answer.error?.code, method).toBe(-32602);
    }
  });

  it("does not reach a task of another session", async () => {
    const first = await start();
    const created = await first.call("tools/call", { name: "tb___hold_task", arguments: {}, task: {} });
    const second = await start();
    expect((await second.call("tasks/get", { taskId: created.result.task.taskId })).error.code).toBe(-32602);
    expect(await allTasks(second.call)).toEqual([]);
  });
});

describe("tasks on /mcp/<upstream>", () => {
  it("gives the upstream's tasks ids of the gateway's, bound to the caller, and refuses the upstream's own", async () => {
    const { result, call } = await start("/mcp/tb");
    expect(result.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const created = await call("tools/call", { name: "echo_task", arguments: { text: "direct" }, task: {} });
    const id: string = created.result.task.taskId;
    expect(id.startsWith("gwt.")).toBe(true);
    expect((await call("tasks/get", { taskId: await upstreamOwnId() })).error.code).toBe(-32602);
    const payload = await call("tasks/result", { taskId: id });
    expect(payload.result.content).toEqual([{ type: "text", text: '{"from":"tb","text":"direct"}' }]);
    expect(payload.result._meta[RELATED_TASK]).toEqual({ taskId: id });
    expect((await allTasks(call)).map((task) => task.taskId)).toEqual([id]);
  });
});

describe("tasks and output filters", () => {
  const putDefault = (body: string) =>
    gatewayFetch(
      "/admin/filter-sets/default",
      { method: "PUT", headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" }, body },
      vars,
    );
  afterEach(async () => {
    await gatewayFetch(
      "/admin/filter-sets/default",
      { method: "DELETE", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
      vars,
    );
  });

  it.each([
    ["/mcp", "tb___echo_task"],
    ["/mcp/tb", "echo_task"],
  ])(
    "withholds on %s a task result a filter set may be about, since it cannot say which tool it is from",
    async (path, name) => {
      const { call } = await start(path);
      const created = await call("tools/call", { name, arguments: { text: "secret" }, task: {} });
      const id: string = created.result.task.taskId;
      // A filter added while the task runs (or a task created some other way) must not let its result pass.
      expect((await putDefault('{"tools":{"tb___echo_*":{"retain":["/from"]}}}')).status).toBe(200);
      const payload = await call("tasks/result", { taskId: id });
      expect(payload.result.isError).toBe(true);
      expect(JSON.stringify(payload)).not.toContain("secret");
      expect(payload.result.content[0].text).toContain("withheld");
      expect(payload.result._meta[RELATED_TASK]).toEqual({ taskId: id });
      // Status and listing still work.
      expect((await call("tasks/get", { taskId: id })).result.status).toBe("completed");
    },
  );

  it("passes the task results of upstreams no rule names", async () => {
    const { call } = await start();
    expect((await putDefault('{"tools":{"tb___*":{"retain":["/from"]}}}')).status).toBe(200);
    const created = await call("tools/call", { name: "ta___echo_task", arguments: { text: "open" }, task: {} });
    const payload = await call("tasks/result", { taskId: created.result.task.taskId });
    expect(payload.result.content).toEqual([{ type: "text", text: '{"from":"ta","text":"open"}' }]);
  });
});
