/**
 * A live upstream as an admin sends it (`PUT /admin/upstreams/<name>`), checked and turned
 * into what is stored: the `UPSTREAMS` rules (config/upstreams.ts) plus what only a live
 * upstream needs: an https URL (http only to a loopback host while the gateway itself is
 * reached on one, as under `npm start`), a service binding this Worker has, a credential
 * that names a Worker secret that is set (never one of the gateway's own), or a value to
 * seal. Every problem is located by a JSON Pointer into the body.
 */
import { isObject } from "../../core/jsonrpc";
import type { UpstreamConfig } from "../../config/upstreams";
import { GATEWAY_SECRET_VARS } from "../../config/secrets";
import type { DocumentProblem } from "../../storage/document-store";
import { checkEntry, type StoredEntry } from "./document";
import { openCredential, sealCredential } from "./sealed-credential";

/** The longest credential value accepted, in characters (a token, an API key). */
export const MAX_CREDENTIAL_CHARS = 8 * 1024;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export type Candidate = { ok: true; entry: StoredEntry; config: UpstreamConfig } | { ok: false; problems: DocumentProblem[] };

/** What a candidate is checked against. */
export type CandidateContext = {
  readonly env: Readonly<Record<string, unknown>>;
  /** The URL the admin request reached: a loopback host means the gateway runs locally. */
  readonly requestUrl: URL;
  /** The entry stored under this name now, if any (its sealed credential may be kept). */
  readonly existing?: StoredEntry;
  readonly secret: () => string;
};

type CredentialInput = { stored?: Record<string, unknown>; value?: string; problems: DocumentProblem[] };

const CREDENTIAL_SHAPE = 'must be {"secret": "NAME_OF_A_WORKER_SECRET"} or {"value": "<the credential>"} (sealed, never shown back), ' +
  'or {"sealed": true} to keep the stored one; "header" (default Authorization) and "scheme" (default Bearer there) beside it';

async function credentialOf(name: string, raw: unknown, context: CandidateContext): Promise<CredentialInput> {
  const at = "/credential";
  if (!isObject(raw)) return { problems: [{ path: at, message: CREDENTIAL_SHAPE }] };
  const { secret, value, sealed, ...rest } = raw;
  const forms = [secret, value, sealed].filter((form) => form !== undefined).length;
  if (forms !== 1) return { problems: [{ path: at, message: CREDENTIAL_SHAPE }] };
  if (secret !== undefined) {
    if (typeof secret !== "string" || secret === "") return { problems: [{ path: `${at}/secret`, message: "must be the name of a Worker secret" }] };
    if ((GATEWAY_SECRET_VARS as readonly string[]).includes(secret)) return { problems: [{ path: `${at}/secret`, message: `"${secret}" is the gateway's own secret and is never sent upstream` }] };
    const set = context.env[secret];
    if (typeof set !== "string" || set === "") return { problems: [{ path: `${at}/secret`, message: `no Worker secret named "${secret}" is set (wrangler secret put ${secret}), or store the value itself with {"value": ...}` }] };
    return { stored: raw, problems: [] };
  }
  if (value !== undefined) {
    if (typeof value !== "string" || value === "" || value.length > MAX_CREDENTIAL_CHARS) return { problems: [{ path: `${at}/value`, message: `must be a non-empty string of at most ${MAX_CREDENTIAL_CHARS} characters` }] };
    if (/[\r\n]/.test(value)) return { problems: [{ path: `${at}/value`, message: "must be one line (it is sent as a header value)" }] };
    return { stored: { ...rest, sealed: await sealCredential(context.secret(), name, value) }, value, problems: [] };
  }
  const kept = context.existing?.["credential"];
  if (sealed !== true || !isObject(kept) || typeof kept["sealed"] !== "string") return { problems: [{ path: `${at}/sealed`, message: 'true keeps the stored credential, and this upstream has none stored; send {"value": ...}' }] };
  const opened = await openCredential(context.secret(), name, kept["sealed"]);
  if (opened === undefined) return { problems: [{ path: `${at}/sealed`, message: 'the stored credential does not open with this SESSION_SECRET (was it rotated?); send {"value": ...}' }] };
  return { stored: { ...rest, sealed: kept["sealed"] }, value: opened, problems: [] };
}

function placeProblems(config: UpstreamConfig, context: CandidateContext): DocumentProblem[] {
  if (config.service !== undefined) {
    const binding = context.env[config.service];
    const bound = typeof binding === "object" && binding !== null && typeof (binding as { fetch?: unknown }).fetch === "function";
    return bound ? [] : [{ path: "/service", message: `this Worker has no service binding named "${config.service}" (wrangler.toml [[services]])` }];
  }
  const url = new URL(config.url);
  if (url.protocol === "https:") return [];
  const local = LOOPBACK_HOSTS.has(url.hostname) && LOOPBACK_HOSTS.has(context.requestUrl.hostname);
  return local ? [] : [{ path: "/url", message: "must be an https:// URL (http:// only to a loopback host, while the gateway itself runs locally under npm start)" }];
}

/**
 * Checks the body of a PUT for the upstream `name`; on success, the entry to store (a
 * credential value sealed) and the configuration to probe with (the value in memory).
 */
export async function checkCandidate(name: string, body: unknown, context: CandidateContext): Promise<Candidate> {
  if (!isObject(body)) return { ok: false, problems: [{ path: "", message: 'must be an object like {"url": "https://example.com/mcp"}' }] };
  const entry: Record<string, unknown> = { ...body };
  delete entry["name"];
  let value: string | undefined;
  if (body["credential"] !== undefined) {
    const credential = await credentialOf(name, body["credential"], context);
    if (!credential.stored) return { ok: false, problems: credential.problems };
    entry["credential"] = credential.stored;
    value = credential.value;
  }
  const checked = checkEntry(name, { ...entry, ...(body["name"] !== undefined ? { name: body["name"] } : {}) }, "");
  if (!checked.config) return { ok: false, problems: checked.problems };
  const place = placeProblems(checked.config, context);
  if (place.length > 0) return { ok: false, problems: place };
  let config = checked.config;
  if (config.credential && value !== undefined) config = { ...config, credential: { ...config.credential, value } };
  return { ok: true, entry, config };
}
