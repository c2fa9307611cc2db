/**
 * Tasks under authentication, against an upstream whose task store is keyed by id alone
 * (test/fixtures/tasks-upstream.ts, `open-` labels: any session lists and reads every
 * task), so that what the gateway lets through is what leaks: a task is only the
 * principal's that created it (listed, read, cancelled), and only while its persona
 * reaches the upstream; on /mcp and /mcp/<upstream>, for 2025 and 2026-07-28 requests.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { decodeJson } from "../../src/core/base64url";
import { admin, authVars, expectNoSuchUpstream, makeKey } from "../helpers/auth";
import { initialize, post, request, type Json } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";

const base = inject("tasksUpstreamUrl");
const { beta } = inject("fixtureUrls");
const LABEL = `open-${crypto.randomUUID().slice(0, 8)}`;
const VARS = authVars(
  { apiKeys: true },
  {
    UPSTREAMS: JSON.stringify([
      { name: "open", url: `${base}/${LABEL}/mcp` },
      { name: "beta", url: beta },
    ]),
  },
);
const PERSONAS = {
  tasker: { roles: ["t-tasker"], allow: ["open___*"] },
  "beta-only": { roles: ["t-beta"], allow: ["beta___*"] },
};
const TASK_METHODS = ["tasks/get", "tasks/result", "tasks/cancel"] as const;

type Caller = { headers: Record<string, string> };

async function caller(principal: string, roles: string[]): Promise<Caller> {
  return { headers: (await makeKey({ principal, roles }, VARS)).headers };
}

/** A 2025 request on `path` in a fresh session of `who`. */
async function legacy(who: Caller, path: string, method: string, params?: unknown): Promise<Json> {
  const { session } = await initialize(path, { vars: VARS, headers: who.headers });
  return request(path, session, method, params, { vars: VARS, headers: who.headers });
}

/** A 2026-07-28 request (its revision has tasks/get and tasks/cancel, not tasks/list or tasks/result). */
function stateless(who: Caller, path: string, method: string, params: Record<string, unknown> = {}): Promise<Json> {
  return modern(path, method, params, { vars: VARS, headers: who.headers });
}

/** Every task id `who` lists on `path` (2025), over all pages. */
async function listed(who: Caller, path: string): Promise<string[]> {
  const { session } = await initialize(path, { vars: VARS, headers: who.headers });
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const answer = await request(path, session, "tasks/list", cursor ? { cursor } : undefined, {
      vars: VARS,
      headers: who.headers,
    });
    expect(answer.error).toBeUndefined();
    ids.push(...(answer.result.tasks as Json[]).map((task) => task.taskId as string));
    cursor = answer.result.nextCursor;
    if (!cursor) break;
  }
  return ids;
}

/** The upstream's own id behind an id the gateway handed out (or the id itself, when it passed unchanged). */
function upstreamIdOf(id: string): string {
  if (!id.startsWith("gwt.")) return id;
  const value = decodeJson(id.slice(4, id.lastIndexOf(".") > 4 ? id.lastIndexOf(".") : undefined));
  return (value as [string, string])[1];
}

/** Checks that `answer` says only that there is no such task, and nothing of what the task holds. */
function expectUnknownTask(answer: Json, label: string): void {
  expect(answer.result, label).toBeUndefined();
  expect(answer.error?.code, label).toBe(-32602);
  expect(JSON.stringify(answer), label).not.toContain("alice's secret");
}

/** Alice's tasks: a working one and a completed one with a result, on each route, with the ids she was given. */
type Made = { path: string; hold: string; echo: string };

async function makeTasks(who: Caller): Promise<Made[]> {
  const made: Made[] = [];
  for (const [path, prefix] of [
    ["/mcp", "open___"],
    ["/mcp/open", ""],
  ] as const) {
    const hold = await legacy(who, path, "tools/call", { name: `${prefix}hold_task`, arguments: {}, task: {} });
    const echo = await legacy(who, path, "tools/call", {
      name: `${prefix}echo_task`,
      arguments: { text: "alice's secret" },
      task: {},
    });
    made.push({ path, hold: hold.result.task.taskId, echo: echo.result.task.taskId });
  }
  return made;
}

beforeAll(async () => {
  for (const [name, persona] of Object.entries(PERSONAS))
    expect((await admin("PUT", `/personas/${name}`, persona, VARS)).status).toBe(200);
});

