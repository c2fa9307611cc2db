/**
 * Defence in depth for error text: whatever an upstream echoed (its credential in an
 * error, say), no configured secret value leaves the gateway in a client-visible message
 * or a log line. Error texts are written without upstream bodies in the first place;
 * this catches what slips through (an upstream's own JSON-RPC error message, a network
 * error that quotes a header).
 */
import { upstreamsFrom } from "./upstreams";

const REDACTED = "[redacted]";
/** Worker secrets of the gateway itself; upstream credentials are named in UPSTREAMS. */
const GATEWAY_SECRET_VARS = ["SESSION_SECRET", "ADMIN_TOKEN"] as const;

/** The values of every configured secret, longest first (so one inside another goes whole). */
function secretValues(env: Readonly<Record<string, unknown>>): string[] {
  const names = new Set<string>(GATEWAY_SECRET_VARS);
  const upstreams = upstreamsFrom(env["UPSTREAMS"]);
  if (upstreams.ok) for (const upstream of upstreams.value) if (upstream.credential) names.add(upstream.credential.secret);
  const values: string[] = [];
  for (const name of names) {
    const value = env[name];
    if (typeof value === "string" && value !== "") values.push(value);
  }
  return values.sort((a, b) => b.length - a.length);
}

/**
 * `text` with every configured secret value (SESSION_SECRET, ADMIN_TOKEN, each upstream's
 * credential secret) replaced by `[redacted]`.
 *
 * @example
 * redactSecrets("token Bearer s3cret refused", { GH_TOKEN: "s3cret", UPSTREAMS: '[{"name":"gh","url":"https://x/mcp","credential":{"secret":"GH_TOKEN"}}]' })
 * // "token Bearer [redacted] refused"
 */
export function redactSecrets(text: string, env: Readonly<Record<string, unknown>>): string {
  let out = text;
  for (const value of secretValues(env)) if (out.includes(value)) out = out.split(value).join(REDACTED);
  return out;
}
