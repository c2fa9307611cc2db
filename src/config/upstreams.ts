/**
 * The upstream list: parsed from the `UPSTREAMS` var, validated, cached per isolate.
 *
 * `wrangler dev --var UPSTREAMS:'[...]'` delivers a JSON string while a `[vars]` table
 * may deliver structured values, so both are accepted. A bad list is a value with every
 * problem located (`UPSTREAMS[1].url: ...`), never an exception that takes the Worker down.
 */
import { fail, ok, type Result } from "../core/errors";
import { isObject } from "../core/jsonrpc";
import { SYS_UPSTREAM } from "../core/names";
import { LATEST_SESSION_REVISION, STATELESS_REVISION } from "../core/revisions";
import { parseUpstreamAuth, type UpstreamAuth } from "./upstream-auth";

export type { UpstreamAuth };

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;
/**
 * How long a stream (an SSE answer) may stay silent. Longer than the SDK clients' own
 * request timeout (60 s), so a client with defaults gives up first; long tools that say
 * nothing for longer need a larger `idleTimeoutMs` (or progress notifications).
 */
export const DEFAULT_UPSTREAM_IDLE_TIMEOUT_MS = 5 * 60_000;
const MAX_UPSTREAM_TIMEOUT_MS = 15 * 60_000;
/** The longest an upstream's list is held (the operator's `listCache.ttlMs`, and any hint an upstream gives). */
export const MAX_LIST_CACHE_TTL_MS = 60 * 60_000;
/**
 * Short, never containing the `___` separator of aggregated names, and not ending in `_`:
 * `svc_` + `___` + `tool` would read as `svc` + `___` + `_tool`, so the first `___` of an
 * aggregated name must always be where the upstream's name ends.
 */
