/**
 * The gateway's configuration from its vars, parsed once per isolate and per version of
 * the vars, typed. Layers take what they need from it as options; none reads a var of
 * its own. A new deploy (or a test with other vars) brings other raw strings, so another
 * entry; an isolate only ever sees a handful. Features own parts of it (offload's OFFLOAD, audit's AUDIT):
 * each adds its parser with `addConfigSection` from the composition root (src/gateway.ts)
 * and its type to `ConfigSections`, so this module parses them without importing a feature.
 */
import type { Result } from "../core/errors";
import { upstreamsFrom, type ConfigProblem, type UpstreamConfig } from "./upstreams";
import { parseAuthConfig, type AuthConfig, type AuthConfigProblem } from "./auth-config";

/** How long an isolate trusts its copy of a KV document (filter sets, plan) by default. */
export const DEFAULT_DOCUMENT_CACHE_TTL_MS = 30_000;
/** Parsed configurations kept per isolate (one per version of the vars). */
const MAX_CACHED_CONFIGS = 16;
/** The vars the configuration is parsed from. */
const CONFIG_VARS = [
  "UPSTREAMS",
  "ALLOWED_ORIGINS",
  "FILTER_CACHE_TTL_MS",
  "OFFLOAD",
  "AUDIT",
  "AUTH",
  "MAX_MESSAGE_BYTES",
] as const;
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
  /** How callers authenticate (AUTH), or why it is invalid (details for the log only). */
  readonly auth: Result<AuthConfig, AuthConfigProblem>;
  /** The largest MCP POST body the gateway reads, in bytes (MAX_MESSAGE_BYTES). */
  readonly maxMessageBytes: number;
} & Readonly<ConfigSections>;

/**
 * The parts of the configuration features own, by name. A feature adds its own by augmenting
 * this interface (src/gateway.ts adds `offload` and `audit`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: features add members by augmenting it (declaration merging); a type alias cannot be augmented
export interface ConfigSections {}

/** A feature's part of the configuration: the var it is parsed from, and its parser. */
type ConfigSection = { readonly variable: ConfigVar; readonly parse: (raw: unknown) => unknown };
/** The vars the configuration is parsed from, by name. */
type ConfigVar = (typeof CONFIG_VARS)[number];

/** The parts features own, in the order they were added. */
const sections = new Map<string, ConfigSection>();

/**
 * Adds a feature's part of the configuration: `gatewayConfig` parses `env[variable]` with
 * `parse` into `config[name]`. Configurations parsed before are dropped (they lack it).
 *
 * @example
 * addConfigSection("offload", "OFFLOAD", (raw) => ({ ...DEFAULT_OFFLOAD, ...offloadFromVar(raw) }));
 */
export function addConfigSection<K extends keyof ConfigSections & string>(
  name: K,
  variable: ConfigVar,
  parse: (raw: unknown) => ConfigSections[K],
): void {
  sections.set(name, { variable, parse });
  parsed.clear();
  lastOf = new WeakMap();
}

const parsed = new Map<string, GatewayConfig>();
/** The configuration each env object last gave, with the var values it was given for (compared by identity). */
let lastOf = new WeakMap<object, { readonly values: readonly unknown[]; readonly config: GatewayConfig }>();

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
  return (Array.isArray(values) ? values : [])
    .filter((o): o is string => typeof o === "string")
    .map((o) => o.trim().replace(/\/+$/, ""));
}

/** MAX_MESSAGE_BYTES: a positive whole number of bytes; anything else leaves the default. */
function maxMessageBytesFrom(raw: unknown): number {
  const value = Number(raw);
  return raw !== undefined && raw !== "" && Number.isSafeInteger(value) && value > 0
    ? value
    : DEFAULT_MAX_MESSAGE_BYTES;
}

function ttlFrom(raw: unknown): number {
  const value = Number(raw);
  return raw !== undefined && Number.isFinite(value) && value >= 0 ? value : DEFAULT_DOCUMENT_CACHE_TTL_MS;
}

/** The parts features own, parsed from their vars. */
function sectionsFrom(env: Readonly<Record<string, unknown>>): ConfigSections {
  const values: Record<string, unknown> = {};
  for (const [name, { variable, parse }] of sections) values[name] = parse(env[variable]);
  // Each value is what its section's parser returned, typed by ConfigSections.
  return values as Partial<ConfigSections> as ConfigSections;
}

/**
 * The configuration of these vars, parsed on first use, with the live upstreams this
 * isolate read last joined to `UPSTREAMS` (`joinUpstreamsWith`: features/live-upstreams/live-list.ts).
 *
 * @example
 * const config = gatewayConfig(env);
 * if (!config.upstreams.ok) console.error(config.upstreams.problems);
 */
export function gatewayConfig(env: Readonly<Record<string, unknown>>): GatewayConfig {
  return joinUpstreams(declaredConfig(env));
}

/** Joins the upstreams a feature keeps elsewhere (the live upstreams in KV) to the declared ones. */
export type UpstreamJoiner = (declared: GatewayConfig) => GatewayConfig;

let joinUpstreams: UpstreamJoiner = (declared) => declared;

/** Registers the one joiner of further upstreams (the composition root, src/gateway.ts, calls it once). */
export function joinUpstreamsWith(joiner: UpstreamJoiner): void {
  joinUpstreams = joiner;
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
      ...sectionsFrom(env),
      auth: parseAuthConfig(env["AUTH"]),
      maxMessageBytes: maxMessageBytesFrom(env["MAX_MESSAGE_BYTES"]),
    };
    if (parsed.size >= MAX_CACHED_CONFIGS) parsed.clear();
    parsed.set(key, config);
  }
  lastOf.set(env, { values: CONFIG_VARS.map((name) => env[name]), config });
  return config;
}
