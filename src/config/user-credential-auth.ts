/**
 * The `auth` types of an upstream that takes each user's own credential without an OAuth
 * sign-in of its own (features/user-credentials/), validated with every problem located:
 *
 * - `{"type": "userKey", "header"?: "Authorization", "scheme"?: "Bearer"}`: each user pastes
 *   an API key or personal access token once; it goes in `header`, after `scheme` when one is
 *   set ("Bearer" by default for Authorization, none for any other header).
 * - `{"type": "tokenExchange", "tokenEndpoint": "https://idp/token", ...}`: the caller's own
 *   access token is exchanged at the identity provider (RFC 8693) for one aimed at the
 *   upstream (`resource`, by default the upstream's URL; `audience` when the provider wants one).
 */
import { isObject } from "../core/jsonrpc";

/** Each user pastes a key for the upstream (features/user-credentials/user-key-page.ts). */
export type UserKeyAuth = {
  readonly type: "userKey";
  /** The header the key goes in. */
  readonly header: string;
  /** Put before the key with a space ("Bearer"); "" sends the key alone. */
  readonly scheme: string;
  /** Where users create a key (an https URL), shown on the page that asks for it. */
  readonly keyUrl?: string;
};

/** The caller's own token exchanged for the upstream's (features/user-credentials/token-exchange.ts). */
export type TokenExchangeAuth = {
  readonly type: "tokenExchange";
  /** The identity provider's token endpoint (https; http to loopback). */
  readonly tokenEndpoint: string;
  /** The gateway's client at the identity provider, when it wants one authenticated. */
  readonly clientId?: string;
  /** The NAME of the Worker secret holding that client's secret. */
  readonly clientSecret?: string;
  /** `audience` of the request (a logical name the provider knows the upstream by). */
  readonly audience?: string;
  /** `resource` of the request; absent: the upstream's URL. */
  readonly resource?: string;
  readonly scopes?: readonly string[];
};

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the gateway sets itself on every upstream request. */
const OWNED_HEADERS = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "content-length", "host"];
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const USER_KEY_FIELDS = ["type", "header", "scheme", "keyUrl"];
const EXCHANGE_FIELDS = ["type", "tokenEndpoint", "clientId", "clientSecret", "audience", "resource", "scopes"];

function isHttpsOrLoopback(value: unknown): boolean {
  if (typeof value !== "string" || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    url.protocol === "https:" ||
    (url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname))
  );
}

function unknownFields(raw: Record<string, unknown>, known: readonly string[], at: string): string[] {
  return Object.keys(raw)
    .filter((key) => !known.includes(key))
    .map((key) => `${at}.${key}: unknown field (known: ${known.join(", ")})`);
}

function parseUserKey(raw: Record<string, unknown>, at: string): { auth?: UserKeyAuth; problems: string[] } {
  const problems = unknownFields(raw, USER_KEY_FIELDS, at);
  const header = raw["header"] ?? "Authorization";
  const scheme = raw["scheme"] ?? (String(header).toLowerCase() === "authorization" ? "Bearer" : "");
  const keyUrl = raw["keyUrl"];
  if (typeof header !== "string" || !HEADER_NAME.test(header) || OWNED_HEADERS.includes(header.toLowerCase()))
    problems.push(`${at}.header: must be an HTTP header name the gateway does not set itself, like "X-Api-Key"`);
  if (typeof scheme !== "string" || /\s/.test(scheme))
    problems.push(`${at}.scheme: must be a word such as "Bearer" or "token", or "" for the key alone`);
  if (keyUrl !== undefined && (typeof keyUrl !== "string" || !keyUrl.startsWith("https://") || !URL.canParse(keyUrl)))
    problems.push(`${at}.keyUrl: must be the https:// address of the page where users create a key`);
  if (problems.length > 0) return { problems };
  const auth = { type: "userKey" as const, header: header as string, scheme: scheme as string };
  return { auth: typeof keyUrl === "string" ? { ...auth, keyUrl } : auth, problems };
}

function parseTokenExchange(
  raw: Record<string, unknown>,
  at: string,
): { auth?: TokenExchangeAuth; problems: string[] } {
  const problems = unknownFields(raw, EXCHANGE_FIELDS, at);
  const { tokenEndpoint, clientId, clientSecret, audience, resource, scopes } = raw;
  if (!isHttpsOrLoopback(tokenEndpoint))
    problems.push(`${at}.tokenEndpoint: must be the identity provider's token endpoint, an https:// URL`);
  if (clientId !== undefined && (typeof clientId !== "string" || clientId === ""))
    problems.push(`${at}.clientId: must be the gateway's client id at the identity provider`);
  if (clientSecret !== undefined && (typeof clientSecret !== "string" || !SECRET_NAME.test(clientSecret)))
    problems.push(
      `${at}.clientSecret: must be the NAME of a Worker secret holding the client secret, never the secret`,
    );
  else if (clientSecret !== undefined && clientId === undefined) problems.push(`${at}.clientSecret: needs "clientId"`);
  if (audience !== undefined && (typeof audience !== "string" || audience === ""))
    problems.push(`${at}.audience: must be the name the identity provider knows the upstream by`);
  if (resource !== undefined && (typeof resource !== "string" || !URL.canParse(resource)))
    problems.push(`${at}.resource: must be an absolute URI (default: the upstream's URL)`);
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || scopes.some((s) => typeof s !== "string" || !SCOPE_TOKEN.test(s)))
  )
    problems.push(`${at}.scopes: must be a list of scope names without spaces, like ["read"]`);
  if (problems.length > 0) return { problems };
  return {
    auth: {
      type: "tokenExchange",
      tokenEndpoint: tokenEndpoint as string,
      ...(typeof clientId === "string" ? { clientId } : {}),
      ...(typeof clientSecret === "string" ? { clientSecret } : {}),
      ...(typeof audience === "string" ? { audience } : {}),
      ...(typeof resource === "string" ? { resource } : {}),
      ...(Array.isArray(scopes) ? { scopes: scopes as string[] } : {}),
    },
    problems,
  };
}

/**
 * Checks a `userKey` or `tokenExchange` auth (`raw.type` says which); undefined for another type.
 *
 * @example
 * parseUserCredentialAuth({ type: "userKey", header: "X-Api-Key" }, "UPSTREAMS[0].auth");
 * // { auth: { type: "userKey", header: "X-Api-Key", scheme: "" }, problems: [] }
 */
export function parseUserCredentialAuth(
  raw: unknown,
  at: string,
): { auth?: UserKeyAuth | TokenExchangeAuth; problems: string[] } | undefined {
  if (!isObject(raw)) return undefined;
  if (raw["type"] === "userKey") return parseUserKey(raw, at);
  if (raw["type"] === "tokenExchange") return parseTokenExchange(raw, at);
  return undefined;
}
