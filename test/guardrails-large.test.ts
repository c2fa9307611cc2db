/**
 * Results too large for the guardrails to read in memory, through the Worker with the SDK
 * upstream's big_list (JSON text only, about 115 bytes an item): over
 * MAX_GUARDED_RESULT_BYTES a `redact` or `block` rule withholds the result; under `warn`
 * rules only, an answer offload streams to R2 passes unread and the audit event says so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_GUARDED_RESULT_BYTES } from "../src/features/guardrails/guard-call";
import { admin, ADMIN_VARS, putDocument } from "./helpers/admin";
import { recordingQueue } from "./helpers/audit";
import { initialize, messageTexts, post, type Json } from "./helpers/gateway";

/** Items of big_list that make an answer past `bytes` (each is at least 100 bytes as text). */
const itemsPast = (bytes: number) => Math.ceil(bytes / 100);

afterEach(async () => {
  await admin("DELETE", "/guardrails");
});

describe("a result too large to check", () => {
  it("is withheld under a redact rule, naming the bound", async () => {
    await putDocument("/guardrails", {
      rules: [{ name: "pii", action: "redact", detectors: ["personal"], on: ["result"] }],
    });
    const { session } = await initialize("/mcp", { vars: ADMIN_VARS });
    const params = { name: "alpha___big_list", arguments: { count: itemsPast(MAX_GUARDED_RESULT_BYTES) } };
    const texts = await messageTexts(
      await post("/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params }, { session, vars: ADMIN_VARS }),
    );
    const answer = JSON.parse(texts.pop()!) as Json;
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toBe(
      `The gateway withheld this result: it is larger than ${MAX_GUARDED_RESULT_BYTES} bytes, ` +
        "too large for its guardrails to check.",
    );
  });

  it("passes unread under warn rules when offload streams it, and the audit event says so", async () => {
    await putDocument("/guardrails", {
      rules: [{ name: "watch", action: "warn", detectors: ["personal"], on: ["result"] }],
    });
    const { queue, batches } = recordingQueue();
    const vars = { ...ADMIN_VARS, AUDIT_QUEUE: queue, OFFLOAD: JSON.stringify({ thresholdBytes: 1024 }) };
    const { session } = await initialize("/mcp", { vars });
    // Past offload's streaming bound (8 MiB), under the guardrails' own.
    const params = { name: "alpha___big_list", arguments: { count: itemsPast(9 * 1024 * 1024) } };
    const texts = await messageTexts(
      await post("/mcp", { jsonrpc: "2.0", id: 2, method: "tools/call", params }, { session, vars, settle: true }),
    );
    const answer = JSON.parse(texts.pop()!) as Json;
    expect(JSON.parse(answer.result.content[0].text).payloadId).toMatch(/^[0-9a-f]{32}$/);
    const event = batches
      .flat()
      .map((m) => m.body)
      .find((e: Json) => e["gen_ai.tool.name"] === "alpha___big_list");
    expect(event["gateway.guardrails.unchecked"]).toBe("result offloaded while streamed: not checked");
    expect(event["gateway.guardrails"]).toBeUndefined();
  });
});
