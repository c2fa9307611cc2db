/**
 * `AUTH.signIn`: the gateway as an OAuth authorization server for its clients, signing
 * users in at the operator's OpenID Connect provider, or through Cloudflare Access in front
 * of the gateway (`"provider": "cloudflare-access"`, `teamDomain` and `audience`). Parsed with the rest of AUTH
 * (config/auth-config.ts); every problem is located ("AUTH.signIn.issuer: ...") and none
 * quotes a secret's value (only the names of the Worker secrets are in config).
 *
 *   "signIn": {"issuer": "https://accounts.google.com", "clientId": "SIGN_IN_CLIENT_ID",
 *              "clientSecret": "SIGN_IN_CLIENT_SECRET", "allowedDomains": ["example.com"],
 *              "rolesClaim": "groups", "roles": ["staff"]}
 */
import { isObject } from "../../core/jsonrpc";

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A domain as it follows the @ of an email address: labels of letters, digits and hyphens. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;
/** Always asked: the ID token must say who signed in and their email. */
const REQUIRED_SCOPES = ["openid", "email"];
const DEFAULT_EXTRA_SCOPES = ["profile"];
const KNOWN_FIELDS = new Set([
  "provider",
  "issuer",
  "teamDomain",
  "audience",
  "githubUrl",
  "githubApiUrl",
  "clientId",
  "clientSecret",
  "allowedDomains",
  "allowedEmails",
  "rolesClaim",
  "roles",
  "scopes",
]);
/** The kinds of identity provider: any OpenID Connect provider, or Cloudflare Access in front of the gateway. */
const PROVIDERS = ["oidc", "github", "cloudflare-access"] as const;
/** GitHub's web and API origins (GitHub Enterprise Server: `https://<host>` and `https://<host>/api/v3`). */
const GITHUB_URL = "https://github.com";
const GITHUB_API_URL = "https://api.github.com";

export type SignInConfig = {
  /** "oidc" (default): a login at `issuer`; "cloudflare-access": the Access JWT the browser arrives with. */
  readonly provider: (typeof PROVIDERS)[number];
  /** The operator's OpenID Connect provider (its issuer URL; discovery finds the rest); for Access, the team domain. */
  readonly issuer: string;
  /** For Access: the application's AUD tag, the audience of its JWTs. */
  readonly audience?: string;
  /** For GitHub: its REST API's base URL (`issuer` is then its web origin). */
  readonly apiUrl?: string;
  /** Names of the Worker secrets holding the client id and (for a confidential client) its secret. */
  readonly clientIdSecret: string;
  readonly clientSecretSecret?: string;
  /** Who may sign in: an email of one of these domains (lower case), or one of these emails. */
  readonly allowedDomains: readonly string[];
  readonly allowedEmails: readonly string[];
  /** A dotted path into the ID token's claims whose value (a list, or space-separated) are roles. */
  readonly rolesClaim?: string;
  /** Roles every signed-in user has, besides the claim's. */
  readonly roles: readonly string[];
  /** Scopes asked of the provider; always with openid and email. */
  readonly scopes: readonly string[];
};

function list(value: unknown, at: string, problems: string[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item !== "")) {
    problems.push(`${at}: a list of non-empty strings`);
    return [];
  }
  return value as string[];
}

function secretName(value: unknown, at: string, problems: string[]): string {
  if (typeof value === "string" && SECRET_NAME.test(value)) return value;
  problems.push(`${at}: the name of a Worker secret (wrangler secret put NAME), not the value itself`);
  return "";
}

/**
 * `AUTH.signIn`, parsed; problems are pushed to `problems`.
 *
 * @example
 * signInFrom({ issuer: "https://idp.example", clientId: "SIGN_IN_CLIENT_ID", allowedDomains: ["example.com"] }, problems)
 */
