/**
 * The answer of a pointer read for a value at hand (parsed): an array's items in a
 * window, a string's characters, a large object's keys, or the value itself, never
 * more than `MAX_SLICE_BYTES`. The pointer reader parses only small values and
 * computes the same answers for large ones from the payload's index.
 */
import { encodeJson } from "../core/base64url";
import { isObject } from "../core/jsonrpc";
import { escapeToken } from "../core/json-pointer";

/** Largest slice an answer carries. */
export const MAX_SLICE_BYTES = 64 * 1024;
/** Characters of a string per item of `limit`, and the most one answer carries. */
export const STRING_CHARS_PER_ITEM = 100;
export const MAX_STRING_CHARS = MAX_SLICE_BYTES / 4;

export type JsonSliceRequest = { readonly pointer: string; readonly offset: number; readonly limit: number };

/** UTF-8 bytes of a value's JSON text. */
export function jsonSize(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

/** How many items of an array slice to send, given the JSON size of the first ones (`sizes` may be shorter than `wanted`: the rest are known to overflow). */
export function fittedCount(wanted: number, sizes: readonly number[]): number {
  let prefix = 2;
  const prefixSize: number[] = [2];
  for (const size of sizes) {
    prefix += size + (prefixSize.length > 1 ? 1 : 0);
    prefixSize.push(prefix);
  }
  const sizeOf = (count: number) => (count < prefixSize.length ? prefixSize[count]! : Number.POSITIVE_INFINITY);
  let count = wanted;
  while (count > 1 && sizeOf(count) > MAX_SLICE_BYTES) count = Math.max(1, Math.floor(count / 2));
  return count;
}

/** The cursor of the next slice of the same value. */
export function nextCursor(request: JsonSliceRequest, offset: number): string {
  return encodeJson({ pointer: request.pointer, offset, limit: request.limit });
}

/** An array slice: `items` from `request.offset` of an array of `total`; `oversized` when the first item alone is too large to send. */
export function arraySlice(
  id: string,
  request: JsonSliceRequest,
  total: number,
  items: readonly unknown[],
  oversized: boolean,
): Record<string, unknown> {
  const base = { id, pointer: request.pointer, type: "array", total, offset: request.offset };
  if (oversized) {
    // One item larger than an answer may be: say where it is instead of sending it.
    const end = request.offset + 1;
    return {
      ...base,
      count: 0,
      items: [],
      note: `item ${request.offset} is larger than ${MAX_SLICE_BYTES} bytes; read inside it with the pointer "${request.pointer}/${request.offset}"`,
      ...(end < total ? { nextCursor: nextCursor(request, end) } : {}),
    };
  }
  const end = request.offset + items.length;
  return { ...base, count: items.length, items, ...(end < total ? { nextCursor: nextCursor(request, end) } : {}) };
}

/** A string slice of `request.limit * STRING_CHARS_PER_ITEM` characters (at most `MAX_STRING_CHARS`). */
export function stringChars(request: JsonSliceRequest): number {
  return Math.min(request.limit * STRING_CHARS_PER_ITEM, MAX_STRING_CHARS);
}

export function stringSlice(
  id: string,
  request: JsonSliceRequest,
  total: number,
  value: string,
): Record<string, unknown> {
  const end = request.offset + value.length;
  return {
    id,
    pointer: request.pointer,
    type: "string",
    total,
    offset: request.offset,
    value,
    ...(end < total ? { nextCursor: nextCursor(request, end) } : {}),
  };
}

/** The keys of an object too large to send, one page of them. */
export function keysSlice(
  id: string,
  request: JsonSliceRequest,
  total: number,
  page: readonly string[],
): Record<string, unknown> {
  const end = request.offset + page.length;
  return {
    id,
    pointer: request.pointer,
    type: "object",
    total,
    offset: request.offset,
    keys: page,
    note: `this object is larger than ${MAX_SLICE_BYTES} bytes; read a member with a longer pointer, e.g. "${request.pointer}/${escapeToken(page[0] ?? "")}"`,
    ...(end < total ? { nextCursor: nextCursor(request, end) } : {}),
  };
}

/** The slice of a parsed value. */
export function jsonSlice(id: string, value: unknown, request: JsonSliceRequest): Record<string, unknown> {
  if (Array.isArray(value)) {
    if (request.offset >= value.length) return arraySlice(id, request, value.length, [], false);
    const wanted = Math.min(request.limit, value.length - request.offset);
    const candidates = value.slice(request.offset, request.offset + wanted);
    const count = fittedCount(wanted, candidates.map(jsonSize));
    const items = candidates.slice(0, count);
    return arraySlice(id, request, value.length, items, count === 1 && jsonSize(items) > MAX_SLICE_BYTES);
  }
  if (typeof value === "string") {
    const end = Math.min(value.length, request.offset + stringChars(request));
    return stringSlice(id, request, value.length, value.slice(request.offset, end));
  }
  if (isObject(value) && jsonSize(value) > MAX_SLICE_BYTES) {
    const keys = Object.keys(value);
    return keysSlice(id, request, keys.length, keys.slice(request.offset, request.offset + request.limit));
  }
  return {
    id,
    pointer: request.pointer,
    type: value === null ? "null" : Array.isArray(value) ? "array" : typeof value,
    value,
  };
}
