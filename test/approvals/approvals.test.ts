/**
 * Approvals through the Worker, inside workerd with the real KV binding, the APPROVALS
 * Durable Object and the SDK upstream alpha (echo answers "alpha: <text>", so a reply says
 * whether the call ran). Three principals by API key: carol calls (and holds the approver
 * role too, so only the self-approval check stops her), alice approves (finance), oscar has
 * no approver role. Both eras: a 2026-07-28 client is answered with the link and retries;
 * a 2025 client waits on its open stream for the decision. Direct calls, sys___call_tool and
 * code mode's inner calls are held alike; each step leaves an audit event without arguments.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, afterEach, describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import type { HeldCall } from "../../src/context/object-rpc";
import { recordingQueue } from "../helpers/audit";
import { admin, authVars, makeKey } from "../helpers/auth";
import { answer, gatewayFetch, initialize, post, request, type Json, type Vars } from "../helpers/gateway";
import { inexactNumber } from "../../src/features/approvals/digest";
import { modern } from "../helpers/modern";

const RULE = {
  name: "payments",
  action: "approve",
  approval: { roles: ["finance"], holdSeconds: 600 },
  upstreams: ["alpha"],
  tools: ["echo"],
};
const VARS: Vars = authVars({ apiKeys: true }, { FILTER_CACHE_TTL_MS: "0" });
const PERSONA = { roles: ["dev", "finance"], allow: ["*"] };
const LINK = /\/approvals\/([0-9a-f]{64})/;

type Key = { headers: Record<string, string> };
let carol: Key;
let alice: Key;
let oscar: Key;

beforeAll(async () => {
  expect((await admin("PUT", "/personas/approvals-test", PERSONA, VARS)).status).toBe(200);
  carol = await makeKey({ principal: "carol", roles: ["dev", "finance"] }, VARS);
  alice = await makeKey({ principal: "alice", roles: ["finance"] }, VARS);
  oscar = await makeKey({ principal: "oscar", roles: ["dev"] }, VARS);
});

afterAll(async () => {
  await admin("DELETE", "/personas/approvals-test", undefined, VARS);
});

async function putRules(rules: unknown[]): Promise<void> {
  const response = await admin("PUT", "/guardrails", { rules }, VARS);
  if (response.status !== 200) throw new Error(`PUT /admin/guardrails: ${response.status} ${await response.text()}`);
}

afterEach(async () => {
  await admin("DELETE", "/guardrails", undefined, VARS);
});

/** A 2026-07-28 call of alpha's echo by `who`. */
function modernEcho(who: Key, text: string, capabilities: Json = {}, vars: Vars = VARS): Promise<Json> {
  return modern(
    "/mcp",
    "tools/call",
    { name: "alpha___echo", arguments: { text } },
    {
      vars,
      headers: who.headers,
      capabilities,
    },
  );
}

