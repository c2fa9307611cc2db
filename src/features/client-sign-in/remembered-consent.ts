/**
 * Remembered consent: a user who allowed a client is not asked again while that grant
 * lives, for the same client, the same redirect URI (another installation of a Client ID
 * Metadata Document client is another app on another machine) and the same or a narrower
 * request: every scope asked was granted, and the resource asked is the one granted or,
 * when `/mcp` was granted, one of its `/mcp/<upstream>` routes (a token for `/mcp` opens
 * them already: access-token.ts). A wider request, another client, or a grant revoked or
 * expired (the library lists only live grants) asks again.
 *
 * Kept server-side, in the grant itself, not in a browser cookie: revoking the grant ends
 * the memory with it, and another browser of the same user is not asked twice.
 */
import type { AuthRequest } from "./authorization-server";
import type { GrantView } from "./grants";

/**
 * The user's grant that covers `request`, if any.
 *
 * @param aggregated the resource URL of `/mcp`, which covers every `/mcp/<upstream>`
 * @param upstreamResources the resource URLs of the `/mcp/<upstream>` routes
 */
export function coveringGrant(
  grants: readonly GrantView[],
  request: AuthRequest,
  aggregated: string,
  upstreamResources: readonly string[],
): GrantView | undefined {
  const asked = request.resource ?? aggregated;
  return grants.find((grant) => {
    if (grant.clientId !== request.clientId || grant.redirectUri !== request.redirectUri) return false;
    if (!request.scope.every((scope) => grant.scope.includes(scope))) return false;
    return grant.resource.includes(asked) || (grant.resource.includes(aggregated) && upstreamResources.includes(asked));
  });
}
