/**
 * What a code-mode program gets and what its client gets, through the Worker in workerd
 * (R2, KV, the Worker Loader): an inner call's large result stays whole in the sandbox up
 * to MAX_INNER_RESULT_BYTES (above it the program gets offload's envelope, as a direct call
 * would), and a large returned value is offloaded as any large result: an R2 payload the
 * caller owns, its preview, its inferred schema and the read tool, in both eras.
 */
import { describe, expect, it } from "vitest";
import { initialize, request, type Json, type Vars } from "../helpers/gateway";
import { modern } from "../helpers/modern";
import { MAX_INNER_RESULT_BYTES } from "../../src/features/code-mode/limits";

const vars: Vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 1000, previewChars: 40 }) };

/** A 2025 session on /mcp?catalog=code. */
async function coder() {
  const path = "/mcp?catalog=code";
  const { session } = await initialize(path, { vars });
  const call = async (name: string, args: unknown) =>
    (await request(path, session, "tools/call", { name, arguments: args }, { vars })).result as Json;
  return { call, run: (code: string) => call("sys___run_code", { code }) };
}

describe("an inner call's result", () => {
  it("stays whole in the sandbox where a direct call's is offloaded, and only the returned value leaves", async () => {
    const { run } = await coder();
    const { session } = await initialize("/mcp", { vars });
    const args = { name: "alpha___big_list", arguments: { count: 200 } };
    const direct = JSON.parse((await request("/mcp", session, "tools/call", args, { vars })).result.content[0].text);
    expect(direct.truncated).toBe(true);
    const answer = await run(
      "const list = await tools.alpha.big_list({ count: 200 });\nreturn [list.items.length, list.items[150].name];",
    );
    expect(answer.isError).toBeUndefined();
    expect(JSON.parse(answer.content[0].text)).toEqual([200, "item 150 — ünïcödé"]);
    expect(answer.structuredContent).toBeUndefined();
    expect(JSON.stringify(answer)).not.toContain("payloadId");
  });

  it("over MAX_INNER_RESULT_BYTES reaches the program as offload's envelope, which the client can read", async () => {
    const { call, run } = await coder();
    // About 120 bytes per item in the answer: past the bound, short of what offload streams.
    const count = Math.ceil(MAX_INNER_RESULT_BYTES / 100);
    const answer = await run(
      `const list = await tools.alpha.big_list({ count: ${count} });\n` +
        "return { truncated: list.truncated, payloadId: list.payloadId, size: list.originalSize };",
    );
    const value = JSON.parse(answer.content[0].text);
    expect(value.truncated).toBe(true);
    // The bound counts the answer's bytes; the payload is the list's own JSON text, without the escapes.
    expect(value.size).toBeGreaterThan(MAX_INNER_RESULT_BYTES * 0.9);
    const slice = await call("sys___read_payload", { id: value.payloadId, pointer: "/total" });
    expect(slice.structuredContent.value).toBe(count);
  });
});

describe("a program's large returned value", () => {
  const code =
    'const { items } = await tools.alpha.big_list({ count: 200 });\nconsole.log("kept", items.length);\nreturn items;';

  it("is offloaded for the caller: preview, inferred schema, and sys___read_payload to read the rest", async () => {
    const { call, run } = await coder();
    const answer = await run(code);
    const envelope = answer.structuredContent;
    expect(envelope).toMatchObject({ truncated: true, contentType: "application/json" });
    expect(envelope.payloadPreview).toBe('[{"id":0,"name":"item 0 — ünïcödé","scor');
    expect(envelope.payloadSchema).toEqual([expect.objectContaining({ id: "number", name: "string" })]);
    expect(envelope.agentInstructions).toContain("sys___read_payload");
    expect(answer.content[1]).toMatchObject({ type: "resource_link", uri: envelope.payloadUri });
    // The console output follows, as it does for a small value.
    expect(answer.content.at(-1)).toEqual({ type: "text", text: "console output:\nkept 200" });
    const slice = await call("sys___read_payload", { id: envelope.payloadId, pointer: "/150/name" });
    expect(slice.structuredContent.value).toBe("item 150 — ünïcödé");
    // Another caller (authentication off: another session) does not find it.
    const other = await coder();
    const foreign = await other.call("sys___read_payload", { id: envelope.payloadId, pointer: "/150/name" });
    expect(foreign.isError).toBe(true);
    expect(foreign.content[0].text).toContain(`no payload ${envelope.payloadId} for this session`);
  });

  it("is offloaded for a 2026-07-28 client too", async () => {
    const answer = await modern(
      "/mcp?catalog=code",
      "tools/call",
      { name: "sys___run_code", arguments: { code } },
      {
        vars,
      },
    );
    const envelope = answer.result.structuredContent;
    expect(envelope).toMatchObject({ truncated: true, contentType: "application/json" });
    const slice = await modern(
      "/mcp?catalog=code",
      "tools/call",
      { name: "sys___read_payload", arguments: { id: envelope.payloadId, pointer: "/3/id" } },
      { vars },
    );
    expect(slice.result.structuredContent.value).toBe(3);
  });

  it("stays in the answer under the threshold", async () => {
    const { run } = await coder();
    const answer = await run("return (await tools.alpha.big_list({ count: 200 })).items.length;");
    expect(answer.content).toEqual([{ type: "text", text: "200" }]);
    // Where the run's time went, for operators and npm run bench:code: numbers, the start within the run.
    const timing = answer._meta["mcp-edge-gateway/code-run"];
    for (const key of ["startMs", "isolateMs", "runMs", "toolCallMs"]) expect(typeof timing[key]).toBe("number");
    expect(timing.startMs).toBeLessThanOrEqual(timing.runMs);
    expect(timing.toolCallMs).toBeLessThanOrEqual(timing.runMs);
  });
});
