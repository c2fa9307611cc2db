/**
 * A modern client's request as the gateway relays it. The `_meta` envelope
 * (`io.modelcontextprotocol/protocolVersion`, `clientCapabilities`, `clientInfo`,
 * `logLevel`) describes the client to the gateway, which has read it into the call's
 * identity; it is not forwarded. Upstreams get the gateway's own description of the
 * exchange instead (a 2025 upstream its session, made with the capabilities the gateway
 * declared), and a dual-era upstream would otherwise see a body claiming 2026-07-28
 * inside a 2025 session and refuse it (-32020, HTTP 400). Everything else in the request
 * (other `_meta` keys such as `progressToken` and `traceparent` included) stays byte for
 * byte.
 */
import { member, removeMemberSplice, rootSpan, splice } from "../../core/raw-json";
import type { JsonRpcRequest, WireMessage } from "../../core/jsonrpc";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from "./protocol";

/** The reserved keys of the 2026-07-28 request envelope. */
const ENVELOPE_KEYS = [
  PROTOCOL_VERSION_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
] as const;

function metaSpan(text: string) {
  const params = member(text, rootSpan(text), "params");
  if (!params || text.charCodeAt(params.start) !== 0x7b) return undefined;
  const meta = member(text, params, "_meta");
  return meta && text.charCodeAt(meta.start) === 0x7b ? meta : undefined;
}

/**
 * `wire` without the envelope keys in `params._meta` (an emptied `_meta` stays, as `{}`).
 *
 * @example
 * withoutEnvelope({ text: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"<revision>","progressToken":7}}}', message })
 * // text: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":7}}}'
 */
export function withoutEnvelope(wire: WireMessage<JsonRpcRequest>): WireMessage<JsonRpcRequest> {
  let text = wire.text;
  // Every occurrence: a key written twice would otherwise survive its first removal.
  for (const key of ENVELOPE_KEYS) {
    for (let meta = metaSpan(text); meta; meta = metaSpan(text)) {
      const removal = removeMemberSplice(text, meta, key);
      if (!removal) break;
      text = splice(text, [removal]);
    }
  }
  if (text === wire.text) return wire;
  const meta = wire.message.params?.["_meta"];
  const rest =
    meta !== null && typeof meta === "object" && !Array.isArray(meta)
      ? Object.fromEntries(Object.entries(meta).filter(([key]) => !(ENVELOPE_KEYS as readonly string[]).includes(key)))
      : meta;
  return { text, message: { ...wire.message, params: { ...wire.message.params, _meta: rest } } };
}
