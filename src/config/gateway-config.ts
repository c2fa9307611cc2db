/**
 * The gateway's configuration from its vars, parsed once per isolate and per version of
 * the vars, typed. Layers take what they need from it as options; none reads a var of
 * its own. A new deploy (or a test with other vars) brings other raw strings, so another
 * entry; an isolate only ever sees a handful.
 */
import type { Result } from "../core/errors";
import { DEFAULT_OFFLOAD, offloadFromVar, type OffloadConfig } from "../policy/offload-config";
import { auditFromVar, type AuditConfig } from "./audit-config";
import { upstreamsFrom, type ConfigProblem, type UpstreamConfig } from "./upstreams";
import { parseAuthConfig, type AuthConfig, type AuthConfigProblem } from "./auth-config";
import { withLiveUpstreams } from "../features/live-upstreams/live-list";

/** How long an isolate trusts its copy of a KV document (filter sets, plan) by default. */
export const DEFAULT_DOCUMENT_CACHE_TTL_MS = 30_000;
/** Parsed configurations kept per isolate (one per version of the vars). */
const MAX_CACHED_CONFIGS = 16;
/** The vars the configuration is parsed from. */
const CONFIG_VARS = ["UPSTREAMS", "ALLOWED_ORIGINS", "FILTER_CACHE_TTL_MS", "OFFLOAD", "AUDIT", "AUTH", "MAX_MESSAGE_BYTES"] as const;
/**
 * The largest MCP POST body read by default (MAX_MESSAGE_BYTES overrides it): room for a
 * tool argument of a few megabytes (a file, a base64 image), while a handful of such
 * requests at once stays well inside the isolate's 128 MB (the text is held and parsed).
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export type GatewayConfig = {
  /** The upstream list, or why it is invalid (details for the log only). */
  readonly upstreams: Result<readonly UpstreamConfig[], ConfigProblem>;
  /** Browser origins allowed besides the gateway's own on loopback. */
  readonly allowedOrigins: readonly string[];
  /** How long an isolate trusts its copy of a KV document (FILTER_CACHE_TTL_MS). */
  readonly documentCacheTtlMs: number;
  /** Offload settings: the defaults under the OFFLOAD var (the plan in KV may override them). */
  readonly offload: OffloadConfig;
  /** What the audit trail records (AUDIT). */
  readonly audit: AuditConfig;
  /** How callers authenticate (AUTH), or why it is invalid (details for the log only). */
  readonly auth: Result<AuthConfig, AuthConfigProblem>;
  /** The largest MCP POST body the gateway reads, in bytes (MAX_MESSAGE_BYTES). */
  readonly maxMessageBytes: number;
};

const parsed = new Map<string, GatewayConfig>();
/** The configuration each env object last gave, with the var values it was given for (compared by identity). */
const lastOf = new WeakMap<object, { readonly values: readonly unknown[]; readonly config: GatewayConfig }>();

/** The ALLOWED_ORIGINS var: a JSON list or a comma-separated list of origins. */
function originsFrom(raw: unknown): readonly string[] {
  if (Array.isArray(raw)) return raw.filter((o): o is string => typeof o === "string");
  if (typeof raw !== "string" || raw.trim() === "") return [];
  let values: unknown;
  try {
    values = JSON.parse(raw);
  } catch {
    values = raw.split(",");
  }
  return (Array.isArray(values) ? values : []).filter((o): o is string => typeof o === "string").map((o) => o.trim().replace(/\/+$/, ""));
}

/** MAX_MESSAGE_BYTES: a positive whole number of bytes; anything else leaves the default. */
function maxMessageBytesFrom(raw: unknown): number {
  const value = Number(raw);
  return raw !== undefined && raw !== "" && Number.isSafeInteger(value) && value > 0 ? value : DEFAULT_MAX_MESSAGE_BYTES;
}

function ttlFrom(raw: unknown): number {
  const value = Number(raw);
  return raw !== undefined && Number.isFinite(value) && value >= 0 ? value : DEFAULT_DOCUMENT_CACHE_TTL_MS;
}

/**
 * The configuration of these vars, parsed on first use, with the live upstreams this
 * isolate read last joined to `UPSTREAMS` (features/live-upstreams/live-list.ts).
 *
 * @example
 * const config = gatewayConfig(env);
 * if (!config.upstreams.ok) console.error(config.upstreams.problems);
 */
export function gatewayConfig(env: Readonly<Record<string, unknown>>): GatewayConfig {
  return withLiveUpstreams(declaredConfig(env));
}

function declaredConfig(env: Readonly<Record<string, unknown>>): GatewayConfig {
  // The same env object with the same var values as last time (every request of an isolate): no JSON key to write.
  const last = lastOf.get(env);
  if (last && CONFIG_VARS.every((name, i) => env[name] === last.values[i])) return last.config;
  const key = JSON.stringify(CONFIG_VARS.map((name) => env[name] ?? null));
  let config = parsed.get(key);
  if (!config) {
    config = {
      upstreams: upstreamsFrom(env["UPSTREAMS"]),
      allowedOrigins: originsFrom(env["ALLOWED_ORIGINS"]),
      documentCacheTtlMs: ttlFrom(env["FILTER_CACHE_TTL_MS"]),
      offload: { ...DEFAULT_OFFLOAD, ...offloadFromVar(env["OFFLOAD"]) },
      audit: auditFromVar(env["AUDIT"]),
      auth: parseAuthConfig(env["AUTH"]),
      maxMessageBytes: maxMessageBytesFrom(env["MAX_MESSAGE_BYTES"]),
    };
    if (parsed.size >= MAX_CACHED_CONFIGS) parsed.clear();
    parsed.set(key, config);
  }
  lastOf.set(env, { values: CONFIG_VARS.map((name) => env[name]), config });
  return config;
}