const UPSTREAM_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!__))*(?<!_)$/;
const MAX_UPSTREAM_NAME_LENGTH = 32;
const RESERVED_NAMES = new Set([SYS_UPSTREAM]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the gateway owns on the upstream leg; configuring them would break the relay. */
const GATEWAY_OWNED_HEADERS = new Set([
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "content-length",
  "host",
]);

/** Who may be answered from one held list: `private`, only the principal it was fetched for; `public`, anyone (2026-07-28's `cacheScope`). */
export type ListCacheScope = "public" | "private";
export const LIST_CACHE_SCOPES: readonly ListCacheScope[] = ["private", "public"];

/** How the gateway authenticates to one upstream: a secret's value sent as a header. */
export type UpstreamCredential = {
  readonly secret: string;
  readonly header: string;
  readonly scheme: string;
  /** A live upstream's credential, sealed in KV and opened (features/live-upstreams/): sent instead of the secret. */
  readonly value?: string;
};

/**
 * Fields of an upstream that features own (pins' `pinning` and `approveNew`), by name. A
 * feature adds its own by augmenting this interface and its parser with `addUpstreamSection`
 * (features/pins/upstream-fields.ts), from the composition root (src/gateway.ts).
 */
// biome-ignore lint/suspicious/noEmptyInterface: features add members by augmenting it (declaration merging); a type alias cannot be augmented
export interface UpstreamSections {}

/** A feature's fields of an upstream: their names, and their parser (each problem pushed, located by `at`). */
export type UpstreamSection = {
  readonly fields: readonly string[];
  readonly parse: (raw: Readonly<Record<string, unknown>>, at: string, problems: string[]) => Partial<UpstreamSections>;
};

/** The fields features own, in the order they were added. */
const sections: UpstreamSection[] = [];

/** Adds a feature's fields of an upstream: `UPSTREAMS` entries may carry them, parsed by `section.parse`. */
export function addUpstreamSection(section: UpstreamSection): void {
  sections.push(section);
}

export type UpstreamConfig = {
  readonly name: string;
  /** Absolute http(s) URL of the upstream's MCP endpoint; with `service`, the URL sent through the binding. */
  readonly url: string;
  /** Name of a service binding to another Worker, used instead of the public network. */
  readonly service?: string;
  readonly credential?: UpstreamCredential;
  /** Static extra headers (not secrets: those go in `credential`). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * How long an answer may take: to its headers; for a JSON body, to its last byte; for
   * the answer to initialize, a list and other quick methods, to the answer however framed.
   */
  readonly timeoutMs: number;
  /** How long a stream answering a request (tools/call over SSE, say) may send nothing. */
  readonly idleTimeoutMs: number;
  /** Opted in to identity assertions: a gateway-signed JWT naming the caller, sent in this header. */
  readonly identity?: { readonly header: string };
  /** The protocol revision the upstream speaks, when configured: the gateway then skips discovery (upstream/era.ts). */
  readonly protocol?: UpstreamProtocol;
  /**
   * Holding this upstream's lists (upstream/list-cache.ts) where its answers carry no
   * caching hints (2025 upstreams): for `ttlMs`, shared across principals only when
   * `cacheScope` is "public". `ttlMs` 0 holds none of its lists, hints or not. Absent: only
   * what a 2026-07-28 upstream's own hints allow.
   */
  readonly listCache?: { readonly ttlMs: number; readonly cacheScope: ListCacheScope };
  /** Per-user sign-in (`{"type": "oauth"}`): each caller's own token goes upstream (upstream/oauth/). */
  readonly auth?: UpstreamAuth;
} & Readonly<UpstreamSections>;

/** The revisions an upstream may be configured to speak: the last 2025 one, or 2026-07-28. */
export const UPSTREAM_PROTOCOLS = [LATEST_SESSION_REVISION, STATELESS_REVISION] as const;
export type UpstreamProtocol = (typeof UPSTREAM_PROTOCOLS)[number];

export type ConfigProblem = { reason: "invalid-upstreams"; problems: readonly string[] };

function problemsOf(raw: unknown, index: number, seen: Set<string>): { config?: UpstreamConfig; problems: string[] } {
  const at = `UPSTREAMS[${index}]`;
  const problems: string[] = [];
  if (!isObject(raw)) return { problems: [`${at}: must be an object like {"name":"github","url":"https://..."}`] };
  const sectionFields = sections.flatMap((section) => section.fields);
  const known = new Set([
    "name",
    "url",
    "service",
    "credential",
    "headers",
    "timeoutMs",
    "idleTimeoutMs",
    "identity",
    "protocol",
    ...sectionFields,
    "listCache",
    "auth",
  ]);
  for (const key of Object.keys(raw))
    if (!known.has(key)) problems.push(`${at}.${key}: unknown field (known: ${[...known].join(", ")})`);

  const name = raw["name"];
  if (typeof name !== "string" || !UPSTREAM_NAME.test(name) || name.length > MAX_UPSTREAM_NAME_LENGTH) {
    problems.push(
      `${at}.name: must be 1-${MAX_UPSTREAM_NAME_LENGTH} letters, digits, '-' or '_', starting with a letter or digit, not ending in '_' and without '___' (so <name>___<tool> splits one way only), got ${JSON.stringify(name)}`,
    );
  } else if (RESERVED_NAMES.has(name.toLowerCase())) {
    problems.push(`${at}.name: "${name}" is reserved for the gateway's own tools`);
  } else if (seen.has(name)) {
    problems.push(`${at}.name: "${name}" is used by another upstream`);
  }

  const service = raw["service"];
  if (service !== undefined && (typeof service !== "string" || service === ""))
    problems.push(`${at}.service: must be the name of a service binding`);
  let url = raw["url"];
  if (url === undefined && typeof service === "string") url = "https://upstream.internal/mcp";
  if (typeof url !== "string" || !/^https?:\/\//i.test(url) || !URL.canParse(url)) {
    problems.push(
      `${at}.url: must be an absolute http:// or https:// URL${service === undefined ? ' (or give "service")' : ""}`,
    );
  }

  let credential: UpstreamCredential | undefined;
  const rawCredential = raw["credential"];
  if (rawCredential !== undefined) {
    if (!isObject(rawCredential) || typeof rawCredential["secret"] !== "string" || rawCredential["secret"] === "") {
      problems.push(
        `${at}.credential: must be {"secret":"NAME_OF_A_WORKER_SECRET","header"?: "Authorization","scheme"?: "Bearer"}`,
      );
    } else {
      const header = rawCredential["header"] ?? "Authorization";
      const scheme = rawCredential["scheme"] ?? (String(header).toLowerCase() === "authorization" ? "Bearer" : "");
      if (typeof header !== "string" || !HEADER_NAME.test(header) || GATEWAY_OWNED_HEADERS.has(header.toLowerCase())) {
        problems.push(`${at}.credential.header: must be an HTTP header name the gateway does not set itself`);
      } else if (typeof scheme !== "string") {
        problems.push(`${at}.credential.scheme: must be a string such as "Bearer" or ""`);
      } else {
        credential = { secret: rawCredential["secret"], header, scheme };
      }
    }
  }

  const headers: Record<string, string> = {};
  const rawHeaders = raw["headers"];
  if (rawHeaders !== undefined) {
    if (!isObject(rawHeaders)) problems.push(`${at}.headers: must be an object of header names to string values`);
    else
      for (const [key, value] of Object.entries(rawHeaders)) {
        if (!HEADER_NAME.test(key) || GATEWAY_OWNED_HEADERS.has(key.toLowerCase()) || typeof value !== "string") {
          problems.push(`${at}.headers.${key}: must be a string value for a header the gateway does not set itself`);
        } else headers[key] = value;
      }
  }

  let identity: { header: string } | undefined;
  const rawIdentity = raw["identity"];
  if (rawIdentity !== undefined) {
    const header = isObject(rawIdentity) ? rawIdentity["header"] : undefined;
    if (
      typeof header !== "string" ||
      !HEADER_NAME.test(header) ||
      GATEWAY_OWNED_HEADERS.has(header.toLowerCase()) ||
      header.toLowerCase() === credential?.header.toLowerCase()
    ) {
      problems.push(
        `${at}.identity: must be {"header": "X-MCP-Identity"}, a header the gateway and the credential do not use`,
      );
    } else identity = { header };
  }

  let auth: UpstreamAuth | undefined;
  if (raw["auth"] !== undefined) {
    const checked = parseUpstreamAuth(raw["auth"], `${at}.auth`);
    problems.push(...checked.problems);
    auth = checked.auth;
    const userHeader = auth?.type === "userKey" ? auth.header : "Authorization";
    if (auth && credential?.header.toLowerCase() === userHeader.toLowerCase())
      problems.push(
        `${at}.auth: each user's own credential goes in ${userHeader}; move "credential" to another header or remove it`,
      );
    if (auth?.type === "oauth" && typeof service === "string")
      problems.push(
        `${at}.auth: per-user sign-in needs the upstream's public URL (its metadata and authorization server are reached over the network), not "service"`,
      );
  }

  const protocol = raw["protocol"];
  if (protocol !== undefined && !(UPSTREAM_PROTOCOLS as readonly unknown[]).includes(protocol)) {
    problems.push(
      `${at}.protocol: must be one of ${UPSTREAM_PROTOCOLS.map((p) => JSON.stringify(p)).join(", ")} (or left out: the gateway discovers it)`,
    );
  }

  const owned: Partial<UpstreamSections> = {};
  for (const section of sections) Object.assign(owned, section.parse(raw, at, problems));

  const listCache = listCacheOf(raw["listCache"], `${at}.listCache`, problems);

  const timeoutMs = raw["timeoutMs"] ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const idleTimeoutMs = raw["idleTimeoutMs"] ?? DEFAULT_UPSTREAM_IDLE_TIMEOUT_MS;
  for (const [field, value] of [
    ["timeoutMs", timeoutMs],
    ["idleTimeoutMs", idleTimeoutMs],
  ] as const) {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_UPSTREAM_TIMEOUT_MS) {
      problems.push(
        `${at}.${field}: must be an integer number of milliseconds between 1 and ${MAX_UPSTREAM_TIMEOUT_MS}`,
      );
    }
  }

  if (problems.length > 0) return { problems };
  seen.add(name as string);
  const config: UpstreamConfig = {
    name: name as string,
    url: url as string,
    headers,
    timeoutMs: timeoutMs as number,
    idleTimeoutMs: idleTimeoutMs as number,
    ...owned,
    ...(typeof service === "string" ? { service } : {}),
    ...(credential ? { credential } : {}),
    ...(identity ? { identity } : {}),
    ...(auth ? { auth } : {}),
    ...(protocol !== undefined ? { protocol: protocol as UpstreamProtocol } : {}),
    ...(listCache ? { listCache } : {}),
  };
  return { config, problems };
}

