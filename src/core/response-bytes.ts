/**
 * Reading a JSON-RPC success response on its UTF-8 bytes, without decoding it, so that the
 * relay can hand a large answer no policy changes to the client as the upstream's bytes
 * (issue 38). The bytes are checked whole in one pass (core/json-bytes.ts): one JSON text
 * `JSON.parse` accepts, in well-formed UTF-8, so what is passed on is exactly what decoding
 * and encoding again would have sent. Anything this reader is not sure of is answered with
 * `undefined`, and the caller reads the text the ordinary way.
 */
import type { JsonRpcId } from "./jsonrpc";
import { JsonBytes } from "./json-bytes";
import type { Span } from "./raw-json";

/** What the relay needs to know of a success response it may pass on as bytes. */
export type ResponseHead = { readonly id: JsonRpcId };

/** Where the id's value and the result object are in a response's bytes, and whether the result says `"isError":true`. */
type Layout = { readonly id: Span; readonly result: Span; readonly toolError: boolean };

/** The layouts of the responses `responseHead` accepted, and of those spliced from them here: nothing else is spliced. */
const layouts = new WeakMap<Uint8Array, Layout>();

const QUOTE = 0x22;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The id of a response given as its JSON text's UTF-8 bytes, when the bytes are exactly
 * `{"jsonrpc":"2.0","id":…,"result":{…}}` in any order and spacing: each member once, no
 * other, the id a number or a string without escapes, the result an object without a
 * `resultType` member at its top (an `input_required` answer is read as text by the eras).
 * Undefined for anything else (an error, a request, invalid JSON or UTF-8, an escaped name).
 *
 * @example
 * responseHead(new TextEncoder().encode('{"result":{"content":[]},"jsonrpc":"2.0","id":3}'));
 * // { id: 3 }
 */
export function responseHead(bytes: Uint8Array): ResponseHead | undefined {
  const json = new JsonBytes(bytes);
  let version = false;
  let result: Span | undefined;
  let idSpan: Span | undefined;
  let toolError = false;
  const topEnd = json.members(json.space(0), (nameStart, nameEnd, at) => {
    if (json.is(nameStart, nameEnd, "result")) {
      if (result) return -1;
      const end = json.members(at, (start, nameEnd, value) => {
        if (json.is(start, nameEnd, "resultType")) return -1;
        if (json.is(start, nameEnd, "isError")) toolError ||= json.is(value, value + 4, "true");
        return json.value(value);
      });
      result = { start: at, end };
      return end;
    }
    if (json.is(nameStart, nameEnd, "jsonrpc")) {
      if (version || !json.is(at, at + 5, '"2.0"')) return -1;
      version = true;
      return at + 5;
    }
    if (json.is(nameStart, nameEnd, "id")) {
      if (idSpan) return -1;
      const first = bytes[at];
      const isNumber = first === 0x2d || (first !== undefined && first >= 0x30 && first <= 0x39);
      if (first !== QUOTE && !isNumber) return -1;
      const end = first === QUOTE ? json.string(at) : json.value(at);
      if (end < 0 || (first === QUOTE && json.escaped)) return -1;
      idSpan = { start: at, end };
      return end;
    }
    return -1;
  });
  if (topEnd < 0 || json.space(topEnd) !== bytes.length || !version || !result || !idSpan) return undefined;
  const raw = decoder.decode(bytes.subarray(idSpan.start, idSpan.end));
  layouts.set(bytes, { id: idSpan, result, toolError });
  return { id: bytes[idSpan.start] === QUOTE ? raw.slice(1, -1) : Number(raw) };
}

/**
 * Whether the result of a response `responseHead` accepted says `"isError":true` (a tool
 * error, whose message the audit event reads from the text); undefined for other bytes.
 */
export function isToolErrorBytes(bytes: Uint8Array): boolean | undefined {
  return layouts.get(bytes)?.toolError;
}

/** The bytes of a response `responseHead` accepted with the client's `id` in place of its own; undefined for other bytes. */
export function withIdBytes(bytes: Uint8Array, id: JsonRpcId): Uint8Array | undefined {
  const layout = layouts.get(bytes);
  return layout && spliced(bytes, layout, layout.id, encoder.encode(JSON.stringify(id)));
}

/**
 * The bytes of a response `responseHead` accepted with `member` (a member's raw JSON,
 * `"name":value`) added at the end of its result, as core/raw-json.ts `appendMemberSplice`
 * adds one to text; undefined for other bytes.
 */
export function withResultMemberBytes(bytes: Uint8Array, member: string): Uint8Array | undefined {
  const layout = layouts.get(bytes);
  if (!layout) return undefined;
  const close = layout.result.end - 1;
  const empty = new JsonBytes(bytes).space(layout.result.start + 1) === close;
  return spliced(bytes, layout, { start: close, end: close }, encoder.encode(`${empty ? "" : ","}${member}`));
}

/** `bytes` with `span` replaced by `raw`, its layout (`layout`, spans that do not overlap `span`) kept for the new bytes. */
function spliced(bytes: Uint8Array, layout: Layout, span: Span, raw: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.byteLength - (span.end - span.start) + raw.byteLength);
  out.set(bytes.subarray(0, span.start), 0);
  out.set(raw, span.start);
  out.set(bytes.subarray(span.end), span.start + raw.byteLength);
  const shift = raw.byteLength - (span.end - span.start);
  const moved = (at: number, end = false): number => (at > span.start || (end && at === span.end) ? at + shift : at);
  layouts.set(out, {
    toolError: layout.toolError,
    id: { start: moved(layout.id.start), end: moved(layout.id.end, true) },
    result: { start: moved(layout.result.start), end: moved(layout.result.end, true) },
  });
  return out;
}
