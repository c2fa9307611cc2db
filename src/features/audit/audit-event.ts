/**
 * The audit event: one line of the audit trail, as it travels through the Queue and lies
 * in R2 (NDJSON). Field names follow the OpenTelemetry semantic conventions where one
 * exists (MCP: `mcp.*`, `jsonrpc.*`; GenAI: `gen_ai.*`; general: `error.type`, `user.*`,
 * the log data model's `trace_id`/`span_id`); what only this gateway knows is under
 * `gateway.`. docs/audit.md maps them to the reference audit fields.
 */
import type { GuardrailHit } from "../../context/call-record";

/** How a call ended for the client. */
export type AuditOutcome = "success" | "tool_error" | "error";

export type AuditEvent = {
  /** Unique, and the same on every delivery of the event: readers deduplicate by it. */
  readonly "gateway.event_id": string;
  /** When the gateway took the message (ISO 8601, UTC, ms). */
  readonly timestamp: string;
  readonly trace_id?: string;
  /** The gateway's span: the parent the upstream was sent. */
  readonly span_id?: string;
  /** The client's span, when it sent a traceparent. */
  readonly parent_span_id?: string;
  /** The JSON-RPC method, or `(response)` for the client's answer to a server request, `(listen)` for the GET stream. */
  readonly "mcp.method.name": string;
  /** `execute_tool` for tools/call. */
  readonly "gen_ai.operation.name"?: string;
  /** As the client named it: unchanged on `/mcp/<upstream>`, `<upstream>___<name>` on `/mcp`, a named server's alias. */
  readonly "gen_ai.tool.name"?: string;
  /** The name policy knows the tool by on every route: `<upstream>___<name>` (a `sys___` tool keeps its own). */
  readonly "gateway.tool.qualified_name"?: string;
  /** As the client named it (a named server's alias, else as on the route). */
  readonly "gen_ai.prompt.name"?: string;
  /** The prompt's `<upstream>___<name>` when the client called it by an alias. */
  readonly "gateway.prompt.qualified_name"?: string;
  readonly "mcp.resource.uri"?: string;
  /** The tool call's arguments, redacted; a string ending in a marker when trimmed. */
  readonly "gen_ai.tool.call.arguments"?: unknown;
  /** Params of other methods (less `_meta`), redacted; a string ending in a marker when trimmed. */
  readonly "gateway.params"?: unknown;
  /** True when parameters were cut to fit the Queue's message limit; their size before. */
  readonly "gateway.params_trimmed"?: boolean;
  readonly "gateway.params_bytes"?: number;
  readonly "jsonrpc.request.id"?: string;
  readonly "mcp.protocol.version": string;
  /** SHA-256 of the session's id (hex, 32 digits): never the sealed token, never the id itself. */
  readonly "mcp.session.id"?: string;
  readonly "user.id": string;
  readonly "user.email"?: string;
  /** The caller's roles, at most 100 (and 8 KB) of them. */
  readonly "user.roles"?: readonly string[];
  /** How many roles the caller had, when `user.roles` holds fewer. */
  readonly "gateway.user.roles_count"?: number;
  readonly "gateway.persona"?: string;
  /** Why authorization refused or hid what was asked: "no persona for roles", "not allowed by persona", ... */
  readonly "gateway.denied"?: string;
  /** `/mcp` or `/mcp/<upstream>`. */
  readonly "gateway.route": string;
  readonly "gateway.upstream"?: string;
  readonly "gateway.upstream.status_code"?: number;
  readonly "gateway.bytes_from_upstream"?: number;
  readonly "gateway.bytes_to_client"?: number;
  readonly "gateway.filter.set"?: string;
  readonly "gateway.filter.rule"?: string;
  /** Bytes the filter removed; in shadow mode what it would have removed. */
  readonly "gateway.filter.bytes_saved"?: number;
  readonly "gateway.filter.shadow"?: boolean;
  readonly "gateway.payload_id"?: string;
  /** Guardrail rules that found something: rule, detector, kind, action, where (arguments or result), count; never the text. */
  readonly "gateway.guardrails"?: readonly GuardrailHit[];
  readonly "gateway.outcome": AuditOutcome;
  /** The failure's class: the gateway's failure reason, else the JSON-RPC error code, else `tool_error`. */
  readonly "error.type"?: string;
  /** The JSON-RPC error code of an error response, as a string. */
  readonly "rpc.response.status_code"?: string;
  /** The error's text (configured secrets redacted, cut at 1 KB). */
  readonly "gateway.error.message"?: string;
  readonly "gateway.failure"?: string;
  readonly "gateway.duration_ms": number;
  /** The code-mode run a call is (`sys___run_code`) or was made by (a program's tool call): the run's id. */
  readonly "gateway.code_run"?: string;
  /** SHA-256 (base64url) of a code-mode run's program, on the run's own event. */
  readonly "gateway.code_digest"?: string;
  /**
   * A failed authentication (`mcp.method.name` "(authentication)", `user.id`
   * "(unauthenticated)"): why it failed (`missing-credentials`, `token-expired`, ...,
   * `idp-unavailable`); in a summary of failures left out, `suppressed`.
   */
  readonly "gateway.auth.failure"?: string;
  /** Where a failed authentication came from: CF-Connecting-IP (`unknown` without it), or `(other sources)` in a summary. */
  readonly "client.address"?: string;
  readonly "user_agent.original"?: string;
  readonly "http.request.method"?: string;
  /** The HTTP status the caller got (401, 503). */
  readonly "http.response.status_code"?: number;
  /** In a summary: how many failures of the source were counted and not recorded, why, and when the first and last were. */
  readonly "gateway.auth.suppressed"?: number;
  readonly "gateway.auth.suppressed_reasons"?: Readonly<Record<string, number>>;
  readonly "gateway.auth.suppressed_from"?: string;
  readonly "gateway.auth.suppressed_to"?: string;
  /** Pin events (`mcp.method.name` "(pin-change)", features/pins/pin-reports.ts): what a list showed that was not seen before. */
  readonly "gateway.pin.change"?: "new" | "changed" | "removed" | "returned";
  readonly "gateway.pin.kind"?: "tool" | "prompt";
  readonly "gateway.pin.name"?: string;
  readonly "gateway.pin.old_digest"?: string;
  readonly "gateway.pin.new_digest"?: string;
  /** The fingerprinted members that differ (title, description, inputSchema, ...). */
  readonly "gateway.pin.changed_members"?: readonly string[];
  /** pinned, pending, rejected or held: what clients are shown under the upstream's mode. */
  readonly "gateway.pin.status"?: string;
  readonly "gateway.pin.mode"?: string;
  readonly "gateway.pin.findings"?: readonly { rule: string; severity: string; at: string; match: string }[];
  /** Client sign-in events (features/client-sign-in/grant-audit.ts): the client's id and the grant's, never a token. */
  readonly "gateway.oauth.client_id"?: string;
  readonly "gateway.oauth.grant_id"?: string;
  /** True when a field was cut to its bound, or dropped to fit the Queue's message limit; `truncated_fields` names them. */
  readonly "gateway.truncated"?: boolean;
  readonly "gateway.truncated_fields"?: readonly string[];
};

/** What a reader asks for (GET /admin/audit). */
export type AuditQuery = {
  readonly fromMs: number;
  readonly toMs: number;
  readonly tool?: string;
  readonly user?: string;
  readonly upstream?: string;
  readonly outcome?: AuditOutcome;
};

/** True for a value read back from the Queue or R2 that has the fields every event has. */
export function isAuditEvent(value: unknown): value is AuditEvent {
  if (typeof value !== "object" || value === null) return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event["gateway.event_id"] === "string" &&
    typeof event["timestamp"] === "string" &&
    !Number.isNaN(Date.parse(event["timestamp"]))
  );
}