/** `UPSTREAMS[].listCache`, checked; problems are pushed to `problems`. */
function listCacheOf(raw: unknown, at: string, problems: string[]): UpstreamConfig["listCache"] {
  if (raw === undefined) return undefined;
  const shape = `must be {"ttlMs": <0 to ${MAX_LIST_CACHE_TTL_MS}>, "cacheScope"?: "private" | "public"}`;
  if (!isObject(raw)) {
    problems.push(`${at}: ${shape}`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(raw))
    if (key !== "ttlMs" && key !== "cacheScope")
      problems.push(`${at}.${key}: unknown field (known: ttlMs, cacheScope)`);
  const { ttlMs, cacheScope = "private" } = raw;
  if (typeof ttlMs !== "number" || !Number.isInteger(ttlMs) || ttlMs < 0 || ttlMs > MAX_LIST_CACHE_TTL_MS)
    problems.push(
      `${at}.ttlMs: must be an integer number of milliseconds from 0 (hold none of its lists) to ${MAX_LIST_CACHE_TTL_MS}`,
    );
  if (!(LIST_CACHE_SCOPES as readonly unknown[]).includes(cacheScope))
    problems.push(
      `${at}.cacheScope: must be "private" (each principal its own copy, the default) or "public" (one copy for every caller)`,
    );
  return problems.length > before ? undefined : { ttlMs: ttlMs as number, cacheScope: cacheScope as ListCacheScope };
}

/** Validates the `UPSTREAMS` var (a JSON string or an already structured list). */
export function parseUpstreams(raw: unknown): Result<readonly UpstreamConfig[], ConfigProblem> {
  let value = raw;
  if (value === undefined || value === "")
    return fail({
      reason: "invalid-upstreams",
      problems: ['UPSTREAMS: not set; give a JSON list such as [{"name":"github","url":"https://example.com/mcp"}]'],
    });
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch (error) {
      return fail({
        reason: "invalid-upstreams",
        problems: [`UPSTREAMS: not valid JSON (${(error as Error).message})`],
      });
    }
  }
  if (!Array.isArray(value))
    return fail({ reason: "invalid-upstreams", problems: ["UPSTREAMS: must be a JSON list of upstreams"] });
  const seen = new Set<string>();
  const configs: UpstreamConfig[] = [];
  const problems: string[] = [];
  value.forEach((entry, index) => {
    const checked = problemsOf(entry, index, seen);
    problems.push(...checked.problems);
    if (checked.config) configs.push(checked.config);
  });
  return problems.length > 0 ? fail({ reason: "invalid-upstreams", problems }) : ok(configs);
}

const cache = new Map<unknown, Result<readonly UpstreamConfig[], ConfigProblem>>();

/** `parseUpstreams`, computed once per distinct value per isolate. */
export function upstreamsFrom(raw: unknown): Result<readonly UpstreamConfig[], ConfigProblem> {
  const key = typeof raw === "string" ? raw : JSON.stringify(raw);
  let parsed = cache.get(key);
  if (!parsed) {
    parsed = parseUpstreams(raw);
    if (cache.size > 16) cache.clear();
    cache.set(key, parsed);
  }
  return parsed;
}
