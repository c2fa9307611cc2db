/**
 * Results too large to hold, through the Worker with the SDK upstream's big_list (one
 * JSON text block of about 115 bytes an item, an email every other item) and
 * big_structured (the same as structuredContent): past offload's streaming bound (8 MiB)
 * the answer is checked as it streams to R2 (features/guardrails/stream-guard.ts), so the
 * stored payload, its preview, its inferred schema and a pointer read are what the rules
 * allow, emails cut by chunk boundaries included; a `block` finding stores nothing.
 * Without offload (no R2) a `redact` or `block` rule withholds a result past
 * MAX_GUARDED_RESULT_BYTES. A 2026-07-28 client, whose request goes upstream under an id
 * of the gateway's, is told the same, and the upstream that answered is not charged.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/context/call-record";
import { MAX_GUARDED_RESULT_BYTES } from "../../src/features/guardrails/guard-call";
import { createApp } from "../../src/gateway";
import { admin, ADMIN_VARS, putDocument } from "../helpers/admin";
import { recordingQueue } from "../helpers/audit";
import { initialize, messageTexts, post, request, type GatewayTarget, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";

/** Items of big_list that make an answer past `bytes` (each is at least 100 bytes as text). */
const itemsPast = (bytes: number) => Math.ceil(bytes / 100);
/** Past offload's streaming bound (8 MiB): the answer reaches offload as a stream. */
const STREAMED_ITEMS = itemsPast(9 * 1024 * 1024);
const STREAMING: Vars = { ...ADMIN_VARS, OFFLOAD: JSON.stringify({ thresholdBytes: 1024, previewChars: 2000 }) };
const payloads = () => (env as unknown as { PAYLOADS: R2Bucket }).PAYLOADS;

/** Each case moves about 10 MB through the Worker, R2 and the checks: the suite's 20 s is too short on a shared machine. */
const HEAVY = { timeout: 120_000 };

const PII_RULE = { name: "pii", action: "redact", detectors: ["personal"], on: ["result"] };

afterEach(async () => {
  await admin("DELETE", "/guardrails");
});

/** A call of alpha's `tool` with `count` items, with the audit Queue recorded: the answer and its audit event. */
async function bigCall(tool: string, count: number, vars: Vars = STREAMING): Promise<{ answer: Json; event: Json }> {
  const { queue, batches } = recordingQueue();
  const audited = { ...vars, AUDIT_QUEUE: queue };
  const { session } = await initialize("/mcp", { vars: audited });
  const params = { name: `alpha___${tool}`, arguments: { count } };
  const texts = await messageTexts(
    await post(
      "/mcp",
      { jsonrpc: "2.0", id: 2, method: "tools/call", params },
      { session, vars: audited, settle: true },
    ),
  );
  const events = batches.flat().map((m) => m.body);
  return {
    answer: JSON.parse(texts.pop()!) as Json,
    event: events.find((e: Json) => e["gen_ai.tool.name"] === `alpha___${tool}`),
  };
}

/** A 2026-07-28 client's call (id "big-1") through an app that records it: the answer and the call's record. */
async function modernCall(
  params: Json,
  vars: Vars,
  capabilities: Record<string, unknown> = {},
): Promise<{ answer: Json; record: CallRecord }> {
  const records: CallRecord[] = [];
  const target = createApp({ observers: [(record) => void records.push({ ...record })] }) as unknown as GatewayTarget;
  const answer = await modern("/mcp", "tools/call", params, { id: "big-1", vars, target, capabilities });
  expect(answer.error).toBeUndefined();
  expect(answer.id).toBe("big-1");
  expect(records).toHaveLength(1);
  return { answer, record: records[0]! };
}

