/**
 * A guardrail rule's pluggable checks through the Worker: a real webhook on loopback
 * (test/fixtures/guard-webhook.ts) answering each verdict (allow, block, redact by spans
 * and by replacement), its deadline and both failure modes, the secret header it gets
 * (never in the audit event); the document's checks on write (URL, secret, AI binding).
 *
 * Workers AI is NOT exercised here (CI has no account): the `model` tests give the Worker
 * a local stand-in binding (an object with `run`) that answers as Llama Guard's documented
 * output does, so what they show is the gateway's request to a binding and its reading of
 * the answer, not what any real model decides.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { ADMIN_VARS, TEST_ADMIN_TOKEN } from "../helpers/admin";
import { recordingQueue } from "../helpers/audit";
import { gatewayFetch, initialize, messageTexts, post, type Json, type Vars } from "../helpers/gateway";

const WEBHOOK = inject("guardWebhook");
/** The admin API reached on loopback, as under `npm start`: http webhooks on loopback are accepted there. */
const LOCAL = "http://127.0.0.1:8787";
const SECRET = "webhook-secret-0123456789abcdef";
const VARS: Vars = { ...ADMIN_VARS, CHECKS_TOKEN: SECRET };

type Rule = Record<string, unknown>;

function putDocument(rules: Rule[], vars: Vars = VARS, base = LOCAL): Promise<Response> {
  return gatewayFetch(
    `${base}/admin/guardrails`,
    {
      method: "PUT",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ rules }),
    },
    vars,
  );
}

async function putRules(rules: Rule[], vars: Vars = VARS): Promise<void> {
  const response = await putDocument(rules, vars);
  if (response.status !== 200) throw new Error(`PUT /admin/guardrails: ${response.status} ${await response.text()}`);
}

/** A fresh tag on the webhook, scripted to answer `script`; its URL. */
async function webhook(script: Record<string, unknown>): Promise<{ url: string; tag: string }> {
  const tag = crypto.randomUUID();
  await fetch(`${WEBHOOK}/verdicts/${tag}`, { method: "POST", body: JSON.stringify(script) });
  return { url: `${WEBHOOK}/check/${tag}`, tag };
}

async function sentTo(tag: string): Promise<{ headers: Record<string, string>; body: Json }[]> {
  return (await fetch(`${WEBHOOK}/requests/${tag}`)).json();
}

/** A call of alpha's echo, with the audit Queue recorded: the answer and the call's audit event. */
async function echo(text: string, vars: Vars = VARS): Promise<{ answer: Json; event: Json }> {
  const { queue, batches } = recordingQueue();
  const audited = { ...vars, AUDIT_QUEUE: queue };
  const { session } = await initialize("/mcp", { vars: audited });
  const params = { name: "alpha___echo", arguments: { text } };
  const response = await post(
    "/mcp",
    { jsonrpc: "2.0", id: 3, method: "tools/call", params },
    { session, vars: audited, settle: true },
  );
  const answer = JSON.parse((await messageTexts(response)).pop()!);
  const events = batches.flat().map((m) => m.body);
  return { answer, event: events.find((e: Json) => e["gen_ai.tool.name"] === "alpha___echo") };
}

const textOf = (answer: Json): string => answer.result.content[0].text;

afterEach(async () => {
  await gatewayFetch(
    `${LOCAL}/admin/guardrails`,
    { method: "DELETE", headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } },
    VARS,
  );
});

