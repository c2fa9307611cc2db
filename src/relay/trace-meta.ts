/**
 * The trace context in a request's `params._meta.traceparent`, where the OpenTelemetry
 * MCP conventions carry it inside the message (HTTP headers only cover the exchange).
 * Spliced into the raw text: every other byte of the client's request stays as it was.
 */
import { appendMemberSplice, member, rootSpan, splice, type Span } from "../core/raw-json";

const META = "_meta";
const TRACEPARENT = "traceparent";

function isObjectAt(text: string, span: Span | undefined): span is Span {
  return span !== undefined && text.charCodeAt(span.start) === 0x7b;
}

/**
 * `text` (a JSON-RPC request) with `params._meta.traceparent` set to `traceparent`:
 * replaced if present, added otherwise (with `_meta`, or `params`, as needed). Params that
 * are not an object (a malformed request) are left alone.
 *
 * @example
 * withTraceMeta('{"jsonrpc":"2.0","id":1,"method":"ping"}', "00-…-01")
 * // '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"traceparent":"00-…-01"}}}'
 */
export function withTraceMeta(text: string, traceparent: string): string {
  const value = JSON.stringify(traceparent);
  const root = rootSpan(text);
  const params = member(text, root, "params");
  if (params === undefined)
    return splice(text, [appendMemberSplice(text, root, "params", `{"${META}":{"${TRACEPARENT}":${value}}}`)]);
  if (!isObjectAt(text, params)) return text;
  const meta = member(text, params, META);
  if (meta === undefined) return splice(text, [appendMemberSplice(text, params, META, `{"${TRACEPARENT}":${value}}`)]);
  if (!isObjectAt(text, meta)) return text;
  const current = member(text, meta, TRACEPARENT);
  return splice(text, [current ? { span: current, raw: value } : appendMemberSplice(text, meta, TRACEPARENT, value)]);
}
