/**
 * Pointer reads through the payload index, inside workerd with the real R2 binding:
 * a read fetches a bounded number of bytes whatever the payload's size (counted by
 * wrapping the R2 binding), and answers what the reader that parsed the whole payload
 * answered, on a table of pointers into a payload built to hold every kind of value.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { encodeJson } from "../../src/core/base64url";
import { child, escapeToken, parsePointer } from "../../src/core/json-pointer";
import { readSlice, sliceRequest, type SliceRequest } from "../../src/storage/payload-reader";
import { indexKey, indexPayloadText, putPayloadIndex } from "../../src/storage/payload-index";
import { payloadMetadata, putPayload } from "../../src/storage/payload-store";
import { initialize, request, type Json } from "../helpers/gateway";
import { hugeItem } from "../fixtures/raw-upstream-bytes";

const OWNER = { principal: "p", session: "s", scope: "session" } as const;

/** The R2 binding, counting the bytes its `get`s return. */
function countingBucket(bucket: R2Bucket): { bucket: R2Bucket; fetched: () => number; reset: () => void } {
  let fetched = 0;
  const counting = new Proxy(bucket, {
    get(target, property) {
      if (property === "get") {
        return async (key: string, options?: R2GetOptions) => {
          const object = await target.get(key, options);
          if (object && "body" in object) {
            const range = options?.range as { length?: number } | undefined;
            fetched += range?.length !== undefined ? Math.min(range.length, object.size) : object.size;
          }
          return object;
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { bucket: counting, fetched: () => fetched, reset: () => (fetched = 0) };
}

// ---- the reader this replaced, kept as the oracle: it parsed the whole payload ----------
const MAX_SLICE_BYTES = 64 * 1024;
const size = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
function fitItems(items: readonly unknown[], offset: number, limit: number): unknown[] {
  let count = Math.min(limit, items.length - offset);
  let slice = items.slice(offset, offset + count);
  while (count > 1 && size(slice) > MAX_SLICE_BYTES) {
    count = Math.max(1, Math.floor(count / 2));
    slice = items.slice(offset, offset + count);
  }
  return slice;
}
function oldSlice(
  id: string,
  root: unknown,
  request: Extract<SliceRequest, { mode: "json" }>,
): Record<string, unknown> | undefined {
  let value = root;
  for (const token of parsePointer(request.pointer)) {
    const next = child(value, token);
    if (!next.found) return undefined;
    value = next.value;
  }
  const base = { id, pointer: request.pointer };
  const next = (offset: number) => encodeJson({ pointer: request.pointer, offset, limit: request.limit });
  if (Array.isArray(value)) {
    const items = request.offset < value.length ? fitItems(value, request.offset, request.limit) : [];
    const end = request.offset + items.length;
    if (items.length === 1 && size(items) > MAX_SLICE_BYTES) {
      return {
        ...base,
        type: "array",
        total: value.length,
        offset: request.offset,
        count: 0,
        items: [],
        note: `item ${request.offset} is larger than ${MAX_SLICE_BYTES} bytes; read inside it with the pointer "${request.pointer}/${request.offset}"`,
        ...(end < value.length ? { nextCursor: next(end) } : {}),
      };
    }
    return {
      ...base,
      type: "array",
      total: value.length,
      offset: request.offset,
      count: items.length,
      items,
      ...(end < value.length ? { nextCursor: next(end) } : {}),
    };
  }
  if (typeof value === "string") {
    const chars = Math.min(request.limit * 100, MAX_SLICE_BYTES / 4);
    const end = Math.min(value.length, request.offset + chars);
    return {
      ...base,
      type: "string",
      total: value.length,
      offset: request.offset,
      value: value.slice(request.offset, end),
      ...(end < value.length ? { nextCursor: next(end) } : {}),
    };
  }
  if (typeof value === "object" && value !== null && size(value) > MAX_SLICE_BYTES) {
    const keys = Object.keys(value);
    const page = keys.slice(request.offset, request.offset + request.limit);
    const end = request.offset + page.length;
    return {
      ...base,
      type: "object",
      total: keys.length,
      offset: request.offset,
      keys: page,
      note: `this object is larger than ${MAX_SLICE_BYTES} bytes; read a member with a longer pointer, e.g. "${request.pointer}/${escapeToken(page[0] ?? "")}"`,
      ...(end < keys.length ? { nextCursor: next(end) } : {}),
    };
  }
  return { ...base, type: value === null ? "null" : Array.isArray(value) ? "array" : typeof value, value };
}
// -------------------------------------------------------------------------------------------

/** About 8 MB: long arrays of small records, large elements, a long string of surrogate pairs, maps, integer-like keys. */
function tablePayload(): unknown {
  return {
    meta: { name: "report", tags: ["a", "b"], note: "n".repeat(50_000) },
    items: Array.from({ length: 40_000 }, (_, i) => ({
      id: i,
      name: `item ${i} — ünïcödé`,
      tags: [`t${i % 7}`],
      nested: { depth: [i, [i + 1, { deep: `v${i}` }]] },
    })),
    blob: "é😀".repeat(200_000),
    map: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, { v: i }])),
    wide: { b: "b".repeat(100_000), "10": "a".repeat(100_000), "2": "c".repeat(100_000) },
    hugeItems: ["y".repeat(70_000), 1, { two: 2 }],
    items2: Array.from({ length: 30 }, (_, i) =>
      i === 10 ? { pad: "z".repeat(300_000) } : { i, pad: "p".repeat(40_000) },
    ),
    "a/b~c": { "": [null, true, false, -0.5e3] },
    // An object too large to send whose first key needs escaping in a pointer (the note suggests one).
    escapes: { "x/y~z": "q".repeat(70_000), plain: 1 },
    total: 40_000,
  };
}

const TABLE: [string, Record<string, unknown>][] = [
  ["", {}],
  ["/items", {}],
  ["/items", { offset: 39_990, limit: 50 }],
  ["/items", { offset: 40_000 }],
  ["/items", { offset: 20_000, limit: 1000 }],
  ["/items/39999", {}],
  ["/items/39999/nested/depth/1/1/deep", {}],
  ["/items/12345/name", {}],
  ["/items/40000", {}],
  ["/items/01", {}],
  ["/meta", {}],
  ["/meta/note", { offset: 100, limit: 3 }],
  ["/blob", {}],
  ["/blob", { offset: 300_001, limit: 1000 }],
  ["/blob", { offset: 599_990 }],
  ["/map", { limit: 100 }],
  ["/map", { offset: 19_950 }],
  ["/map/k19999", {}],
  ["/map/k19999/v", {}],
  ["/map/nope", {}],
  ["/wide", {}],
  ["/wide/10", { offset: 5, limit: 2 }],
  ["/hugeItems", {}],
  ["/hugeItems", { offset: 1 }],
  ["/items2", {}],
  ["/items2", { offset: 9, limit: 3 }],
  ["/items2/10/pad", { offset: 250_000 }],
  ["/items2/11", {}],
  ["/a~1b~0c/", {}],
  ["/a~1b~0c//3", {}],
  ["/escapes", {}],
  ["/total", {}],
];

async function stored(text: string, withIndex: boolean): Promise<string> {
  const id = crypto.randomUUID().replaceAll("-", "");
  const bytes = new TextEncoder().encode(text).length;
  await putPayload(
    env.PAYLOADS,
    id,
    text,
    payloadMetadata(OWNER, {
      upstream: "u",
      tool: "u___t",
      size: bytes,
      contentType: "application/json",
      ttlSeconds: 600,
    }),
  );
  if (withIndex) await putPayloadIndex(env.PAYLOADS, id, indexPayloadText(text, bytes)!);
  return id;
}

describe("pointer reads through the index", () => {
  it.each([
    ["compact", (value: unknown) => JSON.stringify(value)],
    ["pretty-printed", (value: unknown) => JSON.stringify(value, null, 1)],
  ])(
    "answer as the whole-payload reader did, fetching a bounded number of bytes (%s)",
    { timeout: 120_000 },
    async (_label, serialise) => {
      const payload = tablePayload();
      const text = serialise(payload);
      const totalBytes = new TextEncoder().encode(text).length;
      expect(totalBytes).toBeGreaterThan(6 * 1024 * 1024);
      const id = await stored(text, true);
      const counting = countingBucket(env.PAYLOADS);
      for (const [pointer, args] of TABLE) {
        const request = sliceRequest({ pointer, ...args });
        if (typeof request === "string" || request.mode !== "json") throw new Error(request as string);
        counting.reset();
        const answer = await readSlice(counting.bucket, id, OWNER, request);
        const expected = oldSlice(id, payload, request);
        if (expected === undefined) expect(answer, pointer).toMatchObject({ ok: false, reason: "bad-request" });
        else {
          expect(answer.ok, `${pointer} ${JSON.stringify(answer).slice(0, 300)}`).toBe(true);
          expect((answer as { slice: unknown }).slice, `${pointer} ${JSON.stringify(args)}`).toEqual(expected);
        }
        // A bounded read, whatever the pointer: never the whole payload (the old reader fetched it all).
        expect(counting.fetched(), pointer).toBeLessThan(Math.min(totalBytes / 2, 4.5 * 1024 * 1024));
      }
      // A deep element of a large array costs a few windows, not megabytes.
      counting.reset();
      const deep = await readSlice(counting.bucket, id, OWNER, {
        mode: "json",
        pointer: "/items/39999/nested/depth/1/1/deep",
        offset: 0,
        limit: 50,
      });
      expect(deep).toMatchObject({ ok: true, slice: { value: "v39999" } });
      expect(counting.fetched()).toBeLessThan(200 * 1024);
    },
  );

  it("indexes a payload stored without an index on its first pointer read", async () => {
    const payload = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `n${i}` })) };
    const id = await stored(JSON.stringify(payload), false);
    expect(await env.PAYLOADS.head(indexKey(id))).toBeNull();
    const answer = await readSlice(env.PAYLOADS, id, OWNER, {
      mode: "json",
      pointer: "/items/19999",
      offset: 0,
      limit: 50,
    });
    expect(answer).toMatchObject({ ok: true, slice: { value: { id: 19999, name: "n19999" } } });
    expect(await env.PAYLOADS.head(indexKey(id))).not.toBeNull();
  });
});

