/**
 * A pointer read of a stored JSON payload through its index: the indexed values on
 * the pointer's path are found by their byte spans, the first value off the index
 * (small by construction) is captured from the nearest checkpoint and parsed, and a
 * large target (array, object, string) is sliced by reading only the ranges the slice
 * needs. The answers are those of `jsonSlice` over the parsed payload; no read fetches
 * more than its budget of bytes, whatever the payload's size.
 */
import { child, parsePointer } from "../core/json-pointer";
import {
  arraySlice,
  fittedCount,
  jsonSize,
  jsonSlice,
  keysSlice,
  MAX_SLICE_BYTES,
  stringChars,
  stringSlice,
  type JsonSliceRequest,
} from "./json-slice";
import type { Checkpoint, IndexedValue, PayloadIndex } from "./payload-index";
import { fetchRange, readString, walkChildren, type ChildStart, type ScanSource, type WalkStart } from "./payload-scan";

/** Values up to this many bytes are fetched whole and parsed (and `jsonSlice` answers exactly as over the whole payload). */
export const PARSED_VALUE_BYTES = 4 * MAX_SLICE_BYTES;

export type PointerAnswer =
  | { readonly ok: true; readonly slice: Record<string, unknown> }
  | { readonly ok: false; readonly reason: "missing" | "too-large"; readonly at: string };

/** The index with its values by path, as reads use it. */
export type IndexView = { readonly index: PayloadIndex; readonly byPath: ReadonlyMap<string, IndexedValue> };

function pathKey(tokens: readonly string[]): string {
  return JSON.stringify(tokens);
}

export function viewOf(index: PayloadIndex): IndexView {
  return { index, byPath: new Map(index.values.map((value) => [pathKey(value.p), value])) };
}

