/**
 * The last step of a sign-in: the library completes the authorization (a code for the
 * client, the grant stored encrypted), the user is noted in the index operators list grants
 * from (grants.ts) and the grant is an audit event. The grant keeps the user (principal,
 * email, roles, the claims the live role mapping reads) as its props, and the client's name,
 * the user's principal and email as its metadata, so the grant can be shown without a token.
 */
import type { AuthRequest, OAuthHelpers, SignedInUser } from "./authorization-server";
import { GRANT_TTL_S } from "./authorization-server";
import { auditGrant, type GrantAuditSink } from "./grant-audit";
import { indexUser, libraryUserId, type GrantMetadata } from "./grants";
import { forgetSignInTokens } from "./token-cache";

export type IssueOptions = {
  readonly oauth: OAuthHelpers;
  /** Where the user index is kept: the library's namespace. */
  readonly kv: KVNamespace;
  readonly issuer: string;
  readonly request: AuthRequest;
  readonly user: SignedInUser;
  /** "consent": the user pressed Allow; "remembered consent": a live grant covers this request. */
  readonly by: "consent" | "remembered consent";
  readonly audit: GrantAuditSink;
};

/** Completes the authorization for `user`; the client's redirect URI with the code. */
export async function issueGrant({ oauth, kv, issuer, request, user, by, audit }: IssueOptions): Promise<string> {
  const userId = await libraryUserId(issuer, user.principal);
  const { clientName } = await oauth.describeConsent(request);
  const metadata: GrantMetadata = { email: user.email, principal: user.principal, clientName };
  const scope = request.scope;
  const { redirectTo } = await oauth.completeAuthorization({ request, userId, metadata, scope, props: user });
  // The library revoked the user's earlier grants to this client: their tokens checked here go too.
  forgetSignInTokens(userId);
  try {
    await indexUser(kv, userId, user, GRANT_TTL_S);
  } catch (error) {
    // KV takes one write a second per key: a second grant of the same user within it keeps the index as it was.
    const why = (error as Error).message;
    console.warn(`mcp-edge-gateway: client sign-in: the index of signed-in users was not updated: ${why}`);
  }
  const { principal, email } = user;
  auditGrant(audit, { kind: "grant", principal, email, clientId: request.clientId, resource: request.resource, by });
  return redirectTo;
}
