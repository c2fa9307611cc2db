/**
 * The ADMIN_TOKEN secret as the admin surface (API and console) sees it: unset (the
 * surface is off), too short to resist guessing (the surface stays closed and says how to
 * make a good one), or usable. A token shorter than MIN_ADMIN_TOKEN_CHARS is refused
 * whatever it holds: 32 random hex characters are 128 bits, beyond any guessing within the
 * per-source throttle (admin-throttle.ts).
 */

/** The shortest ADMIN_TOKEN the admin surface opens for, in characters. */
export const MIN_ADMIN_TOKEN_CHARS = 32;
/** Commands that print a token long enough (64 hex characters). */
export const MAKE_ADMIN_TOKEN = "openssl rand -hex 32";
export const MAKE_ADMIN_TOKEN_WITH_NODE = `node -e "console.log(require('node:crypto').randomBytes(32).toString('hex'))"`;

/** What the ADMIN_TOKEN secret allows. */
export type AdminTokenState =
  | { readonly state: "off" }
  | { readonly state: "too-short" }
  | { readonly state: "on"; readonly token: string };

/** The state of the ADMIN_TOKEN binding `value`. */
export function adminTokenState(value: unknown): AdminTokenState {
  if (typeof value !== "string" || value === "") return { state: "off" };
  return value.length < MIN_ADMIN_TOKEN_CHARS ? { state: "too-short" } : { state: "on", token: value };
}

/** What the admin surface answers while ADMIN_TOKEN is too short (never its length or any part of it). */
export const ADMIN_TOKEN_TOO_SHORT_MESSAGE =
  `Gateway configuration error: ADMIN_TOKEN is shorter than ${MIN_ADMIN_TOKEN_CHARS} characters, ` +
  "so the admin API and console stay closed. " +
  `Make a long random one with \`${MAKE_ADMIN_TOKEN}\` (or \`${MAKE_ADMIN_TOKEN_WITH_NODE}\`) and set it: ` +
  "npx wrangler secret put ADMIN_TOKEN (deployed), ADMIN_TOKEN=<token> in .dev.vars (npm start). " +
  "See docs/admin-api.md.";
