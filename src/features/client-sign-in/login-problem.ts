/**
 * Why a login at the identity provider did not give a user, for every provider (OIDC,
 * GitHub, Cloudflare Access): routes.ts turns each reason into the page the person sees.
 */
export type LoginProblem =
  | { reason: "not-set-up"; detail: string }
  | { reason: "provider-unavailable"; detail: string }
  | { reason: "refused"; detail: string }
  | { reason: "not-allowed"; detail: string };