export function signInFrom(raw: unknown, problems: string[]): SignInConfig | undefined {
  if (!isObject(raw)) {
    problems.push("AUTH.signIn: an object with issuer, clientId and allowedDomains or allowedEmails");
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(key))
      problems.push(`AUTH.signIn.${key}: not a field of signIn (${[...KNOWN_FIELDS].join(", ")})`);
  }
  const provider = raw["provider"] ?? "oidc";
  if (!(PROVIDERS as readonly unknown[]).includes(provider))
    problems.push(`AUTH.signIn.provider: one of ${PROVIDERS.join(", ")}`);
  const access = provider === "cloudflare-access";
  const github = provider === "github";
  const issuer = access
    ? providerUrl(
        raw["teamDomain"],
        "AUTH.signIn.teamDomain",
        "your Cloudflare Access team domain (https://<team>.cloudflareaccess.com)",
        problems,
      ).replace(/\/$/, "")
    : github
      ? providerUrl(
          raw["githubUrl"] ?? GITHUB_URL,
          "AUTH.signIn.githubUrl",
          "GitHub's web origin (GitHub Enterprise Server: https://<host>)",
          problems,
        ).replace(/\/$/, "")
      : providerUrl(raw["issuer"], "AUTH.signIn.issuer", "the issuer URL of your OpenID Connect provider", problems);
  const apiUrl = github
    ? providerUrl(
        raw["githubApiUrl"] ?? GITHUB_API_URL,
        "AUTH.signIn.githubApiUrl",
        "GitHub's API URL (GitHub Enterprise Server: https://<host>/api/v3)",
        problems,
      ).replace(/\/$/, "")
    : undefined;
  if (github && raw["clientSecret"] === undefined)
    problems.push(
      "AUTH.signIn.clientSecret: GitHub OAuth apps are confidential: the name of the Worker secret holding the app's client secret",
    );
  let audience: string | undefined;
  if (access) {
    if (typeof raw["audience"] === "string" && raw["audience"] !== "") audience = raw["audience"];
    else problems.push("AUTH.signIn.audience: the Application Audience (AUD) tag of the gateway's Access application");
  }
  const clientIdSecret = access ? "" : secretName(raw["clientId"], "AUTH.signIn.clientId", problems);
  const clientSecretSecret =
    raw["clientSecret"] === undefined
      ? undefined
      : secretName(raw["clientSecret"], "AUTH.signIn.clientSecret", problems);
  const allowedDomains = list(raw["allowedDomains"], "AUTH.signIn.allowedDomains", problems).map((d) =>
    d.toLowerCase(),
  );
  for (const domain of allowedDomains) {
    if (!DOMAIN.test(domain))
      problems.push(`AUTH.signIn.allowedDomains: "${domain}" is not a domain (write it as after the @: "example.com")`);
  }
  const allowedEmails = list(raw["allowedEmails"], "AUTH.signIn.allowedEmails", problems).map((e) => e.toLowerCase());
  for (const email of allowedEmails)
    if (!EMAIL.test(email)) problems.push(`AUTH.signIn.allowedEmails: "${email}" is not an email address`);
  if (allowedDomains.length === 0 && allowedEmails.length === 0) {
    problems.push(
      'AUTH.signIn: say who may sign in, with allowedDomains ("example.com") or allowedEmails; nobody could otherwise',
    );
  }
  let rolesClaim: string | undefined;
  if (raw["rolesClaim"] !== undefined) {
    if (typeof raw["rolesClaim"] === "string" && raw["rolesClaim"] !== "") rolesClaim = raw["rolesClaim"];
    else
      problems.push(
        'AUTH.signIn.rolesClaim: a claim of the ID token, or a dotted path into it ("groups", "realm_access.roles")',
      );
  }
  if (github && rolesClaim !== undefined && rolesClaim !== "orgs")
    problems.push('AUTH.signIn.rolesClaim: with GitHub, "orgs" (the user\'s organizations become roles) or none');
  const roles = list(raw["roles"], "AUTH.signIn.roles", problems);
  const extra =
    raw["scopes"] === undefined ? DEFAULT_EXTRA_SCOPES : list(raw["scopes"], "AUTH.signIn.scopes", problems);
  const scopes = [...new Set([...REQUIRED_SCOPES, ...extra])];
  const config: { -readonly [K in keyof SignInConfig]: SignInConfig[K] } = {
    provider: access ? "cloudflare-access" : github ? "github" : "oidc",
    issuer,
    clientIdSecret,
    allowedDomains,
    allowedEmails,
    roles,
    scopes,
  };
  if (audience !== undefined) config.audience = audience;
  if (apiUrl !== undefined) config.apiUrl = apiUrl;
  if (clientSecretSecret !== undefined) config.clientSecretSecret = clientSecretSecret;
  if (rolesClaim !== undefined) config.rolesClaim = rolesClaim;
  return config;
}

/** An https URL (http on a loopback host) without query or fragment, or "" with the problem pushed. */
function providerUrl(raw: unknown, at: string, what: string, problems: string[]): string {
  if (typeof raw !== "string" || !URL.canParse(raw)) {
    problems.push(`${at}: ${what}`);
    return "";
  }
  const url = new URL(raw);
  const loopback = url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback))
    problems.push(`${at}: an https URL (http only on a loopback host)`);
  else if (url.search !== "" || url.hash !== "") problems.push(`${at}: no query or fragment`);
  else return raw;
  return "";
}