function pointerOf(tokens: readonly string[]): string {
  return tokens.map((t) => `/${t.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** The last checkpoint at or before child number `index` (checkpoints are in order). */
function checkpointBefore(checkpoints: readonly Checkpoint[], index: number): Checkpoint | undefined {
  let low = 0;
  let high = checkpoints.length - 1;
  let found: Checkpoint | undefined;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (checkpoints[mid]![0] <= index) {
      found = checkpoints[mid];
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

/** Where to start walking `container`'s children to reach child number `index`. */
function startBefore(container: IndexedValue, index: number): WalkStart {
  const kind = container.t === "a" ? "array" : "object";
  const checkpoint = checkpointBefore(container.c, index);
  if (!checkpoint) return { byte: container.s + 1, inside: { container: kind, at: "start" } };
  return { byte: checkpoint[1], inside: { container: kind, at: "value" }, index: checkpoint[0], key: checkpoint[2] };
}

/** An indexed child too large to parse, which a walk jumps over. */
function largeChild(view: IndexView, container: IndexedValue, start: ChildStart): IndexedValue | undefined {
  const value = view.byPath.get(
    pathKey([...container.p, container.t === "a" ? String(start.index) : (start.key ?? "")]),
  );
  return value && value.s === start.byte && value.e - value.s > PARSED_VALUE_BYTES ? value : undefined;
}

async function parsedRange(source: ScanSource, value: IndexedValue): Promise<unknown> {
  return JSON.parse(new TextDecoder().decode(await fetchRange(source, value.s, value.e - value.s)));
}

/** The raw text of `container`'s child `token` (not itself indexed), or why not. */
async function childText(
  source: ScanSource,
  view: IndexView,
  container: IndexedValue,
  token: string,
): Promise<string | "missing" | "too-large"> {
  let start: WalkStart;
  const wanted = (c: ChildStart) => (container.t === "a" ? c.index === Number(token) : c.key === token);
  if (container.t === "s") return "missing";
  if (container.t === "a") {
    if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= container.n) return "missing";
    start = startBefore(container, Number(token));
  } else {
    // The last listed member with this key (JSON.parse keeps the last of duplicates).
    const listed = container.c.filter((c) => c[2] === token).pop();
    if (listed) start = { byte: listed[1], inside: { container: "object", at: "value" }, index: listed[0], key: token };
    else if (container.all) return "missing";
    else start = { byte: container.s + 1, inside: { container: "object", at: "start" } };
  }
  let text: string | undefined | null = null;
  await walkChildren(
    source,
    start,
    {
      child: (c) => (wanted(c) ? "capture" : largeChild(view, container, c) ? "skip" : "pass"),
      skipTo: (c) => largeChild(view, container, c)!.e,
      captured: (_c, captured) => {
        text = captured;
        return false;
      },
    },
    PARSED_VALUE_BYTES,
  );
  if (text === null) return "missing";
  return text === undefined ? "too-large" : text;
}

/** The keys of a large object, one page (in the order `Object.keys` gives when every member is listed). */
async function keysPage(
  source: ScanSource,
  view: IndexView,
  object: IndexedValue,
  offset: number,
  limit: number,
): Promise<{ total: number; page: string[] }> {
  if (object.all) {
    const seen = new Set<string>();
    const integers: string[] = [];
    const others: string[] = [];
    for (const [, , key] of object.c) {
      if (key === undefined || seen.has(key)) continue;
      seen.add(key);
      // Object.keys lists integer-like keys first, ascending.
      if (/^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 2 ** 32 - 1) integers.push(key);
      else others.push(key);
    }
    const keys = [...integers.sort((a, b) => Number(a) - Number(b)), ...others];
    return { total: keys.length, page: keys.slice(offset, offset + limit) };
  }
  const page: string[] = [];
  await walkChildren(
    source,
    startBefore(object, offset),
    {
      child: (c) => {
        if (c.index >= offset + limit) return "stop";
        if (c.index >= offset) page.push(c.key ?? "");
        return largeChild(view, object, c) ? "skip" : "pass";
      },
      skipTo: (c) => largeChild(view, object, c)!.e,
    },
    0,
  );
  return { total: object.n, page };
}

/** An array slice read element by element from the checkpoint before `offset`. */
async function arrayPage(
  source: ScanSource,
  view: IndexView,
  id: string,
  array: IndexedValue,
  request: JsonSliceRequest,
): Promise<Record<string, unknown>> {
  const total = array.n;
  if (request.offset >= total) return arraySlice(id, request, total, [], false);
  const wanted = Math.min(request.limit, total - request.offset);
  const items: unknown[] = [];
  const sizes: number[] = [];
  let bytes = 2;
  await walkChildren(
    source,
    startBefore(array, request.offset),
    {
      child: (c) => {
        const large = largeChild(view, array, c);
        if (c.index < request.offset) return large ? "skip" : "pass";
        return large ? "stop" : "capture"; // an item too large to parse is too large to send
      },
      skipTo: (c) => largeChild(view, array, c)!.e,
      captured: (_c, text) => {
        if (text === undefined) return false;
        const item: unknown = JSON.parse(text);
        const size = jsonSize(item);
        items.push(item);
        sizes.push(size);
        bytes += size + (items.length > 1 ? 1 : 0);
        return items.length < wanted && bytes <= MAX_SLICE_BYTES;
      },
    },
    PARSED_VALUE_BYTES,
  );
  const count = fittedCount(wanted, sizes);
  const oversized = count === 1 && (sizes[0] === undefined || sizes[0] + 2 > MAX_SLICE_BYTES);
  return arraySlice(id, request, total, items.slice(0, count), oversized);
}

/** Reads the slice `request` of the payload `source` through its index. */
export async function readByPointer(
  source: ScanSource,
  view: IndexView,
  id: string,
  request: JsonSliceRequest,
): Promise<PointerAnswer> {
  const tokens = parsePointer(request.pointer);
  let current = view.byPath.get(pathKey([]));
  let value: unknown;
  let rest: readonly string[] = tokens;
  if (!current) {
    // The root is small (or not indexed): it is read whole, within the bound.
    let text: string | undefined;
    const captured = (_child: unknown, found: string | undefined) => {
      text = found;
      return false;
    };
    await walkChildren(source, { byte: 0 }, { child: () => "capture", captured }, PARSED_VALUE_BYTES);
    if (text === undefined) return { ok: false, reason: "too-large", at: "" };
    value = JSON.parse(text);
  } else {
    let depth = 0;
    for (; depth < tokens.length; depth++) {
      const next = view.byPath.get(pathKey(tokens.slice(0, depth + 1)));
      if (next) {
        current = next;
        continue;
      }
      const text = await childText(source, view, current, tokens[depth]!);
      if (text === "missing") return { ok: false, reason: "missing", at: pointerOf(tokens.slice(0, depth + 1)) };
      if (text === "too-large") return { ok: false, reason: "too-large", at: pointerOf(tokens.slice(0, depth + 1)) };
      value = JSON.parse(text);
      break;
    }
    if (depth === tokens.length) {
      // The target is indexed: large.
      if (current.e - current.s <= PARSED_VALUE_BYTES)
        return { ok: true, slice: jsonSlice(id, await parsedRange(source, current), request) };
      if (current.t === "a") return { ok: true, slice: await arrayPage(source, view, id, current, request) };
      if (current.t === "o") {
        const { total, page } = await keysPage(source, view, current, request.offset, request.limit);
        return { ok: true, slice: keysSlice(id, request, total, page) };
      }
      const { total, value: text } = await readString(source, current.s, request.offset, stringChars(request));
      return { ok: true, slice: stringSlice(id, request, total, text) };
    }
    rest = tokens.slice(depth + 1);
  }
  for (const [i, token] of rest.entries()) {
    const next = child(value, token);
    if (!next.found)
      return { ok: false, reason: "missing", at: pointerOf(tokens.slice(0, tokens.length - rest.length + i + 1)) };
    value = next.value;
  }
  return { ok: true, slice: jsonSlice(id, value, request) };
}
