/**
 * Offload through the gateway, inside workerd with the real R2 binding: threshold
 * edges, the compact answer, each way to read the rest, and who may read it.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it } from "vitest";
import { instructions, payloadOf } from "../../src/features/offload/offload";
import { signPayloadToken } from "../../src/storage/signed-url";
import { gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";

const SECRET = "test-session-secret-0123456789abcdef";

async function bigCall(
  vars: Record<string, unknown>,
  tool = "alpha___big_list",
  count = 200,
  session?: string,
): Promise<{ session: string; result: Json; bytes: number }> {
  const started = session ?? (await initialize("/mcp", { vars })).session;
  const response = await post(
    "/mcp",
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: { count } } },
    { session: started, vars },
  );
  const text = await response.text();
  return { session: started, result: (JSON.parse(text) as Json).result, bytes: new TextEncoder().encode(text).length };
}

function envelopeOf(result: Json): Json {
  return JSON.parse(result.content[0].text);
}

async function readTool(session: string, args: Record<string, unknown>, vars: Record<string, unknown>): Promise<Json> {
  return (await request("/mcp", session, "tools/call", { name: "sys___read_payload", arguments: args }, { vars }))
    .result;
}

describe("the threshold", () => {
  it("offloads a result one byte over it, not one at it", async () => {
    const { bytes, result } = await bigCall({ OFFLOAD: JSON.stringify({ thresholdBytes: 100 * 1024 * 1024 }) });
    expect(result.content[0].text).toContain('"total":200');
    const at = await bigCall({ OFFLOAD: JSON.stringify({ thresholdBytes: bytes }) });
    expect(at.bytes).toBe(bytes);
    const over = await bigCall({ OFFLOAD: JSON.stringify({ thresholdBytes: bytes - 1 }) });
    expect(envelopeOf(over.result).truncated).toBe(true);
  });

  it("offloads nothing by default for small results, and never the gateway's own tools", async () => {
    const small = await bigCall({}, "alpha___big_list", 3);
    expect(JSON.parse(small.result.content[0].text).total).toBe(3);
    const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 1000 }) };
    const { session, result } = await bigCall(vars);
    const slice = await readTool(session, { id: envelopeOf(result).payloadId, pointer: "/items", limit: 100 }, vars);
    expect(slice.isError).toBeUndefined();
    expect(slice.structuredContent.count).toBeGreaterThan(1);
  });

  it("honours include and exclude globs", async () => {
    const excluded = await bigCall({ OFFLOAD: JSON.stringify({ thresholdBytes: 1000, exclude: ["alpha___big_*"] }) });
    expect(JSON.parse(excluded.result.content[0].text).total).toBe(200);
    const other = await bigCall({ OFFLOAD: JSON.stringify({ thresholdBytes: 1000, include: ["beta___*"] }) });
    expect(JSON.parse(other.result.content[0].text).total).toBe(200);
  });
});

describe("the compact answer", () => {
  const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 4096, previewChars: 120 }) };

  it("keeps the reference fields, adds payloadId, payloadUri and a resource_link", async () => {
    const { result } = await bigCall(vars);
    const envelope = envelopeOf(result);
    expect(envelope).toMatchObject({
      truncated: true,
      contentType: "application/json",
      payloadUri: `mcp-edge-gateway://payloads/${envelope.payloadId}`,
    });
    expect(envelope.payloadId).toMatch(/^[0-9a-f]{32}$/);
    expect(envelope.agentInstructions).toContain("sys___read_payload");
    expect(envelope.payloadPreview).toHaveLength(120);
    expect(envelope.payloadPreview.startsWith('{"total":200,"items":[{"id":0')).toBe(true);
    expect(envelope.payloadSchema).toEqual({
      items: [{ "email?": "string", id: "number", name: "string", score: "number|string", tags: ["string"] }],
      total: "number",
    });
    expect(result.content[1]).toMatchObject({
      type: "resource_link",
      uri: envelope.payloadUri,
      mimeType: "application/json",
      size: envelope.originalSize,
    });
    expect(result.structuredContent).toEqual(envelope);
    const stored = await env.PAYLOADS.head(`payloads/${envelope.payloadId}`);
    expect(stored?.customMetadata).toMatchObject({
      tool: "alpha___big_list",
      upstream: "alpha",
      size: String(envelope.originalSize),
    });
  });

  it("answers a tool with an outputSchema with an error result, never contradicting its schema", async () => {
    const { result } = await bigCall(vars, "alpha___big_structured");
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(envelopeOf(result).payloadSchema.total).toBe("number");
  });

  it("sees the filtered result, since filters run first", async () => {
    const token = "t".repeat(32);
    const filtered = { ...vars, ADMIN_TOKEN: token };
    const authorization = `Bearer ${token}`;
    const body = '{"tools":{"alpha___big_list":{"retain":["/total"]}}}';
    expect(
      (await gatewayFetch("/admin/filter-sets/default", { method: "PUT", headers: { authorization }, body }, filtered))
        .ok,
    ).toBe(true);
    const { result } = await bigCall(filtered);
    expect(JSON.parse(result.content[0].text)).toEqual({ total: 200 });
    await gatewayFetch("/admin/filter-sets/default", { method: "DELETE", headers: { authorization } }, filtered);
  });
});

describe("reading the rest", () => {
  const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 4096 }) };

  it("pages through items with sys___read_payload and its cursor", async () => {
    const { session, result } = await bigCall(vars, "alpha___big_list", 500);
    const id = envelopeOf(result).payloadId;
    const items: Json[] = [];
    let args: Record<string, unknown> = { id, pointer: "/items", limit: 120 };
    for (let page = 0; page < 20; page++) {
      const slice = (await readTool(session, args, vars)).structuredContent;
      items.push(...slice.items);
      if (!slice.nextCursor) break;
      args = { id, cursor: slice.nextCursor };
    }
    expect(items).toHaveLength(500);
    expect(items[499]).toMatchObject({ id: 499 });
    const one = (await readTool(session, { id, pointer: "/items/7/name" }, vars)).structuredContent;
    expect(one.value).toBe("item 7 — ünïcödé");
  });

  it("reads byte ranges that join into the original", async () => {
    const { session, result } = await bigCall(vars, "alpha___big_list", 300);
    const envelope = envelopeOf(result);
    let text = "";
    let args: Record<string, unknown> = { id: envelope.payloadId, byteOffset: 0, byteLength: 5000 };
    for (let page = 0; page < 100; page++) {
      const slice = (await readTool(session, args, vars)).structuredContent;
      text += slice.text;
      if (!slice.nextCursor) break;
      args = { id: envelope.payloadId, cursor: slice.nextCursor };
    }
    expect(JSON.parse(text).items).toHaveLength(300);
    expect(text).not.toContain("\uFFFD"); // no character was cut between slices
    expect(text.startsWith(envelope.payloadPreview)).toBe(true);
  });

  it("reads at least one whole character however few bytes are asked, so a cursor always moves on", async () => {
    const { session, result } = await bigCall(vars, "alpha___big_list", 300);
    const id = envelopeOf(result).payloadId;
    const whole = (await readTool(session, { id, byteOffset: 0, byteLength: 5000 }, vars)).structuredContent
      .text as string;
    const at = new TextEncoder().encode(whole.slice(0, whole.indexOf("ü"))).length;
    const slice = (await readTool(session, { id, byteOffset: at, byteLength: 1 }, vars)).structuredContent;
    // One byte of a two-byte character was no character: an empty slice whose cursor named the same offset.
    expect(slice.byteOffset).toBe(at);
    expect(slice.text.startsWith("ü")).toBe(true);
    expect(slice.byteLength).toBe(new TextEncoder().encode(slice.text).length);
    const next = (await readTool(session, { id, cursor: slice.nextCursor }, vars)).structuredContent;
    expect(next.byteOffset).toBe(at + slice.byteLength);
  });

  it("answers resources/read on the payload URI, whole or sliced", async () => {
    const { session, result } = await bigCall(vars, "alpha___big_list", 100);
    const { payloadUri } = envelopeOf(result);
    const whole = await request("/mcp", session, "resources/read", { uri: payloadUri }, { vars });
    expect(JSON.parse(whole.result.contents[0].text).items).toHaveLength(100);
    const sliced = await request(
      "/mcp",
      session,
      "resources/read",
      { uri: `${payloadUri}?pointer=/items&offset=10&limit=5` },
      { vars },
    );
    expect(JSON.parse(sliced.result.contents[0].text).items.map((i: Json) => i.id)).toEqual([10, 11, 12, 13, 14]);
    const templates = await request("/mcp", session, "resources/templates/list", undefined, { vars });
    expect(templates.result.resourceTemplates.map((t: Json) => t.uriTemplate)).toContain(
      "mcp-edge-gateway://payloads/{id}{?pointer,offset,limit,byteOffset,byteLength,cursor}",
    );
  });

  it("serves the payload at its signed URL, and nothing for a wrong or expired token", async () => {
    const { result } = await bigCall(vars, "alpha___big_list", 100);
    const envelope = envelopeOf(result);
    const url = new URL(envelope.payloadUrl);
    const response = await gatewayFetch(`${url.pathname}${url.search}`);
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(JSON.parse(body).total).toBe(100);
    expect(body.startsWith(envelope.payloadPreview)).toBe(true);
    const ranged = await gatewayFetch(`${url.pathname}${url.search}`, { headers: { range: "bytes=0-9" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe(body.slice(0, 10));
    const suffix = await gatewayFetch(`${url.pathname}${url.search}`, { headers: { range: "bytes=-5" } });
    const bytes = new TextEncoder().encode(body).length;
    expect(suffix.headers.get("content-range")).toBe(`bytes ${bytes - 5}-${bytes - 1}/${bytes}`);
    expect(await suffix.text()).toBe(body.slice(-5));
    expect(
      (await gatewayFetch(`${url.pathname}${url.search}`, { headers: { range: "bytes=999999999-" } })).status,
    ).toBe(416);
    expect((await gatewayFetch(`${url.pathname}?token=1999999999.AAAA`)).status).toBe(404);
    const expired = await signPayloadToken(envelope.payloadId, Math.floor(Date.now() / 1000) - 1, SECRET);
    expect((await gatewayFetch(`${url.pathname}?token=${expired}`)).status).toBe(404);
    const other = await signPayloadToken("0".repeat(32), Math.floor(Date.now() / 1000) + 60, SECRET);
    expect((await gatewayFetch(`/payloads/${envelope.payloadId}?token=${other}`)).status).toBe(404);
  });
});

describe("who may read", () => {
  const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 4096 }) };

  it("refuses another session with authentication off, where every caller is the one anonymous principal, and says why", async () => {
    const { result } = await bigCall(vars);
    const { payloadId, payloadUri } = envelopeOf(result);
    const other = (await initialize("/mcp", { vars })).session;
    const slice = await readTool(other, { id: payloadId }, vars);
    expect(slice.isError).toBe(true);
    const why = `no payload ${payloadId} for this session: it may have expired (see expiresAt in the answer that offloaded it) or belong to another session (with authentication off, a payload belongs to the session that caused it)`;
    expect(slice.content[0].text).toBe(why);
    const read = await request("/mcp", other, "resources/read", { uri: payloadUri }, { vars });
    expect(read.error.code).toBe(-32002);
    expect(read.error.message).toBe(`Resource not found: ${payloadUri} (${why})`);
  });

  it("refuses after expiry", async () => {
    const { session, result } = await bigCall(vars);
    const { payloadId } = envelopeOf(result);
    const key = `payloads/${payloadId}`;
    const object = await env.PAYLOADS.get(key);
    await env.PAYLOADS.put(key, await object!.text(), {
      customMetadata: { ...object!.customMetadata, expiresAt: new Date(Date.now() - 1000).toISOString() },
    });
    const slice = await readTool(session, { id: payloadId }, vars);
    expect(slice.isError).toBe(true);
  });
});

describe("the read path on /mcp/<upstream>", () => {
  const vars = { OFFLOAD: JSON.stringify({ thresholdBytes: 4096 }) };

  it("lists sys___read_payload and the payload template, and answers both, where answers are offloaded", async () => {
    const { session } = await initialize("/mcp/alpha", { vars });
    const tools = await request("/mcp/alpha", session, "tools/list", undefined, { vars });
    expect(tools.result.tools.map((t: Json) => t.name)).toContain("sys___read_payload");
    const templates = await request("/mcp/alpha", session, "resources/templates/list", undefined, { vars });
    expect(templates.result.resourceTemplates.map((t: Json) => t.uriTemplate)).toContain(
      "mcp-edge-gateway://payloads/{id}{?pointer,offset,limit,byteOffset,byteLength,cursor}",
    );
    const call = await request(
      "/mcp/alpha",
      session,
      "tools/call",
      { name: "big_list", arguments: { count: 200 } },
      { vars },
    );
    const envelope = envelopeOf(call.result);
    expect(envelope.agentInstructions).toContain("sys___read_payload");
    const slice = await request(
      "/mcp/alpha",
      session,
      "tools/call",
      { name: "sys___read_payload", arguments: { id: envelope.payloadId, pointer: "/items", offset: 5, limit: 2 } },
      { vars },
    );
    expect(slice.result.structuredContent.items.map((i: Json) => i.id)).toEqual([5, 6]);
    const read = await request(
      "/mcp/alpha",
      session,
      "resources/read",
      { uri: `${envelope.payloadUri}?pointer=/total` },
      { vars },
    );
    expect(JSON.parse(read.result.contents[0].text).value).toBe(200);
  });

  it("lists neither where no answer of that upstream can be offloaded", async () => {
    const excluded = { OFFLOAD: JSON.stringify({ thresholdBytes: 4096, exclude: ["alpha___*"] }) };
    const { session } = await initialize("/mcp/alpha", { vars: excluded });
    const tools = await request("/mcp/alpha", session, "tools/list", undefined, { vars: excluded });
    expect(tools.result.tools.map((t: Json) => t.name)).not.toContain("sys___read_payload");
    const templates = await request("/mcp/alpha", session, "resources/templates/list", undefined, { vars: excluded });
    expect(JSON.stringify(templates)).not.toContain("mcp-edge-gateway://payloads/");
    const aggregated = await initialize("/mcp", { vars: excluded });
    const listed = await request("/mcp", aggregated.session, "tools/list", undefined, { vars: excluded });
    expect(listed.result.tools.map((t: Json) => t.name)).toContain("sys___read_payload");
  });
});

describe("the plan's offload override", () => {
  const ADMIN_TOKEN = "admin-token-for-offload-tests-0123456789";
  // Nothing of alpha is offloaded under the var alone; the plan, edited live, turns it on.
  const vars = { ADMIN_TOKEN, OFFLOAD: JSON.stringify({ exclude: ["alpha___*"] }) };
  const plan = (method: string, body?: string) =>
    gatewayFetch(
      "/admin/plan",
      {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body }),
      },
      vars,
    );
  afterEach(async () => {
    await plan("DELETE");
  });

  it("decides what offload stores and whether /mcp/<upstream> lists the read path", async () => {
    const names = async (session: string) =>
      (await request("/mcp/alpha", session, "tools/list", undefined, { vars })).result.tools.map((t: Json) => t.name);
    const bigList = (session: string) =>
      request("/mcp/alpha", session, "tools/call", { name: "big_list", arguments: { count: 200 } }, { vars });
    const before = await initialize("/mcp/alpha", { vars });
    expect(await names(before.session)).not.toContain("sys___read_payload");
    expect(JSON.parse((await bigList(before.session)).result.content[0].text).total).toBe(200);

    expect((await plan("PUT", '{"offload":{"thresholdBytes":1000,"exclude":[]}}')).status).toBe(200);
    const { session } = await initialize("/mcp/alpha", { vars });
    expect(await names(session)).toContain("sys___read_payload");
    const envelope = envelopeOf((await bigList(session)).result);
    expect(envelope.truncated).toBe(true);
    expect(envelope.payloadId).toEqual(expect.any(String));
  });
});

describe("the envelope of a real server's answer", () => {
  const rows = Array.from({ length: 3 }, (_, i) => ({ id: i, title: `t${i}` }));
  const inner = JSON.stringify({ data: { rows, cursor: null } });
  const text = (t: string) => ({ type: "text", text: t });
  // [label, result, stored text, content type, schema, pointer the instructions name (null: none)]
  it.each([
    [
      "structuredContent wrapping JSON text in one member",
      { content: [text(inner)], structuredContent: { content: inner } },
      inner,
      "application/json",
      { data: { cursor: "null", rows: [{ id: "number", title: "string" }] } },
      "/data/rows",
    ],
    [
      "FastMCP's {result: <json>}",
      { content: [text(inner)], structuredContent: { result: inner } },
      inner,
      "application/json",
      { data: { cursor: "null", rows: [{ id: "number", title: "string" }] } },
      "/data/rows",
    ],
    [
      "a lone text block of JSON",
      { content: [text(inner)] },
      inner,
      "application/json",
      { data: { cursor: "null", rows: [{ id: "number", title: "string" }] } },
      "/data/rows",
    ],
    [
      "a top-level array",
      { content: [text(JSON.stringify(rows))] },
      JSON.stringify(rows),
      "application/json",
      [{ id: "number", title: "string" }],
      "",
    ],
    [
      "the longest of several arrays",
      { content: [], structuredContent: { a: [1], b: { c: [1, 2, 3] } } },
      '{"a":[1],"b":{"c":[1,2,3]}}',
      "application/json",
      { a: ["number"], b: { c: ["number"] } },
      "/b/c",
    ],
    ["JSON without arrays", { content: [text('{"k":"v"}')] }, '{"k":"v"}', "application/json", { k: "string" }, null],
    [
      "a member holding plain text",
      { content: [], structuredContent: { content: "plain words" } },
      '{"content":"plain words"}',
      "application/json",
      { content: "string" },
      null,
    ],
    ["plain text", { content: [text("just words")] }, "just words", "text/plain; charset=utf-8", "string", null],
  ])("%s", (_label, result, stored, contentType, schema, pointer) => {
    const answer = JSON.stringify({ jsonrpc: "2.0", id: 1, result });
    const payload = payloadOf(answer, result as Json);
    expect(payload).toMatchObject({ text: stored, contentType, schema });
    // The preview is a raw excerpt of the stored text: JSON inside a string is not escaped again.
    expect(payload.text.slice(0, 20)).toBe(stored.slice(0, 20));
    const said = instructions("0".repeat(32), 1, payload.contentType, payload.array);
    if (pointer === null) expect(said).not.toMatch(/"pointer": "/);
    else expect(said).toContain(`"pointer": ${JSON.stringify(pointer)}`);
    if (pointer !== "/items") expect(said).not.toContain('"/items"');
    if (contentType.startsWith("text/")) expect(said).toContain('"byteOffset": 0');
  });

  it("names the real array of a payload streamed to R2", { timeout: 60_000 }, async () => {
    const { raw } = inject("fixtureUrls");
    const vars = { UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]) };
    const { session } = await initialize("/mcp", { vars });
    const answer = await request("/mcp", session, "tools/call", { name: "raw___huge", arguments: { mb: 9 } }, { vars });
    const envelope = JSON.parse(answer.result.content[0].text);
    expect(envelope.agentInstructions).toContain(`"pointer": "/items", "offset": 0`);
    expect(envelope.agentInstructions).toContain(`${Math.floor((9 * 1024 * 1024) / 100)} items`);
  });
});
