/**
 * Cloudflare Access as the identity provider of client sign-in
 * (`"provider": "cloudflare-access"`): an Access application in front of the gateway's
 * `/oauth/authorize` logs the person in (with whatever Access is set up for: Google, Entra,
 * GitHub, one-time PINs) and sends each request with the `Cf-Access-Jwt-Assertion` header.
 * The gateway verifies that JWT against the team's JWKS (`<teamDomain>/cdn-cgi/access/certs`,
 * kept per isolate by auth/key-set.ts), for the team's issuer, the application's audience
 * (AUD tag), RS256 and its expiry, then applies the same allow lists as for an OpenID Connect
 * login. No redirect to a provider: the consent page follows at once.
 */
import { jwtVerify, type JWTPayload } from "jose";
import { fail, ok, type Result } from "../../core/errors";
import { issuerKeys, KeySetUnavailable } from "../../auth/key-set";
import type { SignInConfig } from "./config";
import type { SignedInUser } from "./authorization-server";
import type { LoginProblem } from "./login-problem";
import { emailAllowed } from "./identity-provider";

/** The header Access adds to every request it lets through. */
export const ACCESS_JWT_HEADER = "cf-access-jwt-assertion";
/** Where a team publishes its signing keys, under its team domain. */
const CERTS_PATH = "/cdn-cgi/access/certs";
/** Access signs with RS256 only. */
const ALGORITHMS = ["RS256"];
/** Clock skew allowed on `exp` and `nbf`. */
const CLOCK_TOLERANCE_S = 30;
/** The longest assertion read (an Access JWT is about 1 KB). */
const MAX_ASSERTION_CHARS = 16 * 1024;

/** The person Access let through, from the request's assertion. */
export async function accessUser(signIn: SignInConfig, request: Request): Promise<Result<SignedInUser, LoginProblem>> {
  const assertion = request.headers.get(ACCESS_JWT_HEADER);
  if (!assertion || assertion.length > MAX_ASSERTION_CHARS) {
    const detail =
      "this gateway signs you in through Cloudflare Access, and this request did not come through it: " +
      "open the sign-in from your app again";
    return fail({ reason: "refused", detail });
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(assertion, issuerKeys(`${signIn.issuer}${CERTS_PATH}`), {
      issuer: signIn.issuer,
      audience: signIn.audience!,
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_S,
    }));
  } catch (error) {
    if (error instanceof KeySetUnavailable) {
      const detail = `the Cloudflare Access keys of ${signIn.issuer} cannot be fetched`;
      return fail({ reason: "provider-unavailable", detail });
    }
    // jose's messages name the failed check (signature, audience, expiry), never the token.
    const detail = `the Cloudflare Access assertion was refused: ${(error as Error).message}`;
    return fail({ reason: "refused", detail });
  }
  const email = payload["email"];
  if (typeof payload.sub !== "string" || payload.sub === "" || typeof email !== "string" || email === "") {
    const detail = "Cloudflare Access did not say who you are (a service token cannot sign in a person)";
    return fail({ reason: "not-allowed", detail });
  }
  if (!emailAllowed(signIn, email)) {
    const detail = `${email} may not sign in to this gateway (its domain or address is not on the gateway's list)`;
    return fail({ reason: "not-allowed", detail });
  }
  return ok({ principal: payload.sub, email: email.toLowerCase(), roles: [...signIn.roles], groups: [] });
}
