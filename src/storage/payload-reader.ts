/**
 * Reading an offloaded payload back in bounded slices: by JSON Pointer with an item
 * (or character) window, or by byte range, each answer with a `nextCursor` for the
 * next slice. Shared by sys___read_payload and resources/read on payload URIs.
 */
import { textSlices } from "../core/text-slices";
import { decodeJson, encodeJson } from "../core/base64url";
import { isObject } from "../core/jsonrpc";
import { pointerProblem } from "../core/json-pointer";
import { MAX_SLICE_BYTES } from "./json-slice";
import { loadPayloadIndex, PayloadIndexer, putPayloadIndex, type PayloadIndex } from "./payload-index";
import { ScanLimitError, type ScanSource } from "./payload-scan";
import { findPayload, PAYLOAD_KEY_PREFIX, payloadNotFoundMessage, readPayload } from "./payload-store";
import type { PayloadCaller } from "./payload-store";
import { readByPointer, viewOf, type IndexView } from "./pointer-read";

export { MAX_SLICE_BYTES };
export const DEFAULT_ITEM_LIMIT = 50;
export const MAX_ITEM_LIMIT = 1_000;
export const DEFAULT_BYTE_LENGTH = 16 * 1024;
/** The most one pointer read fetches from R2, whatever the payload's size. */
export const MAX_SCANNED_BYTES_PER_READ = 4 * 1024 * 1024;
/** A payload stored without an index (before indexes existed) gets one on its first pointer read, up to this size. */
export const MAX_LATE_INDEXED_PAYLOAD_BYTES = 32 * 1024 * 1024;
/** Parsed indexes kept between reads (each at most MAX_INDEX_BYTES of JSON). */
const INDEX_CACHE_ENTRIES = 8;

export type SliceRequest =
  | { readonly mode: "json"; readonly pointer: string; readonly offset: number; readonly limit: number }
  | { readonly mode: "bytes"; readonly byteOffset: number; readonly byteLength: number };

export type SliceAnswer =
  | { readonly ok: true; readonly slice: Record<string, unknown>; readonly stats?: ReadStats }
  | { readonly ok: false; readonly reason: "not-found" | "bad-request"; readonly message: string };

/** What a pointer read fetched from R2 (byte ranges of the payload, not counting its index). */
export type ReadStats = { readonly fetchedBytes: number; readonly ranges: number };

function integer(value: unknown, name: string, min: number, max: number, fallback: number): number | string {
  if (value === undefined) return fallback;
  const number = typeof value === "string" && value !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < min || number > max)
    return `${name} must be an integer from ${min} to ${max}`;
  return number;
}

/** Reads the arguments of a slice (tool arguments or URI query parameters); a cursor replaces them. */
export function sliceRequest(args: Record<string, unknown>): SliceRequest | string {
  if (typeof args["cursor"] === "string") {
    const decoded = decodeJson(args["cursor"]);
    if (!isObject(decoded)) return "cursor was not issued by the gateway";
    return sliceRequest(decoded);
  }
  if (args["byteOffset"] !== undefined || args["byteLength"] !== undefined) {
    const byteOffset = integer(args["byteOffset"], "byteOffset", 0, Number.MAX_SAFE_INTEGER, 0);
    const byteLength = integer(args["byteLength"], "byteLength", 1, MAX_SLICE_BYTES, DEFAULT_BYTE_LENGTH);
    if (typeof byteOffset === "string") return byteOffset;
    if (typeof byteLength === "string") return byteLength;
    return { mode: "bytes", byteOffset, byteLength };
  }
  const pointer = args["pointer"] ?? "";
  const problem = pointerProblem(pointer);
  if (problem) return `pointer ${problem}`;
  const offset = integer(args["offset"], "offset", 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = integer(args["limit"], "limit", 1, MAX_ITEM_LIMIT, DEFAULT_ITEM_LIMIT);
  if (typeof offset === "string") return offset;
  if (typeof limit === "string") return limit;
  return { mode: "json", pointer: pointer as string, offset, limit };
}

const indexCache = new Map<string, IndexView>();

/** Indexes a payload stored without an index by streaming it once, and stores the index. */
async function lateIndex(bucket: R2Bucket, id: string, size: number): Promise<PayloadIndex | undefined> {
  const object = await readPayload(bucket, id);
  if (!object) return undefined;
  const indexer = new PayloadIndexer();
  const reader = textSlices(object.body);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    indexer.write(value);
  }
  const index = indexer.end(size);
  if (index) await putPayloadIndex(bucket, id, index);
  return index;
}

