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
import { isLoopback } from "../../upstream/oauth/http-options";
import type { DocumentProblem } from "../../storage/document-store";
import { checkEntry, ENTRY_SHAPE, type StoredEntry } from "./document";
import { openCredential, sealCredential } from "./sealed-credential";

/** The longest credential value accepted, in characters (a token, an API key). */
export const MAX_CREDENTIAL_CHARS = 8 * 1024;

export type Candidate =
  | { ok: true; entry: StoredEntry; config: UpstreamConfig }
  | { ok: false; problems: DocumentProblem[] };

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

const CREDENTIAL_SHAPE =
  'must be {"secret": "NAME_OF_A_WORKER_SECRET"} or {"value": "<the credential>"} (sealed, never shown back), ' +
  'or {"sealed": true} to keep the stored one; "header" (default Authorization) and "scheme" ' +
  "(default Bearer there) beside it";

const problem = (path: string, message: string): CredentialInput => ({ problems: [{ path, message }] });

function secretCredential(raw: Record<string, unknown>, secret: unknown, context: CandidateContext): CredentialInput {
  const at = "/credential/secret";
  if (typeof secret !== "string" || secret === "") return problem(at, "must be the name of a Worker secret");
  const set = context.env[secret];
  if (typeof set !== "string" || set === "") {
    const hint = `(wrangler secret put ${secret}), or store the value itself with {"value": ...}`;
    return problem(at, `no Worker secret named "${secret}" is set ${hint}`);
  }
  return { stored: raw, problems: [] };
}

async function credentialOf(name: string, raw: unknown, context: CandidateContext): Promise<CredentialInput> {
  const at = "/credential";
  if (!isObject(raw)) return problem(at, CREDENTIAL_SHAPE);
  const { secret, value, sealed, ...rest } = raw;
  if ([secret, value, sealed].filter((form) => form !== undefined).length !== 1) return problem(at, CREDENTIAL_SHAPE);
  if (secret !== undefined) return secretCredential(raw, secret, context);
  if (value !== undefined) {
    if (typeof value !== "string" || value === "" || value.length > MAX_CREDENTIAL_CHARS) {
      return problem(`${at}/value`, `must be a non-empty string of at most ${MAX_CREDENTIAL_CHARS} characters`);
    }
    if (/[\r\n]/.test(value)) return problem(`${at}/value`, "must be one line (it is sent as a header value)");
    return { stored: { ...rest, sealed: await sealCredential(context.secret(), name, value) }, value, problems: [] };
  }
  const kept = context.existing?.["credential"];
  if (sealed !== true || !isObject(kept) || typeof kept["sealed"] !== "string") {
    const message = 'true keeps the stored credential, and this upstream has none stored; send {"value": ...}';
    return problem(`${at}/sealed`, message);
  }
  const opened = await openCredential(context.secret(), name, kept["sealed"]);
  if (opened === undefined) {
    const message = 'the stored credential does not open with this SESSION_SECRET (rotated?); send {"value": ...}';
    return problem(`${at}/sealed`, message);
  }
  return { stored: { ...rest, sealed: kept["sealed"] }, value: opened, problems: [] };
}

function placeProblems(config: UpstreamConfig, context: CandidateContext): DocumentProblem[] {
  if (config.service !== undefined) {
    const binding = context.env[config.service];
    const bound = typeof binding === "object" && binding !== null;
    if (bound && typeof (binding as { fetch?: unknown }).fetch === "function") return [];
    const message = `this Worker has no service binding named "${config.service}" (wrangler.toml [[services]])`;
    return [{ path: "/service", message }];
  }
  const url = new URL(config.url);
  if (url.protocol === "https:") return [];
  if (isLoopback(url) && isLoopback(context.requestUrl)) return [];
  const message =
    "must be an https:// URL (http:// only to a loopback host, while the gateway itself runs locally under npm start)";
  return [{ path: "/url", message }];
}

/**
 * Checks the body of a PUT for the upstream `name`; on success, the entry to store (a
 * credential value sealed) and the configuration to probe with (the value in memory).
 *
 * @example
 * const candidate = await checkCandidate("github", { url: "https://example.com/mcp" }, context);
 */
export async function checkCandidate(name: string, body: unknown, context: CandidateContext): Promise<Candidate> {
  if (!isObject(body)) return { ok: false, problems: [{ path: "", message: ENTRY_SHAPE }] };
  const { name: named, ...entry } = body;
  let value: string | undefined;
  if (body["credential"] !== undefined) {
    const credential = await credentialOf(name, body["credential"], context);
    if (!credential.stored) return { ok: false, problems: credential.problems };
    entry["credential"] = credential.stored;
    value = credential.value;
  }
  const checked = checkEntry(name, named === undefined ? entry : { ...entry, name: named }, "");
  if (!checked.config) return { ok: false, problems: checked.problems };
  const place = placeProblems(checked.config, context);
  if (place.length > 0) return { ok: false, problems: place };
  const { config } = checked;
  if (!config.credential || value === undefined) return { ok: true, entry, config };
  return { ok: true, entry, config: { ...config, credential: { ...config.credential, value } } };
}
