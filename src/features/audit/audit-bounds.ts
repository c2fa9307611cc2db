/**
 * Bounds of an audit event. Clients and upstreams write most of an event (names, ids,
 * roles, arguments, error texts), and a Queue message holds 128 KB: an event that does
 * not fit is refused by the Queue and lost. So every field is bounded as it is built, in
 * the UTF-8 bytes of its JSON text (what the Queue counts: `é` is two bytes, a control
 * character escaped as `\u0001` six), and an event still over the limit is cut down to
 * a minimal event that says what it lost. An event is never dropped for its size.
 *
 * A field that was cut or dropped is named in `gateway.truncated_fields`, with
 * `gateway.truncated: true`.
 */
import { utf8Length } from "../../core/utf8-position";
import type { AuditEvent } from "./audit-event";

/** A Queue message holds at most 128 KB; the rest is headroom for the Queue's own framing. */
export const MAX_EVENT_BYTES = 120 * 1024;
/** Names, ids, URIs, the principal, the email, the persona: each at most this many bytes of JSON text. */
export const MAX_FIELD_BYTES = 1024;
/** Roles kept of the caller's: at most this many, each at most `MAX_ROLE_BYTES`, all together at most `MAX_ROLES_BYTES`. */
export const MAX_AUDIT_ROLES = 100;
export const MAX_ROLE_BYTES = 256;
export const MAX_ROLES_BYTES = 8 * 1024;
/** What ends parameters cut to fit. */
export const TRIMMED_MARKER = "…[trimmed to fit the Queue's 128 KB message limit]";
/** What ends a cut string. */
const ELLIPSIS = "…";
const ELLIPSIS_BYTES = 3;
/** The fields of the minimal event: each bounded to `MAX_FIELD_BYTES` (about 30 of them: far below the limit). */
const MINIMAL_FIELDS: readonly (keyof AuditEvent)[] = [
  "gateway.event_id",
  "timestamp",
  "trace_id",
  "span_id",
  "parent_span_id",
  "mcp.method.name",
  "gen_ai.operation.name",
  "gen_ai.tool.name",
  "gateway.tool.qualified_name",
  "gen_ai.prompt.name",
  "gateway.prompt.qualified_name",
  "mcp.resource.uri",
  "jsonrpc.request.id",
  "mcp.protocol.version",
  "mcp.session.id",
  "user.id",
  "gateway.persona",
  "gateway.route",
  "gateway.upstream",
  "gateway.upstream.status_code",
  "gateway.bytes_from_upstream",
  "gateway.bytes_to_client",
  "gateway.payload_id",
  "gateway.outcome",
  "error.type",
  "rpc.response.status_code",
  "gateway.failure",
  "gateway.duration_ms",
  "gateway.params_bytes",
  "gateway.user.roles_count",
];

/** UTF-8 bytes of the JSON text of `value`. */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? "");
}

/** Most UTF-8 bytes one UTF-16 unit takes in JSON text (a control character or lone surrogate as `\uXXXX`). */
const MAX_ESCAPED_UNIT_BYTES = 6;

/** Bytes of the JSON text of `text[i]` inside a string (and how many units it takes: 2 for a surrogate pair). */
function escapedBytes(text: string, i: number): [bytes: number, units: number] {
  const c = text.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return [2, 1];
  if (c < 0x20) return [c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6, 1];
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdfff) {
    const d = text.charCodeAt(i + 1);
    // A lone surrogate is written as \udxxx.
    return c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? [4, 2] : [6, 1];
  }
  return [3, 1];
}

/**
 * The longest start of `text` whose JSON text (without quotes) takes at most `maxBytes`
 * UTF-8 bytes; a surrogate pair is never split. Reads no further than the cut.
 */
export function cutToBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  for (let i = 0; i < text.length; ) {
    const [size, units] = escapedBytes(text, i);
    if (bytes + size > maxBytes) return text.slice(0, i);
    bytes += size;
    i += units;
  }
  return text;
}

/** Records which fields were cut while an event is built. */
export class FieldBounds {
  readonly cut = new Set<string>();