/** The approvers' API, with `who`'s credential (or the admin token with `who` = "admin"). */
async function approvals(who: Key | "admin", method: string, path = "", body?: unknown): Promise<Response> {
  if (who === "admin") return admin(method, `/approvals${path}`, body, VARS);
  return gatewayFetch(
    `/approvals${path}`,
    {
      method,
      headers: { ...who.headers, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    },
    VARS,
  );
}

function decide(who: Key | "admin", id: string, decision: string): Promise<Response> {
  return approvals(who, "POST", `/${id}`, { decision });
}

/** The approval id in a held call's answer text. */
function heldId(answer: Json): string {
  const text: string = answer.result.content[0].text;
  expect(answer.result.isError, text).toBe(true);
  const id = LINK.exec(text)?.[1];
  if (!id) throw new Error(`no approval link in: ${text}`);
  return id;
}

describe("the approve rule in the guardrails document", () => {
  it("is checked: terms required, no detectors, a bounded hold", async () => {
    const response = await admin(
      "PUT",
      "/guardrails",
      {
        rules: [
          { name: "a", action: "approve", detectors: ["secrets"], approval: { roles: ["x"], holdSeconds: 60 } },
          { name: "b", action: "approve" },
          { name: "c", action: "approve", approval: { roles: [], holdSeconds: 0 } },
          { name: "d", action: "block", detectors: ["secrets"], approval: { roles: ["x"], holdSeconds: 60 } },
        ],
      },
      VARS,
    );
    expect(response.status).toBe(400);
    const problems = ((await response.json()) as Json).problems.map((p: Json) => p.path);
    expect(problems).toEqual([
      "/rules/0/detectors",
      "/rules/1/approval",
      "/rules/2/approval/roles",
      "/rules/2/approval/holdSeconds",
      "/rules/3/approval",
    ]);
  });
});

describe("a 2026-07-28 client", () => {
  it("is told where the approval is; only another approver may approve; the retry runs exactly once", async () => {
    await putRules([RULE]);
    const held = await modernEcho(carol, "pay 10 to bob");
    const id = heldId(held);
    expect(held.result.content[0].text).toContain('role finance, other than you, approves it (guardrail "payments")');
    expect(held.result.content[0].text).not.toContain("alpha: pay 10");
    // Held, not run: a second attempt is held under the same approval.
    expect(heldId(await modernEcho(carol, "pay 10 to bob"))).toBe(id);

    // The caller sees no call to decide, and cannot approve its own; a principal without the role cannot either.
    expect(((await (await approvals(carol, "GET")).json()) as Json).approvals).toEqual([]);
    const own = await decide(carol, id, "approve");
    expect(own.status).toBe(403);
    expect(((await own.json()) as Json).error).toContain("you cannot decide your own call");
    expect((await decide(oscar, id, "approve")).status).toBe(403);
    expect((await approvals(oscar, "GET", `/${id}`)).status).toBe(404);

    const listed = ((await (await approvals(alice, "GET")).json()) as Json).approvals as HeldCall[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id,
      caller: "carol",
      upstream: "alpha",
      tool: "echo",
      rule: "payments",
      roles: ["finance"],
      arguments: { text: "pay 10 to bob" },
      state: "pending",
    });
    const approved = await decide(alice, id, "approve");
    expect(approved.status).toBe(200);
    expect(((await approved.json()) as Json).approval).toMatchObject({ state: "approved", decidedBy: "alice" });
    expect((await decide(alice, id, "deny")).status).toBe(409);

    // A changed argument is another call: held, with its own approval.
    const other = heldId(await modernEcho(carol, "pay 11 to bob"));
    expect(other).not.toBe(id);
    // The approved call runs, once; the next identical call is held again.
    expect((await modernEcho(carol, "pay 10 to bob")).result.content[0].text).toBe("alpha: pay 10 to bob");
    expect(heldId(await modernEcho(carol, "pay 10 to bob"))).toBe(id);
    // Another caller's identical call is not covered by carol's approval.
    expect(heldId(await modernEcho(alice, "pay 11 to bob"))).not.toBe(other);
  });

  it("with URL elicitation declared, gets input_required with the link", async () => {
    await putRules([RULE]);
    const answer = await modernEcho(carol, "pay 12", { elicitation: { url: {} } });
    expect(answer.result.resultType).toBe("input_required");
    const question = answer.result.inputRequests.approval;
    expect(question.method).toBe("elicitation/create");
    expect(question.params.mode).toBe("url");
    expect(question.params.url).toMatch(LINK);
    const id = LINK.exec(question.params.url)![1]!;
    expect(question.params.elicitationId).toBe(id);
    // The client's retry carries the user's answer; once approved, it runs.
    const retry = (responses: Json) =>
      modern(
        "/mcp",
        "tools/call",
        { name: "alpha___echo", arguments: { text: "pay 12" }, inputResponses: responses },
        { vars: VARS, headers: carol.headers, capabilities: { elicitation: { url: {} } } },
      );
    expect((await retry({ approval: { action: "accept" } })).result.resultType).toBe("input_required");
    expect((await decide(alice, id, "approve")).status).toBe(200);
    expect((await retry({ approval: { action: "accept" } })).result.content[0].text).toBe("alpha: pay 12");
  });

  it("is told of a denial, and asks anew after it", async () => {
    await putRules([RULE]);
    const id = heldId(await modernEcho(carol, "pay 13"));
    expect((await decide(alice, id, "deny")).status).toBe(200);
    const denied = await modernEcho(carol, "pay 13");
    expect(denied.result.isError).toBe(true);
    expect(denied.result.content[0].text).toBe(
      'alice denied this call (guardrail "payments"); nothing was sent to the upstream. ' +
        "Calling again asks for a new approval.",
    );
    expect(heldId(await modernEcho(carol, "pay 13"))).toBe(id);
  });

  it("is told when the approval expired before the retry", async () => {
    await putRules([RULE]);
    const id = heldId(await modernEcho(carol, "pay 14"));
    expect((await decide(alice, id, "approve")).status).toBe(200);
    // The hold passes: the object's stored approval is moved back in time (no waiting in the test).
    const namespace = (env as unknown as { APPROVALS: DurableObjectNamespace }).APPROVALS;
    await runInDurableObject(namespace.get(namespace.idFromName(id)), async (_, state) => {
      const call = (await state.storage.get<HeldCall>("call"))!;
      await state.storage.put("call", { ...call, approvedUntil: Date.now() - 1 });
    });
    const expired = await modernEcho(carol, "pay 14");
    expect(expired.result.isError).toBe(true);
    expect(expired.result.content[0].text).toMatch(
      /^The approval of this call by alice expired at \S+ \(an approval holds 10 minutes\); nothing was sent/,
    );
    expect(heldId(await modernEcho(carol, "pay 14"))).toBe(id);
  });

  it("past the bounds: large arguments are a note to approvers, many roles are listed from the object", async () => {
    const roles = ["finance", ...Array.from({ length: 31 }, (_, i) => `role-${i}-${"x".repeat(60)}`)];
    await putRules([{ ...RULE, approval: { roles, holdSeconds: 60 } }]);
    const big = "y".repeat(70 * 1024);
    const id = heldId(await modernEcho(carol, big));
    const listed = ((await (await approvals(alice, "GET")).json()) as Json).approvals as HeldCall[];
    const call = listed.find((c) => c.id === id)!;
    expect(call.roles).toHaveLength(32);
    expect(call.arguments).toMatch(
      /^\[arguments of 7\d{4} bytes, more than 65536 shown to approvers; the approval binds/,
    );
    expect((await decide(alice, id, "approve")).status).toBe(200);
    expect((await modernEcho(carol, big)).result.content[0].text).toBe(`alpha: ${big}`);
  });

  it("through sys___call_tool is held as the direct call is", async () => {
    await putRules([RULE]);
    const answer = await modern(
      "/mcp?catalog=search",
      "tools/call",
      { name: "sys___call_tool", arguments: { name: "alpha___echo", arguments: { text: "pay 15" } } },
      { vars: VARS, headers: carol.headers },
    );
    const id = heldId(answer);
    expect(heldId(await modernEcho(carol, "pay 15"))).toBe(id);
  });
});

describe("a 2025 client", () => {
  /** Starts carol's call of echo in a 2025 session; resolves with the held call's notification and the rest. */
  async function waitingCall(text: string) {
    const { session } = await initialize("/mcp", { vars: VARS, headers: carol.headers });
    const response = await post(
      "/mcp",
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "alpha___echo", arguments: { text } } },
      { session, vars: VARS, headers: carol.headers },
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = readSse(response.body!)[Symbol.asyncIterator]();
    const first = JSON.parse((await events.next()).value.data);
    expect(first.method).toBe("notifications/message");
    const id: string = first.params.data.approval;
    expect(first.params.data.url).toContain(`/approvals/${id}`);
    expect(first.params.data.message).toContain("This call waits up to 5 minutes for the decision.");
    const rest = async () => {
      const out: Json[] = [];
      for (let next = await events.next(); !next.done; next = await events.next())
        out.push(JSON.parse(next.value.data));
      return out[out.length - 1];
    };
    return { id, rest };
  }

  it("waits on its stream and gets the result once another person approves", async () => {
    await putRules([RULE]);
    const { id, rest } = await waitingCall("pay 20");
    expect((await decide(carol, id, "approve")).status).toBe(403);
    expect((await decide(alice, id, "approve")).status).toBe(200);
    const final = await rest();
    expect(final.id).toBe(5);
    expect(final.result.content[0].text).toBe("alpha: pay 20");
    // Used: the object holds nothing for it any more.
    expect((await approvals(alice, "GET", `/${id}`)).status).toBe(404);
  });

  it("waits and is told of a denial", async () => {
    await putRules([RULE]);
    const { id, rest } = await waitingCall("pay 21");
    expect((await decide("admin", id, "deny")).status).toBe(200);
    const final = await rest();
    expect(final.result.isError).toBe(true);
    expect(final.result.content[0].text).toContain("(operator) denied this call");
  });

  it("in a code-mode program, an inner call is held and does not wait", async () => {
    await putRules([RULE]);
    const path = "/mcp?catalog=code";
    const { session } = await initialize(path, { vars: VARS, headers: carol.headers });
    const code = 'try { return await tools.alpha.echo({ text: "pay 22" }); } catch (e) { return String(e.message); }';
    const answer = await request(
      path,
      session,
      "tools/call",
      { name: "sys___run_code", arguments: { code } },
      {
        vars: VARS,
        headers: carol.headers,
      },
    );
    const value = JSON.parse(answer.result.content[0].text) as string;
    expect(value).toMatch(LINK);
    expect(value).not.toContain("alpha: pay 22");
    expect(heldId(await modernEcho(carol, "pay 22"))).toBe(LINK.exec(value)?.[1]);
  });
});

