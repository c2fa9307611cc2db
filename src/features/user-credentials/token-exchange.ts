/**
 * Token exchange (RFC 8693) for `auth: {"type": "tokenExchange"}` upstreams: the caller's own
 * access token is exchanged at the identity provider's token endpoint for one aimed at the
 * upstream (`resource` = the upstream's URL unless configured, `audience` when configured),
 * so the upstream sees the same user under its own token and never the client's.
 *
 * What is exchanged (credential-source.ts decides): a JWT of the issuer in AUTH.jwt as it
 * came; for a caller of the gateway's own sign-in the gateway's identity assertion for the
 * upstream, which the provider trusts through the gateway's JWKS.
 *
 * Exchanged tokens are kept in isolate memory per upstream, principal and subject token
 * (SHA-256), until EXCHANGE_REUSE_MARGIN_MS before they expire; at most
 * MAX_EXCHANGED_TOKENS, the oldest dropped first. A token without `expires_in` is not kept.
 *
 * This file is bundled into the module loaded on demand (lazy-entry.ts): what the subject is
 * is decided in the main module (credential-source.ts), which holds the gateway's state.
 */
import { fail, ok, type Result } from "../../core/errors";
import { isObject } from "../../core/jsonrpc";
import { readTextUpTo } from "../../core/bounded-text";
import type { UpstreamConfig } from "../../config/upstreams";
import type { TokenExchangeAuth } from "../../config/user-credential-auth";
import type { UserCredentialProblem } from "../../upstream/upstream-session";

const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** Exchanged tokens one isolate keeps (a bound on memory, whatever the number of callers). */
export const MAX_EXCHANGED_TOKENS = 1_000;
/** A kept token this close to its expiry is exchanged again. */
export const EXCHANGE_REUSE_MARGIN_MS = 30_000;
/** The longest a kept token is used, whatever `expires_in` said. */
export const MAX_EXCHANGE_CACHE_MS = 60 * 60_000;
/** The most of the identity provider's answer that is read. */
export const MAX_EXCHANGE_ANSWER_BYTES = 64 * 1024;
/** How long the identity provider has to answer. */
export const EXCHANGE_TIMEOUT_MS = 10_000;

const exchanged = new Map<string, { readonly token: string; readonly until: number }>();

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...bytes));
}

async function cacheKey(
  upstream: UpstreamConfig,
  resource: string,
  principal: string,
  subject: Subject,
): Promise<string> {
  return JSON.stringify([upstream.name, resource, principal, await digest(subject.token)]);
}

function unavailable(detail: string): Result<never, UserCredentialProblem> {
  return fail({ reason: "credential-unavailable", detail });
}

/** What is exchanged: the token and its RFC 8693 type. */
export type Subject = { readonly token: string; readonly type: string };

/** The body and headers of the exchange request. */
function exchangeRequest(
  auth: TokenExchangeAuth,
  resource: string,
  subject: Subject,
  env: Readonly<Record<string, unknown>>,
) {
  const body = new URLSearchParams({
    grant_type: GRANT_TYPE,
    subject_token: subject.token,
    subject_token_type: subject.type,
    requested_token_type: ACCESS_TOKEN_TYPE,
    resource,
  });
  if (auth.audience !== undefined) body.set("audience", auth.audience);
  if (auth.scopes !== undefined && auth.scopes.length > 0) body.set("scope", auth.scopes.join(" "));
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  const secret = auth.clientSecret === undefined ? undefined : env[auth.clientSecret];
  if (auth.clientId !== undefined && typeof secret === "string" && secret !== "") {
    // client_secret_basic (RFC 6749 §2.3.1): both parts form-encoded first.
    const pair = `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(secret)}`;
    headers["authorization"] = `Basic ${btoa(pair)}`;
  } else if (auth.clientId !== undefined) body.set("client_id", auth.clientId);
  return { body: body.toString(), headers };
}