  /** `value` as text (JSON unless a string), cut to `maxBytes` with an ellipsis; undefined stays undefined. */
  text(field: string, value: unknown, maxBytes = MAX_FIELD_BYTES): string | undefined {
    if (value === undefined || value === null) return undefined;
    const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
    // A UTF-16 unit takes at most MAX_ESCAPED_UNIT_BYTES in JSON: short texts (nearly all) need no walk.
    if (text.length * MAX_ESCAPED_UNIT_BYTES <= maxBytes || cutToBytes(text, maxBytes).length === text.length)
      return text;
    this.cut.add(field);
    return `${cutToBytes(text, maxBytes - ELLIPSIS_BYTES)}${ELLIPSIS}`;
  }

  /** The string roles of `value`, in order, within the role bounds; `total` (how many there were) when some were left out. */
  roles(field: string, value: unknown): { roles?: string[]; total?: number } {
    if (!Array.isArray(value)) return {};
    const roles: string[] = [];
    let bytes = 0;
    let total = 0;
    for (const role of value) {
      if (typeof role !== "string") continue;
      total++;
      if (roles.length >= MAX_AUDIT_ROLES || bytes >= MAX_ROLES_BYTES) continue;
      const kept = this.text(field, role, MAX_ROLE_BYTES)!;
      bytes += jsonBytes(kept) + 1;
      if (bytes <= MAX_ROLES_BYTES) roles.push(kept);
    }
    if (roles.length === total) return { roles };
    this.cut.add(field);
    return { roles, total };
  }

  /** The markers of what was cut, for the event. */
  markers(): Pick<AuditEvent, "gateway.truncated" | "gateway.truncated_fields"> {
    return this.cut.size === 0 ? {} : { "gateway.truncated": true, "gateway.truncated_fields": [...this.cut] };
  }
}

function withMarkers(event: AuditEvent, fields: readonly string[]): AuditEvent {
  return {
    ...event,
    "gateway.truncated": true,
    "gateway.truncated_fields": [...new Set([...(event["gateway.truncated_fields"] ?? []), ...fields])],
  };
}

/**
 * The minimal form of an event over the limit: the fields of `MINIMAL_FIELDS` (strings
 * cut to `MAX_FIELD_BYTES`), every other field dropped and named.
 */
export function minimalEvent(event: AuditEvent): AuditEvent {
  const bounds = new FieldBounds();
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(event)) {
    if (key === "gateway.truncated" || key === "gateway.truncated_fields") continue;
    if (!MINIMAL_FIELDS.includes(key as keyof AuditEvent)) dropped.push(key);
    else kept[key] = typeof value === "number" || typeof value === "boolean" ? value : bounds.text(key, value);
  }
  const earlier = (event["gateway.truncated_fields"] ?? []).filter((f) =>
    MINIMAL_FIELDS.includes(f as keyof AuditEvent),
  );
  return {
    ...(kept as AuditEvent),
    "gateway.truncated": true,
    "gateway.truncated_fields": [...new Set([...earlier, ...bounds.cut, ...dropped])],
  };
}

/** The parameter field of an event (tool arguments, else other methods' params). */
function parameterKey(event: AuditEvent): "gen_ai.tool.call.arguments" | "gateway.params" {
  return event["gen_ai.tool.call.arguments"] !== undefined ? "gen_ai.tool.call.arguments" : "gateway.params";
}

/**
 * `event` cut to `MAX_EVENT_BYTES`: first its parameters become the start of their
 * JSON text followed by `TRIMMED_MARKER`; if the rest is still too large, the minimal event.
 */
export function trimEvent(event: AuditEvent): AuditEvent {
  if (jsonBytes(event) <= MAX_EVENT_BYTES) return event;
  const key = parameterKey(event);
  const whole = JSON.stringify(event[key] ?? null);
  const empty = withMarkers(
    { ...event, [key]: TRIMMED_MARKER, "gateway.params_trimmed": true, "gateway.params_bytes": utf8Length(whole) },
    [key],
  );
  const room = MAX_EVENT_BYTES - jsonBytes(empty);
  if (room < 0) return minimalEvent(event);
  return { ...empty, [key]: `${cutToBytes(whole, room)}${TRIMMED_MARKER}` };
}
