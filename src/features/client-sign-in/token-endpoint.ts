/**
 * POST /oauth/token, in front of the library: the request's form is read once, up to
 * MAX_TOKEN_FORM_BYTES (a token request is a few hundred bytes: a code, a verifier, a
 * client id that may be a URL), and handed to the library; a refresh the library refuses
 * is an audit event. The event names the user and the grant when the refresh token names a
 * user the gateway knows (its first two fields, `<user>:<grant>:`, are identifiers; the
 * third, the secret, is never read into anything) and the OAuth error the client got. A
 * revocation (RFC 7009) drops this isolate's checked copies of the grant's tokens.
 */
import { readTextUpTo } from "../../core/bounded-text";
import { isObject } from "../../core/jsonrpc";
import { auditGrant, UNKNOWN_USER, type GrantAuditSink } from "./grant-audit";
import { USER_INDEX_PREFIX } from "./grants";
import { forgetSignInTokens } from "./token-cache";

/** The largest token request read; a larger one is refused (413) before the library sees it. */
export const MAX_TOKEN_FORM_BYTES = 64 * 1024;
/** The longest client id put in an event (a Client ID Metadata Document URL is one). */
const MAX_EVENT_CLIENT_ID_CHARS = 512;

type TokenEndpointOptions = {
  readonly request: Request;
  /** The library's answer to the request rebuilt from the form read. */
  readonly library: (request: Request) => Promise<Response>;
  /** Where the index of signed-in users is (the library's namespace). */
  readonly kv: KVNamespace;
  readonly audit: GrantAuditSink;
};

/** The user and grant a refresh token names, when the user is one the gateway indexed. */
type Named = { principal: string; email?: string | undefined; grantId?: string };

async function namedBy(kv: KVNamespace, refreshToken: string): Promise<Named> {
  const [userId, grantId, secret] = refreshToken.split(":", 3);
  if (!userId || !grantId || secret === undefined || !/^[0-9a-f]{32}$/.test(userId)) return { principal: UNKNOWN_USER };
  const user: unknown = await kv.get(`${USER_INDEX_PREFIX}${userId}`, "json");
  if (!isObject(user) || typeof user["principal"] !== "string") return { principal: UNKNOWN_USER };
  const email = typeof user["email"] === "string" ? user["email"] : undefined;
  return { principal: user["principal"], email, grantId };
}

/** Answers a token request through the library, auditing a refused refresh. */
export async function tokenEndpoint({ request, library, kv, audit }: TokenEndpointOptions): Promise<Response> {
  const text = await readTextUpTo(request.body, MAX_TOKEN_FORM_BYTES);
  if (text === undefined) {
    const description = `a token request is at most ${MAX_TOKEN_FORM_BYTES / 1024} KiB`;
    const headers = { "cache-control": "no-store" };
    return Response.json({ error: "invalid_request", error_description: description }, { status: 413, headers });
  }
  const answer = await library(new Request(request, { body: text }));
  const form = new URLSearchParams(text);
  const revoked = form.get("grant_type") === null ? form.get("token")?.split(":") : undefined;
  // An RFC 7009 revocation: this isolate's checked copies of the grant's tokens go at once (token-cache.ts).
  if (revoked?.length === 3) forgetSignInTokens(revoked[0]!, revoked[1]);
  if (answer.status === 200 || form.get("grant_type") !== "refresh_token" || !audit.enabled) return answer;
  const said: unknown = await answer
    .clone()
    .json()
    .catch(() => undefined);
  const named = await namedBy(kv, form.get("refresh_token") ?? "");
  auditGrant(audit, {
    kind: "refresh-failed",
    ...named,
    clientId: form.get("client_id")?.slice(0, MAX_EVENT_CLIENT_ID_CHARS),
    error: isObject(said) && typeof said["error"] === "string" ? said["error"] : `http-${answer.status}`,
  });
  return answer;
}