describe("a rule's webhook, as the document states it", () => {
  it.each([
    ["an http URL off loopback", { url: "http://checks.example.com/x" }, LOCAL, "/rules/0/webhook/url"],
    [
      "an http loopback URL while the gateway is not local",
      { url: `${WEBHOOK}/check/x` },
      "http://gateway.test",
      "/rules/0/webhook/url",
    ],
    [
      "a secret that is not set",
      { url: "https://checks.example.com/x", secret: "UNSET_SECRET" },
      LOCAL,
      "/rules/0/webhook/secret",
    ],
    [
      "a deadline past the bound",
      { url: "https://checks.example.com/x", timeoutMs: 60_000 },
      LOCAL,
      "/rules/0/webhook/timeoutMs",
    ],
    [
      "an unknown failure mode",
      { url: "https://checks.example.com/x", failure: "maybe" },
      LOCAL,
      "/rules/0/webhook/failure",
    ],
  ])("refuses %s, located", async (_label, hook, base, path) => {
    const response = await putDocument([{ name: "hook", action: "block", webhook: hook }], VARS, base);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: { path: string; message: string }[] };
    expect(body.problems.map((p) => p.path)).toEqual([path]);
  });

  it("takes a rule with a webhook and no detector, https anywhere and loopback http locally", async () => {
    await putRules([
      { name: "remote", action: "block", webhook: { url: "https://checks.example.com/x", secret: "CHECKS_TOKEN" } },
      { name: "local", action: "redact", webhook: { url: `${WEBHOOK}/check/x`, failure: "open", timeoutMs: 500 } },
    ]);
  });

  it("refuses a model without the AI binding, saying what to bind", async () => {
    const response = await putDocument([{ name: "guard", action: "block", model: {} }]);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: { path: string; message: string }[] };
    expect(body.problems).toEqual([
      {
        path: "/rules/0/model",
        message:
          'this Worker has no Workers AI binding named "AI" ([ai] binding = "AI" in wrangler.toml), so no model can ' +
          "check this rule; bind it, or drop the model",
      },
    ]);
  });
});

describe("the webhook's verdicts", () => {
  it("allow: the call goes on unchanged; the webhook got the strings, the scope and the secret", async () => {
    const { url, tag } = await webhook({ answer: { verdict: "allow" } });
    await putRules([{ name: "ask", action: "block", webhook: { url, secret: "CHECKS_TOKEN" } }]);
    const { answer, event } = await echo("hello there");
    expect(textOf(answer)).toBe("alpha: hello there");
    const sent = await sentTo(tag);
    expect(sent.map((s) => s.body)).toEqual([
      { rule: "ask", on: "arguments", upstream: "alpha", tool: "echo", texts: ["hello there"] },
      { rule: "ask", on: "result", upstream: "alpha", tool: "echo", texts: ["text", "alpha: hello there"] },
    ]);
    expect(sent[0]!.headers["authorization"]).toBe(`Bearer ${SECRET}`);
    expect(JSON.stringify(event)).not.toContain(SECRET);
  });

  it("block on the arguments: a tool error naming the rule and the kind, nothing forwarded", async () => {
    const { url } = await webhook({ answer: { verdict: "block", kind: "customer-data" } });
    await putRules([{ name: "ask", action: "block", on: ["arguments"], webhook: { url } }]);
    const { answer, event } = await echo("account 12345");
    expect(answer.result.isError).toBe(true);
    expect(textOf(answer)).toBe(
      'The gateway\'s guardrail "ask" blocked this call: its webhook check found customer-data in its arguments. ' +
        "Nothing was sent to the upstream.",
    );
    expect(event["gateway.upstream"]).toBeUndefined();
    expect(event["gateway.guardrails"]).toEqual([
      { rule: "ask", action: "block", detector: "webhook", kind: "customer-data", where: "arguments", count: 1 },
    ]);
  });

  it("redact by spans and by replacement: the rest of each string is kept", async () => {
    // texts[1] of the result is "alpha: call 555-0100 or mail bob" (texts[0] is the content's type).
    const spans = [
      { text: 1, start: 12, end: 20, kind: "phone" },
      { text: 1, start: 29, end: 32, replacement: "<name>" },
    ];
    const { url } = await webhook({ answer: { verdict: "redact", spans } });
    await putRules([{ name: "ask", action: "redact", on: ["result"], webhook: { url } }]);
    const { answer } = await echo("call 555-0100 or mail bob");
    expect(textOf(answer)).toBe("alpha: call [redacted: phone] or mail <name>");
  });

  it("a warn rule only records what its webhook would block", async () => {
    const { url } = await webhook({ answer: { verdict: "block" } });
    await putRules([{ name: "watch", action: "warn", on: ["result"], webhook: { url } }]);
    const { answer, event } = await echo("fine");
    expect(textOf(answer)).toBe("alpha: fine");
    expect(event["gateway.guardrails"]).toEqual([
      { rule: "watch", action: "warn", detector: "webhook", kind: "webhook", where: "result", count: 1 },
    ]);
  });
});