describe("an approval bound to the exact call", () => {
  it("tells numbers a parse keeps apart from those it does not, outside strings only", () => {
    for (const kept of [
      '{"n":0.1}',
      '{"n":-12.5e3,"m":0.000}',
      '{"n":123000000000000000000000}',
      '{"s":"9007199254740993"}',
    ])
      expect(inexactNumber(kept), kept).toBeUndefined();
    expect(inexactNumber('{"s":"a\\"9007199254740993","n":1}')).toBeUndefined();
    expect(inexactNumber('{"to":9007199254740993}')).toBe("9007199254740993");
    expect(inexactNumber("[1,0.10000000000000001]")).toBe("0.10000000000000001");
    expect(inexactNumber('{"n":1e400}')).toBe("1e400");
    expect(inexactNumber('{"n":-1e-400}')).toBe("-1e-400");
  });

  it("is listed to its approver past a hundred index entries of calls the approver may not decide", async () => {
    await putRules([RULE]);
    const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
    // Ids that sort before any digest, so KV lists them first: another rule's calls, older than carol's.
    const others = { caller: "mallory", roles: ["other"], at: 0 };
    const fakes = Array.from({ length: 150 }, (_, i) => `approvals/${i.toString(16).padStart(64, "0")}`);
    for (const key of fakes) await kv.put(key, "", { metadata: others });
    try {
      const id = heldId(await modernEcho(carol, "pay 43"));
      const listed = ((await (await approvals(alice, "GET")).json()) as Json).approvals as HeldCall[];
      // Calls other tests of this file left held may be listed too; carol's must be.
      expect(listed.map((call) => call.id)).toContain(id);
    } finally {
      // The suite's files share one KV: index entries with no held call behind them would
      // fill the operator's oldest hundred in later files (approvals-console.test.ts).
      for (const key of fakes) await kv.delete(key);
    }
  });

  it("is listed to its approver past a hundred older index entries with no held call behind them", async () => {
    await putRules([RULE]);
    const kv = (env as unknown as { GATEWAY_KV: KVNamespace }).GATEWAY_KV;
    // Calls alice could decide by their entries, older than carol's, but no longer held (decided, used, or gone).
    const gone = { caller: "mallory", roles: ["finance"], at: 0 };
    const stale = Array.from({ length: 150 }, (_, i) => `approvals/${(4096 + i).toString(16).padStart(64, "0")}`);
    for (const key of stale) await kv.put(key, "", { metadata: gone });
    try {
      const id = heldId(await modernEcho(carol, "pay 44"));
      const listed = ((await (await approvals(alice, "GET")).json()) as Json).approvals as HeldCall[];
      expect(listed.map((call) => call.id)).toContain(id);
      // The listing removed the entries it found stale: the next one does not read them again.
      const left = await Promise.all(stale.map((key) => kv.get(key)));
      expect(left.filter((value) => value !== null)).toEqual([]);
      expect(await kv.get(`approvals/${id}`)).not.toBeNull();
    } finally {
      for (const key of stale) await kv.delete(key);
    }
  });

  it("is not asked for arguments whose numbers it could not tell apart: 2^53 + 1 is refused, not held", async () => {
    await putRules([RULE]);
    const { session } = await initialize("/mcp", { vars: VARS, headers: carol.headers });
    const call = (to: string) =>
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"text":"pay 40","to":${to}}}}`;
    const refused = await answer(
      await post("/mcp", call("9007199254740993"), { session, vars: VARS, headers: carol.headers }),
    );
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toContain("the number 9007199254740993");
    expect(refused.result.content[0].text).not.toMatch(LINK);
    // A number a parse keeps exactly is held as any call.
    const held = await modern(
      "/mcp",
      "tools/call",
      { name: "alpha___echo", arguments: { text: "pay 40", to: 12345 } },
      { vars: VARS, headers: carol.headers },
    );
    expect(heldId(held)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is not used up by a call refused for another reason (a task under result rules)", async () => {
    const mask = { name: "mask", action: "redact", detectors: ["personal"], on: ["result"], upstreams: ["alpha"] };
    await putRules([RULE, mask]);
    const id = heldId(await modernEcho(carol, "pay 41"));
    expect((await decide(alice, id, "approve")).status).toBe(200);
    const withTask = await modern(
      "/mcp",
      "tools/call",
      { name: "alpha___echo", arguments: { text: "pay 41" }, task: { ttl: 60_000 } },
      { vars: VARS, headers: carol.headers },
    );
    expect(withTask.result.content[0].text).toContain("call the tool without a task");
    const ran = await modernEcho(carol, "pay 41");
    expect(ran.result.isError, JSON.stringify(ran)).toBeFalsy();
    expect(ran.result.content[0].text).toBe("alpha: pay 41");
  });

  it("in a program of a client that declared URL elicitation, the inner call's error names the link", async () => {
    await putRules([RULE]);
    const code = 'try { return await tools.alpha.echo({ text: "pay 42" }); } catch (e) { return String(e.message); }';
    const run = await modern(
      "/mcp?catalog=code",
      "tools/call",
      { name: "sys___run_code", arguments: { code } },
      { vars: VARS, headers: carol.headers, capabilities: { elicitation: { url: {} } } },
    );
    const value = JSON.parse(run.result.content[0].text) as string;
    expect(value).toMatch(LINK);
    expect(LINK.exec(value)?.[1]).toBe(heldId(await modernEcho(carol, "pay 42")));
  });
});

describe("the audit trail", () => {
  it("records the hold, the refusal, the decision and the run, never the arguments", async () => {
    await putRules([RULE]);
    const { queue, batches } = recordingQueue();
    const vars = { ...VARS, AUDIT_QUEUE: queue };
    const held = await modern(
      "/mcp",
      "tools/call",
      { name: "alpha___echo", arguments: { text: "secret-plan 30" } },
      { vars, headers: carol.headers, settle: true },
    );
    const id = heldId(held);
    const send = (who: Key, decision: string) =>
      gatewayFetch(
        `/approvals/${id}`,
        {
          method: "POST",
          headers: { ...who.headers, "content-type": "application/json" },
          body: JSON.stringify({ decision }),
        },
        vars,
        undefined,
        true,
      );
    expect((await send(carol, "approve")).status).toBe(403);
    expect((await send(alice, "approve")).status).toBe(200);
    const ran = await modern(
      "/mcp",
      "tools/call",
      { name: "alpha___echo", arguments: { text: "secret-plan 30" } },
      { vars, headers: carol.headers, settle: true },
    );
    expect(ran.result.content[0].text).toBe("alpha: secret-plan 30");
    const events = batches.flat().map((m) => m.body as Json);
    const approvalsOnly = events.filter((e) => String(e["mcp.method.name"]).startsWith("(approval-"));
    expect(approvalsOnly.map((e) => [e["mcp.method.name"], e["user.id"]])).toEqual([
      ["(approval-held)", "carol"],
      ["(approval-refused)", "carol"],
      ["(approval-approved)", "alice"],
      ["(approval-used)", "carol"],
    ]);
    expect(JSON.stringify(approvalsOnly)).not.toContain("secret-plan");
    expect(approvalsOnly[2]["gateway.error.message"]).toBe(
      `rule payments; caller carol; decided by alice; approval ${id}`,
    );
  });
});
