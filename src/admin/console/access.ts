/**
 * Cloudflare Access in front of the console, when the operator configures it: the
 * `CONSOLE_ACCESS` var names the Access team and the application's audience tag, and
 * every console request must then carry a `Cf-Access-Jwt-Assertion` that verifies
 * against the team's keys (RS256, issuer = the team domain, audience = the tag), on top
 * of the admin-token session. Verified with the gateway's own JWT verifier (auth/jwt.ts:
 * keys fetched once and cached, verified tokens remembered briefly).
 *
 *   CONSOLE_ACCESS = '{"teamDomain": "https://<team>.cloudflareaccess.com", "audience": "<AUD tag>"}'
 *
 * A CONSOLE_ACCESS that does not parse closes the console (fails closed) and says why.
 */
import { isObject } from "../../core/jsonrpc";
import type { JwtConfig } from "../../config/auth-config";
import { verifyJwt } from "../../auth/jwt";

export const ACCESS_HEADER = "cf-access-jwt-assertion";
const CERTS_PATH = "/cdn-cgi/access/certs";

/** The parsed var, or what is wrong with it; undefined when Access is not configured. */
export type AccessSetting = { ok: true; jwt: JwtConfig | undefined } | { ok: false; problem: string };

let cached: { raw: unknown; setting: AccessSetting } | undefined;

function parse(raw: unknown): AccessSetting {
  if (raw === undefined || raw === null || raw === "") return { ok: true, jwt: undefined };
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, problem: "CONSOLE_ACCESS is not JSON" };
    }
  }
  if (
    !isObject(value) ||
    typeof value["teamDomain"] !== "string" ||
    typeof value["audience"] !== "string" ||
    value["audience"] === ""
  ) {
    return {
      ok: false,
      problem: 'CONSOLE_ACCESS must be {"teamDomain": "https://<team>.cloudflareaccess.com", "audience": "<AUD tag>"}',
    };
  }
  const team = value["teamDomain"].replace(/\/+$/, "");
  const certs = value["certsUrl"] ?? `${team}${CERTS_PATH}`;
  if (!/^https:\/\/[^/]+$/.test(team) || typeof certs !== "string" || !/^https?:\/\//.test(certs))
    return { ok: false, problem: "CONSOLE_ACCESS.teamDomain is an https origin; certsUrl (optional) an http(s) URL" };
  return {
    ok: true,
    jwt: {
      issuer: team,
      audience: [value["audience"]],
      routeAudiences: {},
      jwksUrl: certs,
      rolesClaim: "groups",
      emailClaim: "email",
      algorithms: ["RS256"],
      clockToleranceS: 30,
      authorizationServers: [],
    },
  };
}

/** CONSOLE_ACCESS as configured (parsed once per value). */
export function accessSetting(raw: unknown): AccessSetting {
  if (!cached || cached.raw !== raw) cached = { raw, setting: parse(raw) };
  return cached.setting;
}

/** Undefined when the request carries a valid Access token for `jwt`; else why it is refused. */
export async function checkAccess(request: Request, jwt: JwtConfig): Promise<string | undefined> {
  const token = request.headers.get(ACCESS_HEADER);
  if (!token) return "Forbidden: this console is behind Cloudflare Access, and the request did not come through it";
  const verified = await verifyJwt(token, jwt, "");
  return verified.ok ? undefined : `Forbidden: the Cloudflare Access token was refused (${verified.reason})`;
}
