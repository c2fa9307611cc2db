/**
 * What the audit trail records, from the `AUDIT` var (JSON): on or off, which messages
 * (tools/call only by default, every request, or every message), and the key patterns
 * whose values are redacted from recorded parameters. An invalid var is logged and the
 * defaults apply: auditing stays on rather than silently stopping.
 *
 *   AUDIT = '{"enabled": true, "record": "tools/call", "redactKeys": ["password", "ssn"], "redact": true}'
 */
import { isObject } from "../../core/jsonrpc";
import type { ClientMessage } from "../../context/call-context";

/** Which client messages yield an event. */
export type AuditScope = "tools/call" | "requests" | "all";

export type AuditConfig = {
  readonly enabled: boolean;
  readonly record: AuditScope;
  /** Redact parameter values whose key matches a pattern (at any depth). */
  readonly redact: boolean;
  /** Compared as words, in any case and spelling (features/audit/secret-keys.ts): a pattern with `*` or `?` is a glob over the whole key in snake_case, else words the key ends a word with. */
  readonly redactKeys: readonly string[];
};

/** Compared as words (features/audit/secret-keys.ts): `private_key` also catches `privateKey` and `sshPrivateKey`, `auth` catches `basicAuth` but not `author`, `pass` catches `db_pass` but not `passage`, `compass` or `bypass`. */
export const DEFAULT_REDACT_KEYS: readonly string[] = [
  "password",
  "passwd",
  "pass",
  "pwd",
  "passphrase",
  "secret",
  "token",
  "authorization",
  "auth",
  "bearer",
  "api_key",
  "cookie",
  "credential",
  "private_key",
  "session_key",
];

export const DEFAULT_AUDIT: AuditConfig = {
  enabled: true,
  record: "tools/call",
  redact: true,
  redactKeys: DEFAULT_REDACT_KEYS,
};

const SCOPES: readonly AuditScope[] = ["tools/call", "requests", "all"];
const MAX_REDACT_KEYS = 100;

/** The problems of an AUDIT value, empty when it is valid. */
function problemsOf(value: unknown): string[] {
  if (!isObject(value)) return ["must be a JSON object {enabled?, record?, redact?, redactKeys?}"];
  const problems: string[] = [];
  for (const [key, field] of Object.entries(value)) {
    if (key === "enabled" || key === "redact") {
      if (typeof field !== "boolean") problems.push(`${key} must be true or false`);
    } else if (key === "record") {
      if (!SCOPES.includes(field as AuditScope)) problems.push(`record must be one of ${SCOPES.join(", ")}`);
    } else if (key === "redactKeys") {
      if (
        !Array.isArray(field) ||
        field.length > MAX_REDACT_KEYS ||
        !field.every((k) => typeof k === "string" && k !== "")
      )
        problems.push(`redactKeys must be a list of at most ${MAX_REDACT_KEYS} non-empty strings`);
    } else problems.push(`unknown field ${key} (known: enabled, record, redact, redactKeys)`);
  }
  return problems;
}

/**
 * The audit configuration of an `AUDIT` var value (a JSON string or an object).
 *
 * @example
 * auditFromVar('{"record":"requests"}') // { enabled: true, record: "requests", redact: true, redactKeys: [...defaults] }
 */
export function auditFromVar(raw: unknown): AuditConfig {
  if (raw === undefined || raw === null || raw === "") return DEFAULT_AUDIT;
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
  }
  const problems = problemsOf(value);
  if (problems.length > 0) {
    console.error(
      `mcp-edge-gateway: the AUDIT var is invalid and ignored (auditing stays on with its defaults): ${problems.join("; ")}`,
    );
    return DEFAULT_AUDIT;
  }
  const given = value as Partial<AuditConfig>;
  return { ...DEFAULT_AUDIT, ...given, redactKeys: given.redactKeys ?? DEFAULT_REDACT_KEYS };
}

declare module "../../config/gateway-config" {
  interface ConfigSections {
    /** What the audit trail records (AUDIT), added by the composition root (src/gateway.ts). */
    readonly audit: AuditConfig;
  }
}

/** True for a message the configuration asks to record (its `record` scope says which). */
export function isAudited(message: ClientMessage, config: AuditConfig): boolean {
  if (!config.enabled) return false;
  switch (config.record) {
    case "all":
      return true;
    case "requests":
      return message.kind === "request";
    case "tools/call":
      return message.kind === "request" && message.wire.message.method === "tools/call";
    default: {
      const never: never = config.record;
      return never;
    }
  }
}
