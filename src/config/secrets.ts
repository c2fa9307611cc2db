/**
 * The gateway's secrets: the one that seals sessions, and the redaction of every
 * configured secret value from text that leaves the gateway.
 *
 * Defence in depth for error text: whatever an upstream echoed (its credential in an
 * error, say), no configured secret value leaves the gateway in a client-visible message
 * or a log line. Error texts are written without upstream bodies in the first place;
 * this catches what slips through (an upstream's own JSON-RPC error message, a network
 * error that quotes a header).
 */
import { GatewayError } from "../core/errors";
import { INTERNAL_ERROR } from "../core/jsonrpc";
import { upstreamsFrom } from "./upstreams";

const MIN_SESSION_SECRET_LENGTH = 16;

const REDACTED = "[redacted]";
/** Worker secrets of the gateway itself; upstream credentials are named in UPSTREAMS. */
const GATEWAY_SECRET_VARS = ["SESSION_SECRET", "ADMIN_TOKEN", "IDENTITY_SIGNING_KEY", "IDENTITY_SIGNING_KEY_PREVIOUS"] as const;

/** The values of every configured secret, longest first (so one inside another goes whole). */
function secretValues(env: Readonly<Record<string, unknown>>): string[] {
  const names = new Set<string>(GATEWAY_SECRET_VARS);
  const upstreams = upstreamsFrom(env["UPSTREAMS"]);
  if (upstreams.ok)
    for (const upstream of upstreams.value) {
      if (upstream.credential) names.add(upstream.credential.secret);
      if (upstream.auth?.clientSecret) names.add(upstream.auth.clientSecret);
    }
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

/**
 * `text`, a JSON text an upstream wrote (an error body relayed to the client), with every
 * configured secret value redacted from what its strings say once decoded: an escape
 * (`\/`, `\u0061`) spells a secret differently in the bytes, and the client's parser
 * would turn it back. The text keeps its bytes unless a decoded string held a secret; it
 * is then written anew. Text that is not JSON is redacted as text.
 */
export function redactSecretsInJson(text: string, env: Readonly<Record<string, unknown>>): string {
  const values = secretValues(env);
  const plain = redactSecrets(text, env);
  if (values.length === 0 || !plain.includes("\\")) return plain;
  let parsed: unknown;
  try {
    parsed = JSON.parse(plain);
  } catch {
    return plain;
  }
  let changed = false;
  const redacted = (value: string): string => {
    let out = value;
    for (const secret of values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    if (out !== value) changed = true;
    return out;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return redacted(value);
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redacted(key), walk(inner)]));
    return value;
  };
  const out = walk(parsed);
  return changed ? JSON.stringify(out) : plain;
}

/**
 * The first `maxChars` of `text` with every configured secret redacted, for a log line:
 * redacted before it is cut, so a secret across the cut leaves no start of itself.
 */
export function redactedStart(text: string, maxChars: number, env: Readonly<Record<string, unknown>>): string {
  const longest = secretValues(env)[0]?.length ?? 0;
  return redactSecrets(text.slice(0, maxChars + longest), env).slice(0, maxChars);
}

/** The secret that seals sessions and signs cursors and URLs; refusing to run without one is the safe default. */
export function sessionSecret(env: Readonly<Record<string, unknown>>): string {
  const secret = env["SESSION_SECRET"];
  if (typeof secret !== "string" || secret.length < MIN_SESSION_SECRET_LENGTH) {
    throw new GatewayError(
      500,
      INTERNAL_ERROR,
      `Gateway configuration error: the SESSION_SECRET secret is not set (or shorter than ${MIN_SESSION_SECRET_LENGTH} characters); set one with \`openssl rand -hex 32 | wrangler secret put SESSION_SECRET\``,
    );
  }
  return secret;
}