describe("when the webhook fails", () => {
  it("past its deadline, a fail-closed rule blocks and a fail-open rule lets the call by, recorded", async () => {
    const { url, tag } = await webhook({ hang: true });
    try {
      await putRules([{ name: "slow", action: "block", on: ["arguments"], webhook: { url, timeoutMs: 300 } }]);
      const closed = await echo("anything");
      expect(textOf(closed.answer)).toBe(
        'The gateway\'s guardrail "slow" blocked this call: its webhook check did not answer in time, and the rule ' +
          "fails closed. Nothing was sent to the upstream.",
      );
      await putRules([
        { name: "slow", action: "block", on: ["arguments"], webhook: { url, timeoutMs: 300, failure: "open" } },
      ]);
      const open = await echo("anything");
      expect(textOf(open.answer)).toBe("alpha: anything");
      expect(open.event["gateway.guardrails"]).toEqual([
        { rule: "slow", action: "warn", detector: "webhook", kind: "webhook-deadline", where: "arguments", count: 1 },
      ]);
      // Both calls reached the webhook, which held them past the deadline.
      expect(await sentTo(tag)).toHaveLength(2);
    } finally {
      await fetch(`${WEBHOOK}/release/${tag}`, { method: "POST" });
    }
  });

  it.each([
    ["an HTTP error", { status: 500, answer: { error: "down" } }],
    ["an answer that is not JSON", { text: "<html>" }],
    ["an unknown verdict", { answer: { verdict: "maybe" } }],
    ["a span outside the texts", { answer: { verdict: "redact", spans: [{ text: 9, start: 0, end: 1 }] } }],
  ])("%s is a failure: closed blocks, open lets by", async (_label, script) => {
    const { url } = await webhook(script);
    await putRules([{ name: "ask", action: "redact", on: ["result"], webhook: { url } }]);
    const closed = await echo("hi");
    expect(textOf(closed.answer)).toBe(
      'The gateway\'s guardrail "ask" withheld this result: its webhook check failed, and the rule fails closed.',
    );
    await putRules([{ name: "ask", action: "redact", on: ["result"], webhook: { url, failure: "open" } }]);
    const open = await echo("hi");
    expect(textOf(open.answer)).toBe("alpha: hi");
    expect(open.event["gateway.guardrails"]).toEqual([
      { rule: "ask", action: "warn", detector: "webhook", kind: "webhook-failed", where: "result", count: 1 },
    ]);
  });
});

describe("a model check, with a local stand-in for the Workers AI binding (no model runs in CI)", () => {
  /** Answers as Llama Guard 3's documented output does; records what it was asked. */
  function standIn(answer: unknown): {
    ai: { run: (model: string, input: unknown) => Promise<unknown> };
    asked: unknown[];
  } {
    const asked: unknown[] = [];
    const run = async (model: string, input: unknown) => {
      asked.push({ model, input });
      return answer;
    };
    return { ai: { run }, asked };
  }

  it("is accepted with the binding; an unsafe verdict blocks, naming the categories", async () => {
    const { ai, asked } = standIn({ response: { safe: false, categories: ["S14"] } });
    const vars = { ...VARS, AI: ai };
    await putRules([{ name: "guard", action: "block", on: ["result"], model: {} }], vars);
    const { answer } = await echo("run this", vars);
    expect(textOf(answer)).toBe(
      'The gateway\'s guardrail "guard" withheld this result: its model check found unsafe:S14 in it.',
    );
    expect(asked).toEqual([
      {
        model: "@cf/meta/llama-guard-3-8b",
        input: { messages: [{ role: "user", content: "text\nalpha: run this" }] },
      },
    ]);
  });

  it("a safe verdict lets the result by; an answer in another shape is a failure", async () => {
    const safe = standIn({ response: { safe: true } });
    await putRules([{ name: "guard", action: "block", model: {} }], { ...VARS, AI: safe.ai });
    expect(textOf((await echo("ok", { ...VARS, AI: safe.ai })).answer)).toBe("alpha: ok");
    const odd = standIn({ result: "?" });
    const { answer } = await echo("ok", { ...VARS, AI: odd.ai });
    expect(textOf(answer)).toContain("its model check failed, and the rule fails closed");
  });

  it("refuses redact: a classifier finds no stretch of text to replace", async () => {
    const { ai } = standIn({ response: { safe: true } });
    const response = await putDocument([{ name: "guard", action: "redact", model: {} }], { ...VARS, AI: ai });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('"/rules/0/action"');
  });
});
