/**
 * The `AUTH` var: how the gateway learns who is calling. Parsed once with the rest of the
 * configuration. No `AUTH` at all is its own state ("missing"): the shell refuses MCP
 * requests then, naming the fix, because a deployed gateway that forgot to configure
 * authentication must not answer anyone with the operator's upstream credentials.
 * `{"mode": "off"}` turns authentication off on purpose (`npm start` does, for local use).
 *
 *   {"apiKeys": true,
 *    "jwt": {"issuer": "https://idp.example", "audience": "https://gw.example/mcp",
 *            "jwksUrl": "https://idp.example/.well-known/jwks.json", "rolesClaim": "realm_access.roles"},
 *    "rateLimits": {"standard": "RATE_LIMIT_STANDARD"}}
 *
 * Features own sections of AUTH (`signIn`: features/client-sign-in/config.ts): each adds its
 * parser with `addAuthSection` from the composition root (src/gateway.ts), and its type to
 * `AuthSections`, so this module parses them without importing any feature.
 */
import { fail, ok, type Result } from "../core/errors";
import { isObject } from "../core/jsonrpc";

/** Clock skew allowed on `exp` and `nbf` unless configured. */
export const DEFAULT_CLOCK_TOLERANCE_S = 30;
/** More skew than this would make expiry meaningless. */
const MAX_CLOCK_TOLERANCE_S = 5 * 60;
/** Asymmetric algorithms only: an HMAC key would be the JWKS's public key, which anyone holds. */
export const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
const DEFAULT_ALGORITHMS = ["RS256", "ES256"];
const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type JwtConfig = {
  readonly issuer: string;
  /** The gateway's resource URL(s) (RFC 8707): a token must name one of them. */
  readonly audience: readonly string[];
  /** Per-route resource URLs: a token for /mcp/<route> may name this one instead. */
  readonly routeAudiences: Readonly<Record<string, string>>;
  readonly jwksUrl: string;
  /** A dotted path into the claims ("realm_access.roles"); its value is a list or a space-separated string. */
  readonly rolesClaim: string;
  readonly emailClaim: string;
  readonly algorithms: readonly string[];
  readonly clockToleranceS: number;
  /** Advertised in the protected-resource metadata (RFC 9728). */
  readonly authorizationServers: readonly string[];
};

export type AuthConfig =
  | { readonly mode: "missing" }
  | { readonly mode: "off" }
  | ({
      readonly mode: "on";
      readonly apiKeys: boolean;
      readonly jwt?: JwtConfig;
      /** Scopes advertised in the protected-resource metadata. */
      readonly scopes: readonly string[];
      /** Rate-limit names (as personas say them) to the binding that counts them. */
      readonly rateLimits: Readonly<Record<string, string>>;
    } & Readonly<Partial<AuthSections>>);

/**
 * The sections of AUTH that features own, by name (each absent when not configured). A
 * feature adds its own by augmenting this interface (src/gateway.ts adds `signIn`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: features add members by augmenting it (declaration merging); a type alias cannot be augmented
export interface AuthSections {}

/** A feature's parser of its section of AUTH: the section's value, each mistake pushed to `problems`. */
export type AuthSectionParser<T> = (raw: unknown, problems: string[]) => T | undefined;

/** The parsers of the sections features own, in the order they were added. */
const sectionParsers = new Map<string, AuthSectionParser<unknown>>();

/**
 * Adds a feature's section of AUTH: `parseAuthConfig` parses `AUTH[name]` with `parse` when present.
 *
 * @example
 * addAuthSection("signIn", signInFrom);
 */
export function addAuthSection<K extends keyof AuthSections & string>(
  name: K,
  parse: AuthSectionParser<AuthSections[K]>,
): void {
  sectionParsers.set(name, parse);
}

export type AuthConfigProblem = { reason: "invalid-auth"; problems: readonly string[] };

function strings(value: unknown, at: string, problems: string[]): string[] {
  if (value === undefined) return [];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || !list.every((item) => typeof item === "string" && item !== "")) {
    problems.push(`${at}: a string or a list of non-empty strings`);
    return [];
  }
  return list;
}

function httpsUrl(value: unknown, at: string, problems: string[]): string {
  if (typeof value !== "string" || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    problems.push(`${at}: an http(s) URL`);
    return "";
  }
  return value;
}