/** The provider's answer read: the token and how long it may be kept, or why there is none. */
async function readAnswer(
  response: Response,
): Promise<Result<{ token: string; keepMs: number }, UserCredentialProblem>> {
  const text = await readTextUpTo(response.body, MAX_EXCHANGE_ANSWER_BYTES);
  let answer: unknown;
  try {
    answer = text === undefined ? undefined : JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (!response.ok) {
    const code = isObject(answer) && typeof answer["error"] === "string" ? `, ${answer["error"].slice(0, 64)}` : "";
    return unavailable(`the identity provider refused the exchange (HTTP ${response.status}${code})`);
  }
  const token = isObject(answer) ? answer["access_token"] : undefined;
  const type = isObject(answer) ? answer["token_type"] : undefined;
  if (typeof token !== "string" || token === "" || !/^[\x21-\x7E]+$/.test(token))
    return unavailable("the identity provider's answer holds no access_token");
  if (typeof type === "string" && !["bearer", "n_a"].includes(type.toLowerCase()))
    return unavailable(`the identity provider issued a ${type.slice(0, 32)} token, not a bearer token`);
  const expiresIn = isObject(answer) ? answer["expires_in"] : undefined;
  const keepMs =
    typeof expiresIn === "number" && Number.isFinite(expiresIn)
      ? Math.min(expiresIn * 1000 - EXCHANGE_REUSE_MARGIN_MS, MAX_EXCHANGE_CACHE_MS)
      : 0;
  return ok({ token, keepMs });
}

/**
 * The token to send `upstream` for `principal`, whose `subject` it is exchanged for: a kept
 * one, or one exchanged now.
 *
 * @example
 * const token = await exchangedToken(upstream, auth, "alice", { token: jwt, type: "urn:ietf:params:oauth:token-type:access_token" }, env);
 */
export async function exchangedToken(
  upstream: UpstreamConfig,
  auth: TokenExchangeAuth,
  principal: string,
  subject: Subject,
  env: Readonly<Record<string, unknown>>,
): Promise<Result<string, UserCredentialProblem>> {
  const resource = auth.resource ?? upstream.url;
  const key = await cacheKey(upstream, resource, principal, subject);
  const kept = exchanged.get(key);
  if (kept && kept.until > Date.now()) return ok(kept.token);
  exchanged.delete(key);
  const secret = auth.clientSecret === undefined ? undefined : env[auth.clientSecret];
  if (auth.clientSecret !== undefined && (typeof secret !== "string" || secret === ""))
    // Not a client without authentication instead: the operator named a secret, and it is missing.
    return unavailable(
      `the Worker secret ${auth.clientSecret} that authenticates the gateway at the identity provider is not set ` +
        `(an operator sets it: wrangler secret put ${auth.clientSecret})`,
    );
  let response: Response;
  try {
    const { body, headers } = exchangeRequest(auth, resource, subject, env);
    const signal = AbortSignal.timeout(EXCHANGE_TIMEOUT_MS);
    response = await fetch(auth.tokenEndpoint, { method: "POST", body, headers, redirect: "manual", signal });
  } catch (error) {
    return unavailable(`the identity provider could not be reached (${(error as Error).name})`);
  }
  const answer = await readAnswer(response);
  if (!answer.ok) return answer;
  if (answer.value.keepMs > 0) {
    if (exchanged.size >= MAX_EXCHANGED_TOKENS) exchanged.delete(exchanged.keys().next().value!);
    exchanged.set(key, { token: answer.value.token, until: Date.now() + answer.value.keepMs });
  }
  return ok(answer.value.token);
}

/** Forgets the token kept for `principal`'s `subject` at `upstream` (the upstream refused it). */
export async function forgetExchanged(
  upstream: UpstreamConfig,
  auth: TokenExchangeAuth,
  principal: string,
  subject: Subject,
): Promise<void> {
  exchanged.delete(await cacheKey(upstream, auth.resource ?? upstream.url, principal, subject));
}
