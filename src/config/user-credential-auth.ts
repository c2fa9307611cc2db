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
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"];

const str = (v: unknown): v is string => typeof v === "string" && v !== "";
const url = (v: unknown): v is string => str(v) && URL.canParse(v);
const httpsOrLoopback = (v: unknown) =>
  url(v) && (v.startsWith("https:") || (v.startsWith("http:") && LOOPBACK_HOSTS.includes(new URL(v).hostname)));

/** Each field: whether a value is right, and what it must be. */
type FieldRules = Record<string, readonly [(value: unknown, raw: Record<string, unknown>) => boolean, string]>;

const USER_KEY: FieldRules = {
  header: [(v) => str(v) && HEADER_NAME.test(v) && !OWNED_HEADERS.includes(v.toLowerCase()), "a header name"],
  scheme: [(v) => typeof v === "string" && !/\s/.test(v), 'a word like "Bearer", or ""'],
  keyUrl: [(v) => url(v) && v.startsWith("https://"), "an https:// URL"],
};
const TOKEN_EXCHANGE: FieldRules = {
  tokenEndpoint: [httpsOrLoopback, "the token endpoint's https:// URL"],
  clientId: [str, "a client id"],
  clientSecret: [
    (v, raw) => str(v) && SECRET_NAME.test(v) && raw["clientId"] !== undefined,
    "a secret's NAME, with clientId",
  ],
  audience: [str, "a name"],
  resource: [url, "an absolute URI"],
  scopes: [(v) => Array.isArray(v) && v.every((s) => typeof s === "string" && SCOPE_TOKEN.test(s)), "a list of scopes"],
};

/** The problems of `raw` under `rules` (`required` must be present), each located. */
function problemsOf(raw: Record<string, unknown>, rules: FieldRules, required: readonly string[], at: string) {
  const problems: string[] = [];
  for (const key of Object.keys(raw))
    if (key !== "type" && !(key in rules)) problems.push(`${at}.${key}: unknown field (known: ${Object.keys(rules)})`);
  for (const [key, [valid, what]] of Object.entries(rules))
    if ((raw[key] !== undefined || required.includes(key)) && !valid(raw[key], raw))
      problems.push(`${at}.${key}: must be ${what}`);
  return problems;
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
  if (raw["type"] === "userKey") {
    const header = raw["header"] ?? "Authorization";
    const scheme = raw["scheme"] ?? (String(header).toLowerCase() === "authorization" ? "Bearer" : "");
    const auth = { ...raw, header, scheme };
    const problems = problemsOf(auth, USER_KEY, [], at);
    return problems.length > 0 ? { problems } : { auth: auth as UserKeyAuth, problems };
  }
  if (raw["type"] === "tokenExchange") {
    const problems = problemsOf(raw, TOKEN_EXCHANGE, ["tokenEndpoint"], at);
    return problems.length > 0 ? { problems } : { auth: raw as TokenExchangeAuth, problems };
  }
  return undefined;
}
