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
import { gatewayConfig } from "./gateway-config";
import { parseAuthConfig } from "./auth-config";

const MIN_SESSION_SECRET_LENGTH = 16;

const REDACTED = "[redacted]";
/** Worker secrets of the gateway itself; upstream credentials are named in UPSTREAMS. */
export const GATEWAY_SECRET_VARS = [
  "SESSION_SECRET",
  "ADMIN_TOKEN",
  "IDENTITY_SIGNING_KEY",
  "IDENTITY_SIGNING_KEY_PREVIOUS",
] as const;

/** The values of every configured secret, longest first (so one inside another goes whole). */
function secretValues(env: Readonly<Record<string, unknown>>): string[] {
  const names = new Set<string>(GATEWAY_SECRET_VARS);
  const values: string[] = [];
  // The live upstreams too: a credential stored sealed is redacted like a Worker secret.
  const upstreams = gatewayConfig(env).upstreams;
  if (upstreams.ok)
    for (const upstream of upstreams.value) {
      if (upstream.credential?.value) values.push(upstream.credential.value);
      if (upstream.credential) names.add(upstream.credential.secret);
      const auth = upstream.auth;
      if (auth && auth.type !== "userKey" && auth.clientSecret) names.add(auth.clientSecret);
    }
  const auth = parseAuthConfig(env["AUTH"]);
  if (auth.ok && auth.value.mode === "on" && auth.value.signIn?.clientSecretSecret)
    names.add(auth.value.signIn.clientSecretSecret);
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
  return withoutValues(text, secretValues(env));
}

/** `text` with each of `values` (longest first) replaced by `[redacted]`. */
function withoutValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
  return out;
}

/** The end (exclusive) of the JSON string token opening at `at`, escapes skipped; the text's end when it is not closed. */
function stringTokenEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return text.length;
}

/**
 * `text`, a JSON text an upstream wrote (an error relayed to the client), with every
 * configured secret value redacted from what its strings say once decoded: an escape
 * (`\/`, `\u0061`) spells a secret differently in the bytes, and the client's parser
 * would turn it back. Each string token with an escape is decoded alone (linear, however
 * deep the text nests) and written anew only when it held a secret; every other byte is
 * kept. Text that is not JSON is redacted as text.
 */
export function redactSecretsInJson(text: string, env: Readonly<Record<string, unknown>>): string {
  const values = secretValues(env);
  const plain = withoutValues(text, values);
  if (values.length === 0 || !plain.includes("\\")) return plain;
  let out = "";
  let copied = 0;
  for (let at = plain.indexOf('"'); at >= 0 && at < plain.length; at = plain.indexOf('"', at)) {
    const end = stringTokenEnd(plain, at);
    const token = plain.slice(at, end);
    if (token.includes("\\")) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(token);
      } catch {
        decoded = undefined;
      }
      if (typeof decoded === "string") {
        const redacted = withoutValues(decoded, values);
        if (redacted !== decoded) {
          out += plain.slice(copied, at) + JSON.stringify(redacted);
          copied = end;
        }
      }
    }
    at = end;
  }
  return copied === 0 ? plain : out + plain.slice(copied);
}

/** The first `maxChars` of `text` with every configured secret redacted (before the cut, so no start of one is left at it), for a log line. */
export function redactedStart(text: string, maxChars: number, env: Readonly<Record<string, unknown>>): string {
  return redactSecrets(text, env).slice(0, maxChars);
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
