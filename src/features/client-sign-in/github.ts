/**
 * GitHub as the identity provider of client sign-in (`"provider": "github"`): OAuth, not
 * OpenID Connect, so there is no discovery and no ID token. The login is GitHub's web flow
 * (an OAuth app, PKCE S256) at `githubUrl` (github.com, or a GitHub Enterprise Server),
 * driven by identity-provider.ts like any other; then who signed in is asked of the REST API
 * (`githubApiUrl`) with the token GitHub gave, which is used for these three reads and
 * dropped (never kept, never logged): `/user` (the numeric id: the principal, stable across
 * renames), `/user/emails` (the primary verified address: the email the allow lists judge)
 * and `/user/orgs` (the organizations, the groups the live role mapping reads).
 */
import type { AuthorizationServer } from "oauth4webapi";
import { readTextUpTo } from "../../core/bounded-text";
import { isObject } from "../../core/jsonrpc";
import { fail, ok, type Result } from "../../core/errors";
import type { SignInConfig } from "./config";
import type { LoginProblem } from "./login-problem";

/** What the gateway asks of GitHub: the profile, the email addresses, the organizations. */
export const GITHUB_SCOPES = ["read:user", "user:email", "read:org"];
/** The largest API answer read (a page of 100 emails or organizations is a few KB). */
const MAX_GITHUB_ANSWER_BYTES = 256 * 1024;
/** Organizations read: one page. */
const MAX_ORGS = 100;
/** How long one API request may take. */
const GITHUB_REQUEST_TIMEOUT_MS = 10_000;

/** Who GitHub says signed in. */
export type GithubIdentity = {
  readonly sub: string;
  readonly email: unknown;
  readonly emailVerified: unknown;
  readonly groups: readonly string[];
};

/** GitHub's OAuth endpoints, as oauth4webapi takes them (no metadata document to discover). */
export function githubServer(signIn: SignInConfig): AuthorizationServer {
  return {
    issuer: signIn.issuer,
    authorization_endpoint: `${signIn.issuer}/login/oauth/authorize`,
    token_endpoint: `${signIn.issuer}/login/oauth/access_token`,
  };
}

async function read(signIn: SignInConfig, token: string, path: string): Promise<unknown> {
  const response = await fetch(`${signIn.apiUrl}${path}`, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/vnd.github+json",
      "user-agent": "mcp-edge-gateway",
      "x-github-api-version": "2022-11-28",
    },
    signal: AbortSignal.timeout(GITHUB_REQUEST_TIMEOUT_MS),
  });
  const text = await readTextUpTo(response.body, MAX_GITHUB_ANSWER_BYTES);
  if (!response.ok) throw new Error(`GitHub's API answered ${path} with HTTP ${response.status}`);
  if (text === undefined) throw new Error(`GitHub's API answered ${path} with over ${MAX_GITHUB_ANSWER_BYTES} bytes`);
  return JSON.parse(text);
}

/** Who holds `token`, asked of GitHub's API. */
export async function githubIdentity(
  signIn: SignInConfig,
  token: string,
): Promise<Result<GithubIdentity, LoginProblem>> {
  let user: unknown;
  let emails: unknown;
  let orgs: unknown;
  try {
    [user, emails, orgs] = await Promise.all([
      read(signIn, token, "/user"),
      read(signIn, token, "/user/emails?per_page=100"),
      read(signIn, token, `/user/orgs?per_page=${MAX_ORGS}`),
    ]);
  } catch (error) {
    // The messages name the path and the status, never the token.
    const detail = `GitHub did not say who signed in: ${(error as Error).message}`;
    return fail({ reason: "provider-unavailable", detail });
  }
  if (!isObject(user) || typeof user["id"] !== "number") {
    return fail({ reason: "refused", detail: "GitHub's answer for the user has no id" });
  }
  const primary = Array.isArray(emails) ? emails.find((each) => isObject(each) && each["primary"] === true) : undefined;
  const logins = (Array.isArray(orgs) ? orgs : []).slice(0, MAX_ORGS);
  const groups = logins.flatMap((org) => (isObject(org) && typeof org["login"] === "string" ? [org["login"]] : []));
  return ok({
    sub: `github:${user["id"]}`,
    email: isObject(primary) ? primary["email"] : undefined,
    emailVerified: isObject(primary) ? primary["verified"] === true : false,
    groups,
  });
}