describe("indexes written at offload time", () => {
  const { raw } = inject("fixtureUrls");
  // 6 MiB is offloaded from memory, 12 MiB while it streams (above 8 MiB).
  it.each([6, 12])(
    "lets a read of a deep element of a %i MiB payload fetch a bounded number of bytes",
    { timeout: 120_000 },
    async (mb) => {
      const counting = countingBucket(env.PAYLOADS);
      const vars = {
        UPSTREAMS: JSON.stringify([{ name: "raw", url: raw, timeoutMs: 60_000 }]),
        PAYLOADS: counting.bucket,
      };
      const { session } = await initialize("/mcp", { vars });
      const answer = await request("/mcp", session, "tools/call", { name: "raw___huge", arguments: { mb } }, { vars });
      const envelope = JSON.parse(answer.result.content[0].text) as Json;
      expect(await env.PAYLOADS.head(indexKey(envelope.payloadId))).not.toBeNull();
      const last = Math.floor((mb * 1024 * 1024) / 100) - 1;
      counting.reset();
      const read = await request(
        "/mcp",
        session,
        "tools/call",
        { name: "sys___read_payload", arguments: { id: envelope.payloadId, pointer: `/items/${last}` } },
        { vars },
      );
      expect(read.result.structuredContent.value).toEqual(JSON.parse(hugeItem(last)));
      // The index (a few KB) and a window or two of the payload, not its megabytes.
      expect(counting.fetched()).toBeLessThan(256 * 1024);
      expect(read.result._meta["mcp-edge-gateway/read"].fetchedBytes).toBeLessThan(64 * 1024);
      const page = await request(
        "/mcp",
        session,
        "tools/call",
        { name: "sys___read_payload", arguments: { id: envelope.payloadId, pointer: "/items", offset: last - 1 } },
        { vars },
      );
      expect(page.result.structuredContent).toMatchObject({
        total: last + 1,
        count: 2,
        items: [JSON.parse(hugeItem(last - 1)), JSON.parse(hugeItem(last))],
      });
    },
  );
});
