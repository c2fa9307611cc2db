/**
 * The streaming tokenizer and the streaming offload: whatever the chunking, the same
 * structure and the same schema as reading the whole text; the payload copied out byte
 * for byte into real R2 in multipart parts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { JsonStreamError, JsonStreamTokenizer } from "../../src/core/json-stream";
import { inferSchema, SchemaBuilder } from "../../src/core/schema-inference";
import { payloadMetadata } from "../../src/storage/payload-store";
import { offloadStream, PART_BYTES } from "../../src/features/offload/stream-offload";
import { readSlice } from "../../src/storage/payload-reader";

const TEXTS = [
  '{"a":1,"b":[true,false,null],"c":{"d":"x\\"y","e":-1.5e+3},"f":[]}',
  '[{"id":1,"email":"a@b"},{"id":2},{"id":"3"},[],{}]',
  '{"\\u00e9\\ud83d\\ude00":"\\u0041\\n","big":12345678901234567890,"s":"\\\\"}',
  '  "just a string"  ',
  "42",
];

function schemaByChunks(text: string, size: number): unknown {
  const builder = new SchemaBuilder();
  const tokenizer = new JsonStreamTokenizer(builder);
  for (let at = 0; at < text.length; at += size) tokenizer.write(text.slice(at, at + size));
  tokenizer.end();
  return builder.schema();
}

describe("JsonStreamTokenizer", () => {
  it.each([
    [
      "inside an array, at an element",
      '{"x":1}, [2, 3], "four"] trailing',
      { container: "array", at: "value" },
      ["object", "array", "string"],
    ],
    [
      "inside an object, at a member value",
      '[1], "k": {"a": 1} } trailing',
      { container: "object", at: "value" },
      ["array", "object"],
    ],
    [
      "inside an object, after a value",
      ', "k": 2, "l": null } trailing',
      { container: "object", at: "after-value" },
      ["number", "null"],
    ],
    ["just after an opening bracket", ' "k": "v" } trailing', { container: "object", at: "start" }, ["string"]],
  ] as const)("resumes %s, and ends with that container", (_label, text, resume, kinds) => {
    const seen: string[] = [];
    let depth = 0;
    let closed = false;
    const tokenizer: JsonStreamTokenizer = new JsonStreamTokenizer(
      {
        startObject: () => (depth++ === 0 ? seen.push("object") : 0),
        startArray: () => (depth++ === 0 ? seen.push("array") : 0),
        endObject: () => {
          if (depth-- !== 0) return;
          closed = true;
          tokenizer.stop();
        },
        endArray: () => {
          if (depth-- !== 0) return;
          closed = true;
          tokenizer.stop();
        },
        scalar: (type) => (depth === 0 ? seen.push(type) : 0),
      },
      resume,
    );
    for (const char of text) tokenizer.write(char); // stopped: " trailing" is never read
    expect(seen).toEqual(kinds);
    expect(closed).toBe(true);
  });

  it.each(TEXTS)("gives the schema of JSON.parse for %s, in chunks of every size", (text) => {
    const expected = inferSchema(JSON.parse(text));
    for (let size = 1; size <= text.length; size++) expect(schemaByChunks(text, size)).toEqual(expected);
  });

  it("collects a string only when asked, across chunk and escape boundaries", () => {
    const text = '{"skip":"aaaa","keep":"h\\u00e9llo \\"w\\""}';
    for (let size = 1; size <= text.length; size++) {
      const kept: string[] = [];
      let lastKey = "";
      const tokenizer = new JsonStreamTokenizer({
        key: (name) => (lastKey = name),
        wantString: () => lastKey === "keep",
        stringEnd: (value) => kept.push(value ?? ""),
      });
      for (let at = 0; at < text.length; at += size) tokenizer.write(text.slice(at, at + size));
      tokenizer.end();
      expect(kept).toEqual(['héllo "w"']);
    }
  });

  it.each([['{"a":1'], ['{"a" 1}'], ["[1,]"], ["{}x"], ['"\\x"'], ["tru"], ["[01]"]])("rejects %s", (text) => {
    expect(() => {
      const tokenizer = new JsonStreamTokenizer({});
      tokenizer.write(text);
      tokenizer.end();
    }).toThrow(JsonStreamError);
  });
});

function streamOf(text: string, chunkChars: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= text.length) return controller.close();
      controller.enqueue(encoder.encode(text.slice(at, at + chunkChars)));
      at += chunkChars;
    },
  });
}

describe("offloadStream", () => {
  const owner = { principal: "anonymous", session: "s1", scope: "session" } as const;
  const items = Array.from({ length: 180_000 }, (_, id) => ({
    id,
    name: `item ${id} ü`,
    tags: ["a"],
    ...(id % 2 ? { odd: true } : {}),
  }));
  const payload = JSON.stringify({ items, total: items.length });

  it.each([
    [
      "structuredContent",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":${payload}}}`,
      true,
    ],
    [
      "a text block",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":${JSON.stringify(payload)}}]}}`,
      false,
    ],
    [
      "the text copy an SDK server sends first",
      `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":${JSON.stringify(payload)}}],"structuredContent":${payload}}}`,
      true,
    ],
  ])("stores %s in parts, with preview and schema", async (_label, response, structured) => {
    expect(new TextEncoder().encode(payload).length).toBeGreaterThan(PART_BYTES);
    const id = crypto.randomUUID().replace(/-/g, "");
    const stored = await offloadStream(
      streamOf(response, 65_536 + 7),
      env.PAYLOADS,
      id,
      (contentType) => payloadMetadata(owner, { upstream: "u", tool: "u___t", size: -1, contentType, ttlSeconds: 60 }),
      100,
    );
    expect(stored).toMatchObject({
      structured,
      contentType: "application/json",
      preview: payload.slice(0, 100),
      size: new TextEncoder().encode(payload).length,
    });
    expect(stored.schema).toEqual(inferSchema(JSON.parse(payload)));
    const object = await env.PAYLOADS.get(`payloads/${id}`);
    expect(await object!.text()).toBe(payload);
  });

  it("keeps a surrogate pair whose two escapes arrive in different chunks", async () => {
    const emoji = "\u{1F600}";
    const rows = Array.from({ length: 40_000 }, (_, id) => ({ id, mood: `${emoji}${emoji} ${id}` }));
    const payload = JSON.stringify({ rows });
    // The upstream escapes the pair (as JSON may): each chunk boundary between the escapes splits the pair.
    const literal = JSON.stringify(payload).replaceAll(emoji, "\\ud83d\\ude00");
    const response = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":${literal}}]}}`;
    const id = crypto.randomUUID().replace(/-/g, "");
    await offloadStream(
      streamOf(response, 997),
      env.PAYLOADS,
      id,
      (contentType) => payloadMetadata(owner, { upstream: "u", tool: "u___t", size: -1, contentType, ttlSeconds: 60 }),
      100,
    );
    const stored = await (await env.PAYLOADS.get(`payloads/${id}`))!.text();
    expect(stored).not.toContain("\uFFFD");
    expect(stored).toBe(payload);
    // The index written on the way counts the same bytes: a read near the end lands on its row.
    const last = await readSlice(env.PAYLOADS, id, owner, {
      mode: "json",
      pointer: "/rows/39999",
      offset: 0,
      limit: 50,
    });
    expect(last.ok && last.slice).toMatchObject({ value: { id: 39999, mood: `${emoji}${emoji} 39999` } });
  });

  it("refuses an answer without a single large payload, and leaves nothing behind", async () => {
    const id = crypto.randomUUID().replace(/-/g, "");
    const response = `{"jsonrpc":"2.0","id":1,"result":{"content":[${Array.from({ length: 2000 }, () => '{"type":"text","text":"small"}').join(",")}]}}`;
    await expect(
      offloadStream(
        streamOf(response, 1000),
        env.PAYLOADS,
        id,
        (contentType) => payloadMetadata(owner, { upstream: "u", tool: "t", size: -1, contentType, ttlSeconds: 60 }),
        10,
      ),
    ).rejects.toThrow(/no single large payload/);
    expect(await env.PAYLOADS.head(`payloads/${id}`)).toBeNull();
  });
});