function jwtFrom(raw: unknown, problems: string[]): JwtConfig | undefined {
  if (!isObject(raw)) {
    problems.push("AUTH.jwt: an object with issuer, audience and jwksUrl");
    return undefined;
  }
  const issuer = typeof raw["issuer"] === "string" && raw["issuer"] !== "" ? raw["issuer"] : "";
  if (issuer === "") problems.push("AUTH.jwt.issuer: the issuer (iss) tokens must name");
  const audience = strings(raw["audience"], "AUTH.jwt.audience", problems);
  if (audience.length === 0)
    problems.push("AUTH.jwt.audience: the gateway's resource URL, which tokens must name in aud (RFC 8707)");
  const routeAudiences: Record<string, string> = {};
  if (raw["routeAudiences"] !== undefined) {
    if (!isObject(raw["routeAudiences"]))
      problems.push("AUTH.jwt.routeAudiences: an object of upstream name to resource URL");
    else
      for (const [route, url] of Object.entries(raw["routeAudiences"]))
        routeAudiences[route] = httpsUrl(url, `AUTH.jwt.routeAudiences.${route}`, problems);
  }
  const algorithms =
    raw["algorithms"] === undefined ? DEFAULT_ALGORITHMS : strings(raw["algorithms"], "AUTH.jwt.algorithms", problems);
  for (const alg of algorithms) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg))
      problems.push(
        `AUTH.jwt.algorithms: "${alg}" is not allowed; use asymmetric algorithms (${ASYMMETRIC_ALGORITHMS.join(", ")})`,
      );
  }
  const tolerance = raw["clockToleranceS"] ?? DEFAULT_CLOCK_TOLERANCE_S;
  if (typeof tolerance !== "number" || !(tolerance >= 0 && tolerance <= MAX_CLOCK_TOLERANCE_S))
    problems.push(`AUTH.jwt.clockToleranceS: 0 to ${MAX_CLOCK_TOLERANCE_S} seconds`);
  const claim = (key: string, fallback: string) =>
    typeof raw[key] === "string" && raw[key] !== "" ? (raw[key] as string) : fallback;
  return {
    issuer,
    audience,
    routeAudiences,
    jwksUrl: httpsUrl(raw["jwksUrl"], "AUTH.jwt.jwksUrl", problems),
    rolesClaim: claim("rolesClaim", "roles"),
    emailClaim: claim("emailClaim", "email"),
    algorithms,
    clockToleranceS: typeof tolerance === "number" ? tolerance : DEFAULT_CLOCK_TOLERANCE_S,
    authorizationServers:
      raw["authorizationServers"] === undefined
        ? [issuer]
        : strings(raw["authorizationServers"], "AUTH.jwt.authorizationServers", problems),
  };
}

/**
 * The AUTH var, parsed. A JSON string (from `--var` or the dashboard) or an object (a
 * `[vars]` table).
 *
 * @example
 * parseAuthConfig('{"mode":"off"}') // { ok: true, value: { mode: "off" } }
 */
export function parseAuthConfig(raw: unknown): Result<AuthConfig, AuthConfigProblem> {
  if (raw === undefined || raw === null || raw === "") return ok({ mode: "missing" });
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return fail({ reason: "invalid-auth", problems: ["AUTH: not valid JSON"] });
    }
  }
  if (!isObject(value)) return fail({ reason: "invalid-auth", problems: ["AUTH: a JSON object"] });
  if (value["mode"] === "off") return ok({ mode: "off" });
  const problems: string[] = [];
  if (value["mode"] !== undefined && value["mode"] !== "on") problems.push('AUTH.mode: "on" (the default) or "off"');
  const apiKeys = value["apiKeys"] === true;
  const jwt = value["jwt"] === undefined ? undefined : jwtFrom(value["jwt"], problems);
  const sections: Record<string, unknown> = {};
  for (const [name, parse] of sectionParsers) {
    const section = value[name] === undefined ? undefined : parse(value[name], problems);
    if (section) sections[name] = section;
  }
  if (!apiKeys && !jwt && Object.keys(sections).length === 0)
    problems.push('AUTH: turn on "apiKeys": true, configure "jwt" or "signIn", or say {"mode": "off"}');
  const rateLimits: Record<string, string> = {};
  if (value["rateLimits"] !== undefined) {
    if (!isObject(value["rateLimits"]))
      problems.push("AUTH.rateLimits: an object of limit name to rate-limiting binding name");
    else
      for (const [name, binding] of Object.entries(value["rateLimits"])) {
        if (typeof binding === "string" && BINDING_NAME.test(binding)) rateLimits[name] = binding;
        else problems.push(`AUTH.rateLimits.${name}: the name of a [[ratelimits]] binding in wrangler.toml`);
      }
  }
  const scopes = strings(value["scopes"], "AUTH.scopes", problems);
  if (problems.length > 0) return fail({ reason: "invalid-auth", problems });
  // The sections' values are what their parsers returned, typed by AuthSections.
  return ok({
    mode: "on",
    apiKeys,
    ...(jwt ? { jwt } : {}),
    ...(sections as Partial<AuthSections>),
    scopes,
    rateLimits,
  });
}
