/**
 * The live upstreams document: one KV document holding every upstream added through the
 * admin API, `{"upstreams": {"<name>": <entry>}}`, where an entry has the fields of an
 * `UPSTREAMS` entry (without `name`: the key is the name) and a credential is either the
 * name of a Worker secret (`{"secret": "NAME"}`) or a value sealed under SESSION_SECRET
 * (`{"sealed": "c1...."}`, sealed-credential.ts). Every entry is checked by the same
 * parser as `UPSTREAMS` (config/upstreams.ts), its problems located by JSON Pointer, on
 * write and on every read, so a document put straight into KV is checked too.
 */
import { isObject } from "../../core/jsonrpc";
import { parseUpstreams, type UpstreamConfig } from "../../config/upstreams";
import { GATEWAY_SECRET_VARS } from "../../config/secrets";
import type { Checked, DocumentProblem } from "../../storage/document-store";

/** The KV key of the document. */
export const LIVE_UPSTREAMS_KEY = "live-upstreams";
/** At most this many live upstreams: each is listed, probed for health and handshaken with on `/mcp`. */
export const MAX_LIVE_UPSTREAMS = 100;
/** Stands in for a sealed credential's secret name while the entry is checked; never read from env. */
export const SEALED_SECRET_PLACEHOLDER = "(sealed in KV)";

/** A credential as stored: a Worker secret's name, or a sealed value. */
export type StoredCredential =
  | { readonly secret: string; readonly header?: string; readonly scheme?: string }
  | { readonly sealed: string; readonly header?: string; readonly scheme?: string };

/** One stored entry: `UPSTREAMS` fields, the name being its key. */
export type StoredEntry = Readonly<Record<string, unknown>>;

/** The document, checked: each entry as stored and as the configuration it gives. */
export type LiveDocument = {
  readonly entries: Readonly<Record<string, StoredEntry>>;
  /** In the document's order; a sealed credential's secret is SEALED_SECRET_PLACEHOLDER until opened. */
  readonly configs: readonly UpstreamConfig[];
};

/** What an entry must look like, at least. */
export const ENTRY_SHAPE = 'must be an object like {"url": "https://example.com/mcp"}';

const UPSTREAM_PROBLEM = /^UPSTREAMS\[0\]((?:\.[^:\s]+)*): ([\s\S]*)$/;

/** A problem of `parseUpstreams` for the one entry it was given, located under `base`. */
function located(problem: string, base: string): DocumentProblem {
  const match = UPSTREAM_PROBLEM.exec(problem);
  if (!match) return { path: base, message: problem };
  const path = (match[1] ?? "").split(".").filter(Boolean).join("/");
  return { path: path === "" ? base : `${base}/${path}`, message: match[2] ?? problem };
}

/** One entry checked: its configuration, or its problems. */
export type CheckedEntry = { config?: UpstreamConfig; problems: DocumentProblem[] };

/** True for a stored credential's shape (the fields beside it are checked by the UPSTREAMS parser). */
function sealedCredential(raw: unknown): raw is { sealed: string; header?: unknown; scheme?: unknown } {
  return isObject(raw) && typeof raw["sealed"] === "string" && !("secret" in raw);
}

/**
 * Checks one stored entry named `name`; problems are located under `base` (a JSON Pointer).
 *
 * @example
 * checkEntry("github", { url: "https://example.com/mcp" }, "/upstreams/github");
 */
export function checkEntry(name: string, raw: unknown, base: string): CheckedEntry {
  if (!isObject(raw)) return { problems: [{ path: base, message: ENTRY_SHAPE }] };
  if ("name" in raw && raw["name"] !== name) {
    return { problems: [{ path: `${base}/name`, message: `must be "${name}", the name in the path, or left out` }] };
  }
  const entry: Record<string, unknown> = { ...raw, name };
  const credential = raw["credential"];
  if (sealedCredential(credential)) {
    const { sealed: _sealed, ...rest } = credential;
    entry["credential"] = { ...rest, secret: SEALED_SECRET_PLACEHOLDER };
  }
  const parsed = parseUpstreams([entry]);
  if (!parsed.ok) return { problems: parsed.problems.map((problem) => located(problem, base)) };
  const config = parsed.value[0]!;
  // Checked on every read too: a document written straight into KV never sends the gateway's own secret upstream.
  if (config.credential && (GATEWAY_SECRET_VARS as readonly string[]).includes(config.credential.secret)) {
    const message = `"${config.credential.secret}" is the gateway's own secret and is never sent upstream`;
    return { problems: [{ path: `${base}/credential/secret`, message }] };
  }
  return { config, problems: [] };
}

/** Checks the whole document (as read from KV). */
export function checkLiveDocument(value: unknown): Checked<LiveDocument> {
  if (!isObject(value) || !isObject(value["upstreams"])) {
    const message = 'must be an object of upstream names to entries: {"upstreams": {"<name>": {...}}}';
    return { ok: false, problems: [{ path: "/upstreams", message }] };
  }
  const raw = value["upstreams"];
  const names = Object.keys(raw);
  if (names.length > MAX_LIVE_UPSTREAMS) {
    const message = `holds ${names.length} upstreams; at most ${MAX_LIVE_UPSTREAMS}`;
    return { ok: false, problems: [{ path: "/upstreams", message }] };
  }
  const problems: DocumentProblem[] = [];
  const configs: UpstreamConfig[] = [];
  for (const name of names) {
    const checked = checkEntry(name, raw[name], `/upstreams/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    problems.push(...checked.problems);
    if (checked.config) configs.push(checked.config);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { entries: raw as Record<string, StoredEntry>, configs } };
}

/** An entry as the admin API shows it: a sealed value is never shown back, only that one is stored. */
export function publicEntry(entry: StoredEntry): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...entry };
  const credential = entry["credential"];
  if (sealedCredential(credential)) {
    const { sealed: _sealed, ...rest } = credential;
    shown["credential"] = { ...rest, sealed: true };
  }
  return shown;
}