async function indexView(bucket: R2Bucket, id: string, size: number): Promise<IndexView | "unindexed" | "not-json"> {
  const cached = indexCache.get(id);
  if (cached) return cached;
  let index = await loadPayloadIndex(bucket, id);
  if (!index) {
    if (size > MAX_LATE_INDEXED_PAYLOAD_BYTES) return "unindexed";
    index = await lateIndex(bucket, id, size);
    if (!index) return "not-json";
  }
  const view = viewOf(index);
  if (indexCache.size >= INDEX_CACHE_ENTRIES) indexCache.delete(indexCache.keys().next().value!);
  indexCache.set(id, view);
  return view;
}

/** The most bytes one character takes in UTF-8. */
const MAX_UTF8_CHARACTER_BYTES = 4;

/** How many leading bytes of `bytes` end on a character boundary (a cut multi-byte sequence is left out). */
function completeUtf8Length(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: keep looking for the lead
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** Reads one slice of payload `id` for `caller`. */
export async function readSlice(
  bucket: R2Bucket,
  id: string,
  caller: PayloadCaller,
  request: SliceRequest,
): Promise<SliceAnswer> {
  const found = await findPayload(bucket, id, { owner: caller });
  if (found.state !== "found") return { ok: false, reason: "not-found", message: payloadNotFoundMessage(id, caller) };
  const { metadata } = found;
  if (request.mode === "bytes") {
    if (request.byteOffset >= metadata.size)
      return { ok: true, slice: { id, size: metadata.size, byteOffset: request.byteOffset, byteLength: 0, text: "" } };
    // At least one whole character, however few bytes were asked: a slice of none would name the same offset as its next.
    const asked = Math.min(Math.max(request.byteLength, MAX_UTF8_CHARACTER_BYTES), metadata.size - request.byteOffset);
    const object = await readPayload(bucket, id, { offset: request.byteOffset, length: asked });
    const bytes = object ? new Uint8Array(await object.arrayBuffer()) : new Uint8Array(0);
    // Whole characters only: a character cut by the range is left to the next slice.
    const length =
      bytes.length === asked && request.byteOffset + asked < metadata.size ? completeUtf8Length(bytes) : bytes.length;
    const text = new TextDecoder().decode(bytes.subarray(0, length));
    const end = request.byteOffset + length;
    return {
      ok: true,
      slice: {
        id,
        size: metadata.size,
        byteOffset: request.byteOffset,
        byteLength: length,
        text,
        ...(end < metadata.size ? { nextCursor: encodeJson({ byteOffset: end, byteLength: request.byteLength }) } : {}),
      },
    };
  }
  if (!metadata.contentType.startsWith("application/json"))
    return {
      ok: false,
      reason: "bad-request",
      message: `payload ${id} is ${metadata.contentType}, not JSON; read it with byteOffset/byteLength`,
    };
  const byBytes = `read it with byteOffset/byteLength (up to ${MAX_SLICE_BYTES} bytes a slice)`;
  const view = await indexView(bucket, id, metadata.size);
  if (view === "unindexed")
    return {
      ok: false,
      reason: "bad-request",
      message: `payload ${id} is ${metadata.size} bytes and was stored without an index, too large to address by pointer; ${byBytes}`,
    };
  if (view === "not-json")
    return { ok: false, reason: "bad-request", message: `payload ${id} is not valid JSON; ${byBytes}` };
  const source: ScanSource = {
    bucket,
    key: PAYLOAD_KEY_PREFIX + id,
    size: metadata.size,
    budget: { fetched: 0, ranges: 0, limit: MAX_SCANNED_BYTES_PER_READ },
  };
  try {
    const answer = await readByPointer(source, view, id, request);
    const stats = { fetchedBytes: source.budget.fetched, ranges: source.budget.ranges };
    if (answer.ok) return { ok: true, slice: answer.slice, stats };
    if (answer.reason === "missing")
      return {
        ok: false,
        reason: "bad-request",
        message: `payload ${id} has nothing at ${request.pointer}; its payloadSchema shows what is there`,
      };
    return {
      ok: false,
      reason: "bad-request",
      message: `the value at "${answer.at}" in payload ${id} is too large to read by pointer without an index entry; read inside it with a longer pointer, or ${byBytes}`,
    };
  } catch (error) {
    if (!(error instanceof ScanLimitError)) throw error;
    return {
      ok: false,
      reason: "bad-request",
      message: `reading "${request.pointer}" of payload ${id} would fetch more than ${MAX_SCANNED_BYTES_PER_READ} bytes; ${byBytes}`,
    };
  }
}