describe("a result offload streams to R2", () => {
  it(
    "is redacted as it streams: one text block of megabytes, the stored payload, preview and hits",
    HEAVY,
    async () => {
      await putDocument("/guardrails", { rules: [PII_RULE] });
      const { answer, event } = await bigCall("big_list", STREAMED_ITEMS);
      const envelope = JSON.parse(answer.result.content[0].text);
      expect(envelope.payloadId).toMatch(/^[0-9a-f]{32}$/);
      expect(envelope.payloadPreview).toContain('"email":"[redacted: email]"');
      const stored = await (await payloads().get(`payloads/${envelope.payloadId}`))!.text();
      // Every email is replaced, those the stream's chunks cut in two as well, and the rest is valid JSON.
      expect(stored).not.toContain("@example.com");
      expect(stored.split("[redacted: email]").length - 1).toBe(STREAMED_ITEMS / 2);
      const parsed = JSON.parse(stored);
      expect(parsed.items[STREAMED_ITEMS - 1]).toEqual({
        id: STREAMED_ITEMS - 1,
        name: `item ${STREAMED_ITEMS - 1} — ünïcödé`,
        score: (STREAMED_ITEMS - 1) % 3 === 0 ? "n/a" : (STREAMED_ITEMS - 1) * 1.5,
        tags: (STREAMED_ITEMS - 1) % 4 === 0 ? [] : ["a", "b"],
        ...((STREAMED_ITEMS - 1) % 2 === 0 ? { email: "[redacted: email]" } : {}),
      });
      expect(event["gateway.guardrails"]).toEqual([
        {
          rule: "pii",
          action: "redact",
          detector: "personal",
          kind: "email",
          where: "result",
          count: STREAMED_ITEMS / 2,
        },
      ]);
    },
  );

  it("is redacted in structuredContent: a pointer read and the inferred schema see the marker", HEAVY, async () => {
    await putDocument("/guardrails", { rules: [PII_RULE] });
    const { session } = await initialize("/mcp", { vars: STREAMING });
    const called = await request(
      "/mcp",
      session,
      "tools/call",
      // The items come twice (as text, and as structuredContent): half as many pass the streaming bound.
      { name: "alpha___big_structured", arguments: { count: Math.ceil(STREAMED_ITEMS / 2) } },
      { vars: STREAMING },
    );
    const envelope = called.result.structuredContent ?? JSON.parse(called.result.content[0].text);
    expect(JSON.stringify(envelope)).not.toContain("@example.com");
    const read = await request(
      "/mcp",
      session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: envelope.payloadId, pointer: "/items/2" } },
      { vars: STREAMING },
    );
    expect(JSON.stringify(read.result)).toContain("[redacted: email]");
    expect(JSON.stringify(read.result)).not.toContain("user2@example.com");
    const stored = await (await payloads().get(`payloads/${envelope.payloadId}`))!.text();
    expect(stored).not.toContain("@example.com");
  });

  it("under a block rule, stores nothing and answers with a tool error naming the rule", HEAVY, async () => {
    await putDocument("/guardrails", { rules: [{ ...PII_RULE, name: "no-pii", action: "block" }] });
    const before = (await payloads().list({ prefix: "payloads/" })).objects.length;
    const { answer, event } = await bigCall("big_list", STREAMED_ITEMS);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toBe(
      'The gateway\'s guardrail "no-pii" withheld this result: it holds email.',
    );
    expect(event["gateway.payload_id"]).toBeUndefined();
    expect((await payloads().list({ prefix: "payloads/" })).objects.length).toBe(before);
  });

  // Held in a bridged call (the client may be asked for input), the answer streams through the call's Durable Object.
  it.each([
    ["a direct call", {}],
    ["a bridged call", { elicitation: {} }],
  ])("under a block rule, answers a 2026-07-28 client's %s with the tool error too", HEAVY, async (_label, caps) => {
    await putDocument("/guardrails", { rules: [{ ...PII_RULE, name: "no-pii", action: "block" }] });
    const before = (await payloads().list({ prefix: "payloads/" })).objects.length;
    const params = { name: "alpha___big_list", arguments: { count: STREAMED_ITEMS } };
    const { answer, record } = await modernCall(params, STREAMING, caps);
    expect(answer.result).toMatchObject({
      content: [{ type: "text", text: 'The gateway\'s guardrail "no-pii" withheld this result: it holds email.' }],
      isError: true,
    });
    expect(record).toMatchObject({ upstream: "alpha" });
    expect(record.failure).toBeUndefined();
    expect(record.payloadId).toBeUndefined();
    expect((await payloads().list({ prefix: "payloads/" })).objects.length).toBe(before);
  });

  it("under warn rules, passes as the upstream sent it, and the hits are recorded", HEAVY, async () => {
    await putDocument("/guardrails", { rules: [{ ...PII_RULE, name: "watch", action: "warn" }] });
    const { answer, event } = await bigCall("big_list", STREAMED_ITEMS);
    const envelope = JSON.parse(answer.result.content[0].text);
    const stored = await (await payloads().get(`payloads/${envelope.payloadId}`))!.text();
    expect(stored).toContain(`"email":"user${STREAMED_ITEMS - 2}@example.com"`);
    expect(event["gateway.guardrails"]).toEqual([
      {
        rule: "watch",
        action: "warn",
        detector: "personal",
        kind: "email",
        where: "result",
        count: STREAMED_ITEMS / 2,
      },
    ]);
  });
});

describe("a result too large to check, without offload", () => {
  it("is withheld under a redact rule, naming the bound", HEAVY, async () => {
    await putDocument("/guardrails", { rules: [PII_RULE] });
    const { answer } = await bigCall("big_list", itemsPast(MAX_GUARDED_RESULT_BYTES), {
      ...ADMIN_VARS,
      PAYLOADS: undefined,
    });
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toBe(
      `The gateway withheld this result: it is larger than ${MAX_GUARDED_RESULT_BYTES} bytes, ` +
        "too large for its guardrails to check.",
    );
  });

  it.each([
    ["a JSON body", false],
    ["an SSE stream", true],
  ])("is withheld from a 2026-07-28 client too (%s), not charging the upstream", HEAVY, async (_label, sse) => {
    await putDocument("/guardrails", { rules: [PII_RULE] });
    const mb = Math.ceil(MAX_GUARDED_RESULT_BYTES / (1024 * 1024)) + 1;
    const params = { name: "raw___huge", arguments: { mb, sse } };
    const { answer, record } = await modernCall(params, { ...ADMIN_VARS, PAYLOADS: undefined });
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toBe(
      `The gateway withheld this result: it is larger than ${MAX_GUARDED_RESULT_BYTES} bytes, ` +
        "too large for its guardrails to check.",
    );
    expect(record).toMatchObject({ upstream: "raw", upstreamStatus: 200 });
    expect(record.failure).toBeUndefined();
  });
});
