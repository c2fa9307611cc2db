/**
 * The 2026-07-28 wire as the gateway speaks it to upstreams: header values in the Base64
 * sentinel form where the transport page says so, the `_meta` envelope added without
 * touching other bytes, `x-mcp-header` annotations read from a tool's schema, and the
 * downgrade of what a 2025 client's schema forbids.
 */
import { describe, expect, it } from "vitest";
import type { JsonRpcRequest, WireMessage } from "../../src/core/jsonrpc";
import { withoutEnvelope } from "../../src/front/modern/upstream-request";
import { downgradeFor2025 } from "../../src/upstream/downgrade";
import {
  annotationProblem,
  encodeHeaderValue,
  mirroredHeaders,
  paramHeaders,
  withEnvelope,
} from "../../src/upstream/modern-wire";

const CLIENT = { clientCapabilities: { sampling: {} }, clientInfo: { name: "c", version: "1" } };

describe("header values", () => {
  it.each([
    ["us-west1", "us-west1"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ])("encodes %j as the transport page's table says", (value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
  });

  it("mirrors method, name and annotated arguments (strings, integers, booleans; never numbers or absent values)", () => {
    const annotated = paramHeaders({
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        opts: { type: "object", properties: { dry: { type: "boolean", "x-mcp-header": "Dry" } } },
        n: { type: "integer", "x-mcp-header": "N" },
        gone: { type: "string", "x-mcp-header": "Gone" },
      },
    });
    expect(annotated).toEqual([
      { name: "Region", path: ["region"] },
      { name: "Dry", path: ["opts", "dry"] },
      { name: "N", path: ["n"] },
      { name: "Gone", path: ["gone"] },
    ]);
    const headers = mirroredHeaders(
      "tools/call",
      { name: "run sql", arguments: { region: "eu", opts: { dry: false }, n: 42 } },
      annotated,
    );
    expect(headers).toEqual({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "run sql",
      "mcp-param-region": "eu",
      "mcp-param-dry": "false",
      "mcp-param-n": "42",
    });
    expect(mirroredHeaders("resources/read", { uri: "file:///ä" })["mcp-name"]).toBe(encodeHeaderValue("file:///ä"));
  });

  it.each(["tasks/get", "tasks/update", "tasks/cancel"])("mirrors %s's taskId in Mcp-Name", (method) => {
    expect(mirroredHeaders(method, { taskId: "task-7" })["mcp-name"]).toBe("task-7");
  });
});

describe("invalid x-mcp-header annotations", () => {
  const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });
  it.each([
    ["a name with a space", schema({ r: { type: "string", "x-mcp-header": "Bad Name" } }), /not an HTTP token/],
    ["a name with a colon", schema({ r: { type: "string", "x-mcp-header": "a:b" } }), /not an HTTP token/],
    ["a non-ASCII name", schema({ r: { type: "string", "x-mcp-header": "Régión" } }), /not an HTTP token/],
    ["an empty name", schema({ r: { type: "string", "x-mcp-header": "" } }), /not an HTTP token/],
    [
      "names equal but for case",
      schema({ a: { type: "string", "x-mcp-header": "Zone" }, b: { type: "string", "x-mcp-header": "ZONE" } }),
      /declared twice/,
    ],
    [
      "a number-typed parameter",
      schema({ n: { type: "number", "x-mcp-header": "N" } }),
      /not a string, integer or boolean/,
    ],
    [
      "an object-typed parameter",
      schema({ o: { type: "object", "x-mcp-header": "O" } }),
      /not a string, integer or boolean/,
    ],
  ])("are refused: %s, and the tool mirrors no header (never a throw)", (_label, input, problem) => {
    expect(annotationProblem(input)).toMatch(problem);
    expect(paramHeaders(input)).toEqual([]);
    expect(() =>
      mirroredHeaders("tools/call", { name: "t", arguments: { r: "x", a: "x", b: "y", n: 1 } }, paramHeaders(input)),
    ).not.toThrow();
  });
});

describe("the envelope", () => {
  it("is added to a request without params, without _meta, and beside a 2025 client's own _meta, every other byte kept", () => {
    expect(JSON.parse(withEnvelope('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', CLIENT)).params._meta).toEqual({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
      "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
    });
    const big =
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890}}}';
    const enveloped = withEnvelope(big, CLIENT);
    expect(
      enveloped.startsWith(
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890},"_meta":{',
      ),
    ).toBe(true);
    const withProgress = withEnvelope(
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7}}}',
      CLIENT,
    );
    expect(JSON.parse(withProgress).params._meta).toMatchObject({
      progressToken: 7,
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    });
  });

  it("replaces an envelope the request already carries (a 2025 client cannot claim capabilities it never declared)", () => {
    const own =
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}},"io.modelcontextprotocol/logLevel":"debug","progressToken":1}}}';
    const meta = JSON.parse(withEnvelope(own, CLIENT)).params._meta;
    expect(meta).toEqual({
      progressToken: 1,
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
      "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
    });
  });

  it("is removed from a modern client's request entirely, a key written twice included", () => {
    const text =
      '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"progressToken":2,"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}';
    const wire = { text, message: JSON.parse(text) } as WireMessage<JsonRpcRequest>;
    const stripped = withoutEnvelope(wire);
    expect(stripped.text).not.toContain("clientCapabilities");
    expect(JSON.parse(stripped.text).params._meta).toEqual({ progressToken: 2 });
  });
});

describe("the downgrade for 2025 clients", () => {
  it("leaves object schemas and object structured content alone", () => {
    const list =
      '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","outputSchema":{"type":"object"}}],"resultType":"complete"}}';
    expect(downgradeFor2025(list, "tools/list")).toBe(list);
    const call = '{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"x":1}}}';
    expect(downgradeFor2025(call, "tools/call")).toBe(call);
  });

  it("removes a non-object output schema and structured content, naming them in the existing _meta", () => {
    const list =
      '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","outputSchema":{"type":"array"},"_meta":{"k":1}},{"name":"b"}]}}';
    const tool = JSON.parse(downgradeFor2025(list, "tools/list")).result.tools[0];
    expect(tool.outputSchema).toBeUndefined();
    expect(tool._meta.k).toBe(1);
    expect(tool._meta["mcp-edge-gateway/downgraded"][0]).toMatchObject({ tool: "a", member: "outputSchema" });
    const call = JSON.parse(
      downgradeFor2025('{"jsonrpc":"2.0","id":1,"result":{"structuredContent":"text","content":[]}}', "tools/call"),
    ).result;
    expect(call).toEqual({
      content: [],
      _meta: { "mcp-edge-gateway/downgraded": [{ member: "structuredContent", reason: expect.any(String) }] },
    });
  });
});
