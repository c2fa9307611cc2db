/**
 * Reading an offloaded payload back in bounded slices: by JSON Pointer with an item
 * (or character) window, or by byte range, each answer with a `nextCursor` for the
 * next slice. Shared by sys___read_payload and resources/read on payload URIs.
 */
import { decodeJson, encodeJson } from "../core/base64url";
import { isObject } from "../core/jsonrpc";
import { child, parsePointer, pointerProblem } from "../policy/json-pointer";
import { findPayload, readPayload, type PayloadOwner } from "./payload-store";

/** Largest slice an answer carries. */
export const MAX_SLICE_BYTES = 64 * 1024;
export const DEFAULT_ITEM_LIMIT = 50;
export const MAX_ITEM_LIMIT = 1_000;
export const DEFAULT_BYTE_LENGTH = 16 * 1024;
/** Payloads up to this size can be addressed by pointer (they are parsed); larger ones by byte range. */
export const MAX_PARSED_PAYLOAD_BYTES = 32 * 1024 * 1024;
const PARSED_CACHE_ENTRIES = 2;
/** Only small payloads stay parsed between reads: parsed JSON takes several times its size. */
const MAX_CACHED_PAYLOAD_BYTES = 4 * 1024 * 1024;

export type SliceRequest =
  | { readonly mode: "json"; readonly pointer: string; readonly offset: number; readonly limit: number }
  | { readonly mode: "bytes"; readonly byteOffset: number; readonly byteLength: number };

export type SliceAnswer = { readonly ok: true; readonly slice: Record<string, unknown> } | { readonly ok: false; readonly reason: "not-found" | "bad-request"; readonly message: string };

function integer(value: unknown, name: string, min: number, max: number, fallback: number): number | string {
  if (value === undefined) return fallback;
  const number = typeof value === "string" && value !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < min || number > max) return `${name} must be an integer from ${min} to ${max}`;
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

const parsedCache = new Map<string, Promise<unknown>>();

function parsedPayload(bucket: R2Bucket, id: string, size: number): Promise<unknown> {
  let parsed = parsedCache.get(id);
  if (!parsed) {
    parsed = readPayload(bucket, id).then(async (object) => (object ? JSON.parse(await object.text()) : undefined));
    if (size > MAX_CACHED_PAYLOAD_BYTES) return parsed;
    parsed.catch(() => parsedCache.delete(id));
    if (parsedCache.size >= PARSED_CACHE_ENTRIES) parsedCache.delete(parsedCache.keys().next().value!);
    parsedCache.set(id, parsed);
  }
  return parsed;
}

function size(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/** Array items from `offset`, as many as `limit` allows and fit in `MAX_SLICE_BYTES` (always at least one). */
function fitItems(items: readonly unknown[], offset: number, limit: number): unknown[] {
  let count = Math.min(limit, items.length - offset);
  let slice = items.slice(offset, offset + count);
  while (count > 1 && size(slice) > MAX_SLICE_BYTES) {
    count = Math.max(1, Math.floor(count / 2));
    slice = items.slice(offset, offset + count);
  }
  return slice;
}

function jsonSlice(id: string, value: unknown, request: Extract<SliceRequest, { mode: "json" }>): Record<string, unknown> {
  const base = { id, pointer: request.pointer };
  const next = (offset: number) => encodeJson({ pointer: request.pointer, offset, limit: request.limit });
  if (Array.isArray(value)) {
    const items = request.offset < value.length ? fitItems(value, request.offset, request.limit) : [];
    const end = request.offset + items.length;
    if (items.length === 1 && size(items) > MAX_SLICE_BYTES) {
      // One item larger than an answer may be: say where it is instead of sending it.
      return { ...base, type: "array", total: value.length, offset: request.offset, count: 0, items: [], note: `item ${request.offset} is larger than ${MAX_SLICE_BYTES} bytes; read inside it with the pointer "${request.pointer}/${request.offset}"`, ...(end < value.length ? { nextCursor: next(end) } : {}) };
    }
    return { ...base, type: "array", total: value.length, offset: request.offset, count: items.length, items, ...(end < value.length ? { nextCursor: next(end) } : {}) };
  }
  if (typeof value === "string") {
    const chars = Math.min(request.limit * 100, MAX_SLICE_BYTES / 4);
    const end = Math.min(value.length, request.offset + chars);
    return { ...base, type: "string", total: value.length, offset: request.offset, value: value.slice(request.offset, end), ...(end < value.length ? { nextCursor: next(end) } : {}) };
  }
  if (isObject(value) && size(value) > MAX_SLICE_BYTES) {
    const keys = Object.keys(value);
    const page = keys.slice(request.offset, request.offset + request.limit);
    const end = request.offset + page.length;
    return {
      ...base,
      type: "object",
      total: keys.length,
      offset: request.offset,
      keys: page,
      note: `this object is larger than ${MAX_SLICE_BYTES} bytes; read a member with a longer pointer, e.g. "${request.pointer}/${page[0] ?? ""}"`,
      ...(end < keys.length ? { nextCursor: next(end) } : {}),
    };
  }
  return { ...base, type: value === null ? "null" : Array.isArray(value) ? "array" : typeof value, value };
}

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

/** Reads one slice of payload `id` for `owner` (or for a signed URL's bearer). */
export async function readSlice(bucket: R2Bucket, id: string, owner: PayloadOwner, request: SliceRequest): Promise<SliceAnswer> {
  const found = await findPayload(bucket, id, { owner });
  if (found.state !== "found") return { ok: false, reason: "not-found", message: `no payload ${id} for this session (it may have expired)` };
  const { metadata } = found;
  if (request.mode === "bytes") {
    if (request.byteOffset >= metadata.size) return { ok: true, slice: { id, size: metadata.size, byteOffset: request.byteOffset, byteLength: 0, text: "" } };
    const asked = Math.min(request.byteLength, metadata.size - request.byteOffset);
    const object = await readPayload(bucket, id, { offset: request.byteOffset, length: asked });
    const bytes = object ? new Uint8Array(await object.arrayBuffer()) : new Uint8Array(0);
    // Whole characters only: a character cut by the range is left to the next slice.
    const length = bytes.length === asked && request.byteOffset + asked < metadata.size ? completeUtf8Length(bytes) : bytes.length;
    const text = new TextDecoder().decode(bytes.subarray(0, length));
    const end = request.byteOffset + length;
    return {
      ok: true,
      slice: { id, size: metadata.size, byteOffset: request.byteOffset, byteLength: length, text, ...(end < metadata.size ? { nextCursor: encodeJson({ byteOffset: end, byteLength: request.byteLength }) } : {}) },
    };
  }
  if (!metadata.contentType.startsWith("application/json")) return { ok: false, reason: "bad-request", message: `payload ${id} is ${metadata.contentType}, not JSON; read it with byteOffset/byteLength` };
  if (metadata.size > MAX_PARSED_PAYLOAD_BYTES) {
    return { ok: false, reason: "bad-request", message: `payload ${id} is ${metadata.size} bytes, too large to address by pointer here; read it with byteOffset/byteLength (up to ${MAX_SLICE_BYTES} bytes a slice)` };
  }
  let value = await parsedPayload(bucket, id, metadata.size);
  for (const token of parsePointer(request.pointer)) {
    const next = child(value, token);
    if (!next.found) return { ok: false, reason: "bad-request", message: `payload ${id} has nothing at ${request.pointer}; its payloadSchema shows what is there` };
    value = next.value;
  }
  return { ok: true, slice: jsonSlice(id, value, request) };
}