describe("a task is its creator's", () => {
  it("is neither listed to, nor read, nor cancelled by another principal with the same persona", async () => {
    const alice = await caller(`alice-${LABEL}`, ["t-tasker"]);
    const bob = await caller(`bob-${LABEL}`, ["t-tasker"]);
    const made = await makeTasks(alice);

    for (const path of ["/mcp", "/mcp/open"]) expect(await listed(bob, path), path).toEqual([]);
    for (const { path, hold, echo } of made) {
      for (const id of [hold, echo, upstreamIdOf(hold), upstreamIdOf(echo)]) {
        for (const method of TASK_METHODS)
          expectUnknownTask(await legacy(bob, path, method, { taskId: id }), `2025 ${method} on ${path}`);
        for (const method of ["tasks/get", "tasks/cancel"])
          expectUnknownTask(await stateless(bob, path, method, { taskId: id }), `2026 ${method} on ${path}`);
      }
    }

    // Alice still has all of them, untouched, and lists exactly hers (tasks of the same upstream, whichever route made them).
    const mine = made.flatMap(({ hold, echo }) => [hold, echo].map(upstreamIdOf)).sort();
    for (const path of ["/mcp", "/mcp/open"])
      expect((await listed(alice, path)).map(upstreamIdOf).sort(), path).toEqual(mine);
    for (const { path, hold, echo } of made) {
      expect((await legacy(alice, path, "tasks/get", { taskId: hold })).result.status, path).toBe("working");
      expect((await stateless(alice, path, "tasks/get", { taskId: hold })).result.status, path).toBe("working");
      const result = await legacy(alice, path, "tasks/result", { taskId: echo });
      expect(result.result.content[0].text, path).toContain("alice's secret");
    }
  });

  it("answers another principal's id exactly as an id that was never handed out", async () => {
    const alice = await caller(`alice2-${LABEL}`, ["t-tasker"]);
    const bob = await caller(`bob2-${LABEL}`, ["t-tasker"]);
    const hold = (await makeTasks(alice))[0]!.hold;
    const forged = `${hold.slice(0, -4)}AAAA`;
    const theirs = await legacy(bob, "/mcp", "tasks/get", { taskId: hold });
    const never = await legacy(bob, "/mcp", "tasks/get", { taskId: forged });
    expect(theirs.error.message.replace(hold.slice(0, 80), "ID")).toBe(
      never.error.message.replace(forged.slice(0, 80), "ID"),
    );
  });
});

describe("a task is reached only through a persona that reaches its upstream", () => {
  it("hides and refuses the principal's own tasks when its persona does not reach the upstream", async () => {
    const principal = `carol-${LABEL}`;
    const made = await makeTasks(await caller(principal, ["t-tasker"]));
    // The same principal, with a credential whose persona reaches only beta.
    const elsewhere = await caller(principal, ["t-beta"]);
    expect(await listed(elsewhere, "/mcp")).toEqual([]);
    for (const { path, hold, echo } of made) {
      for (const id of [hold, echo]) {
        if (path === "/mcp/open") {
          // /mcp/open is no upstream at all to a persona that does not reach it.
          const options = { vars: VARS, headers: elsewhere.headers };
          await expectNoSuchUpstream(
            (route) => post(route, { jsonrpc: "2.0", id: 1, method: "tasks/list" }, { ...options, session: "made-up" }),
            "open",
            "2025 tasks/list",
          );
          for (const method of TASK_METHODS)
            await expectNoSuchUpstream(
              (route) =>
                post(
                  route,
                  { jsonrpc: "2.0", id: 1, method, params: { taskId: id } },
                  { ...options, session: "made-up" },
                ),
              "open",
              `2025 ${method}`,
            );
          for (const method of ["tasks/get", "tasks/cancel"])
            await expectNoSuchUpstream(
              (route) => modernPost(route, method, { taskId: id }, options),
              "open",
              `2026 ${method}`,
            );
          continue;
        }
        for (const method of TASK_METHODS)
          expectUnknownTask(await legacy(elsewhere, path, method, { taskId: id }), `2025 ${method} on ${path}`);
        for (const method of ["tasks/get", "tasks/cancel"])
          expectUnknownTask(await stateless(elsewhere, path, method, { taskId: id }), `2026 ${method} on ${path}`);
      }
    }
    // Nothing was cancelled on the way.
    const owner = await caller(principal, ["t-tasker"]);
    for (const { path, hold } of made)
      expect((await legacy(owner, path, "tasks/get", { taskId: hold })).result.status, path).toBe("working");
  });
});
