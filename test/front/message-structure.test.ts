/**
 * A key twice in any object of a client's message is refused with 400, at any depth and in
 * every message kind of both eras: JSON.parse keeps the last, the relayed bytes hold both,
 * and a first-wins upstream would act on the value policy never judged. The scan is
 * bounded: a message nested past MAX_MESSAGE_DEPTH is refused, even a 10 MB one.
 */
import { describe, expect, it, vi } from "vitest";
import { checkNesting } from "../../src/front/http/request-checks";
import { MAX_MESSAGE_DEPTH } from "../../src/core/duplicate-keys";
import { initialize, post, request } from "../helpers/gateway";
import { MODERN } from "../helpers/modern";

const COMPLETE_TWICE =
  '{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"alpha___greet","name":"alpha___other"},"argument":{"name":"name","value":"A"}}}';

async function refused(response: Response, id: number | null): Promise<string> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { id: unknown; error: { code: number; message: string } };
  expect(body.error.code).toBe(-32600);
  expect(body.id).toBe(id);
  return body.error.message;
}

describe("duplicate keys below params (2025 front)", () => {
  it.each([
    ["ref.name twice in completion/complete", COMPLETE_TWICE, 5],
    [
      "a key twice deep in tool arguments",
      '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"text":"x","deep":[{"a":{"b":1,"b":2}}]}}}',
      6,
    ],
    [
      "the same key spelled with an escape",
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"text":"x","\\u0074ext":"y"}}}',
      7,
    ],
    [
      "a notification",
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"_meta":{"k":1,"k":2}}}',
      null,
    ],
    [
      "a response to a server request",
      '{"jsonrpc":"2.0","id":"s-1","result":{"action":"accept","content":{"name":"a","name":"b"}}}',
      "s-1",
    ],
  ])("%s answers 400", async (_label, body, id) => {
    const { session } = await initialize();
    const message = await refused(await post("/mcp", body, { session }), id as number | null);
    expect(message).toMatch(/appears twice/);
  });

  it("refuses initialize with a key twice in its capabilities", async () => {
    const body = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"1"}}}`;
    expect(await refused(await post("/mcp", body), 0)).toMatch(/"roots" appears twice/);
  });

  it("refuses a batch whose second element has a key twice below params", async () => {
    const { session } = await initialize("/mcp", { version: "2025-03-26" });
    const batch = `[{"jsonrpc":"2.0","id":1,"method":"ping"},${COMPLETE_TWICE}]`;
    expect(await refused(await post("/mcp", batch, { session, version: "2025-03-26" }), null)).toMatch(
      /"name" appears twice/,
    );
  });

  it("accepts the same key in sibling objects", async () => {
    const { session } = await initialize();
    const answer = await request("/mcp", session, "tools/call", {
      name: "alpha___echo",
      arguments: { text: "ok", a: { k: 1 }, b: { k: 2 }, c: [{ k: 3 }, { k: 4 }] },
    });
    expect(answer.error).toBeUndefined();
  });
});

describe("duplicate keys below params (2026-07-28 front)", () => {
  const envelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"m","version":"2"}}`;
  const headers = (method: string, name?: string) => ({
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  });

  it("refuses ref.name twice in completion/complete", async () => {
    const body = `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"alpha___greet","name":"alpha___other"},"argument":{"name":"name","value":"A"},${envelope}}}`;
    expect(await refused(await post("/mcp", body, { headers: headers("completion/complete") }), 9)).toMatch(
      /"name" appears twice/,
    );
  });

  it("refuses a notification with a key twice", async () => {
    const body = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"a","reason":"b",${envelope}}}`;
    expect(await refused(await post("/mcp", body, { headers: headers("notifications/cancelled") }), null)).toMatch(
      /"reason" appears twice/,
    );
  });
});

describe("nesting is bounded", () => {
  it("refuses a 10 MB message nested far past the bound, and keeps serving", async () => {
    const levels = 5 * 1024 * 1024;
    const deep = `${"[".repeat(levels)}${"]".repeat(levels)}`;
    // A body limit above the message's size, so that the nesting bound is what refuses it.
    const vars = { MAX_MESSAGE_BYTES: String(16 * 1024 * 1024) };
    const { session } = await initialize("/mcp", { vars });
    const body = `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"text":"x","deep":${deep}}}}`;
    expect(await refused(await post("/mcp", body, { session, vars }), 11)).toMatch(
      new RegExp(`deeper than ${MAX_MESSAGE_DEPTH} levels`),
    );
    expect((await request("/mcp", session, "ping", undefined, { vars })).result).toEqual({});
  });

  // JSON.parse of 4 MiB of brackets takes about 100 MiB: the bound is checked before anything parses the text.
  it("refuses nesting past the bound before parsing: text that would not even parse is refused for its nesting", async () => {
    const { session } = await initialize();
    const body = `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"deep":${"[".repeat(MAX_MESSAGE_DEPTH * 4)} not JSON`;
    expect(await refused(await post("/mcp", body, { session }), null)).toMatch(
      new RegExp(`deeper than ${MAX_MESSAGE_DEPTH} levels`),
    );
  });

  it("refuses nesting past the bound that follows a key twice (the scan does not stop at the key)", async () => {
    const { session } = await initialize();
    const levels = MAX_MESSAGE_DEPTH * 4;
    const body = `{"jsonrpc":"2.0","id":14,"id":14,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"deep":${"[".repeat(levels)}${"]".repeat(levels)}}}}`;
    expect(await refused(await post("/mcp", body, { session }), 14)).toMatch(
      new RegExp(`deeper than ${MAX_MESSAGE_DEPTH} levels`),
    );
  });

  it("does not parse an id nested past the bound to quote it in the refusal", () => {
    const deep = `${"[".repeat(MAX_MESSAGE_DEPTH * 8)}${"]".repeat(MAX_MESSAGE_DEPTH * 8)}`;
    const parse = vi.spyOn(JSON, "parse");
    try {
      expect(() => checkNesting(`{"jsonrpc":"2.0","method":"ping","id":${deep}}`)).toThrow(/deeper than/);
      // The id's text was parsed whole to see whether it was one: the cost the check before parsing is there to avoid.
      expect(parse.mock.calls.filter(([text]) => String(text).length > MAX_MESSAGE_DEPTH)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it("refuses a 2026-07-28 message nested past the bound before the era is chosen", async () => {
    const body = `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"deep":${"[".repeat(MAX_MESSAGE_DEPTH * 4)} not JSON`;
    const headers = { "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "alpha___echo" };
    expect(await refused(await post("/mcp", body, { headers }), null)).toMatch(
      new RegExp(`deeper than ${MAX_MESSAGE_DEPTH} levels`),
    );
  });

  it("accepts a message nested up to the bound", async () => {
    const { session } = await initialize();
    // The root, params and arguments are three levels; the rest fills up to the bound.
    const inner = MAX_MESSAGE_DEPTH - 3;
    const body = `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"alpha___echo","arguments":{"text":"x","deep":${"[".repeat(inner)}${"]".repeat(inner)}}}}`;
    const response = await post("/mcp", body, { session });
    expect(response.status).toBe(200);
  });
});
