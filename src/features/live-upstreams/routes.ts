/**
 * The admin routes of live upstreams (mounted under /admin, behind its bearer check):
 *
 *   GET    /admin/upstreams/<name>   a live upstream as stored (a sealed credential shown only
 *                                   as `"sealed": true`), or a declared one's name and URL
 *   PUT    /admin/upstreams/<name>   body: the upstream (JSON or YAML), as an UPSTREAMS entry
 *                                   without its name; probed (?probe=false skips it,
 *                                   ?requireProbe=true refuses to store when it fails)
 *   DELETE /admin/upstreams/<name>
 *   POST   /admin/upstreams/<name>/import   body: {"server": <an MCP Registry server.json>, "values": {...}}:
 *                                   its streamable-http remote stored as above (registry-import.ts)
 *
 * `GET /admin/upstreams` (admin/upstreams.ts) lists declared and live ones alike. Declared
 * upstreams are read-only here (409). Writes honour If-Match / If-None-Match against the
 * ETag of the one upstream they name (admin/document-versions.ts: a stale write to one is
 * not refused because another changed) and are audited (audit.ts).
 */
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { readBodyText } from "../../admin/read-body";
import { conditionalWrite, etagHeaders, type DocumentShape } from "../../admin/document-versions";
import { gatewayConfig } from "../../config/gateway-config";
import type { UpstreamConfig } from "../../config/upstreams";
import { sessionSecret } from "../../config/secrets";
import { forgetDocument, formatProblems, parseDocument, type DocumentProblem } from "../../storage/document-store";
import { auditLiveUpstream, type LiveUpstreamEdit } from "./audit";
import { checkCandidate } from "./candidate";
import { checkLiveDocument, LIVE_UPSTREAMS_KEY, MAX_LIVE_UPSTREAMS, publicEntry, type StoredEntry } from "./document";
import { liveUpstreamsNow, refreshLiveUpstreams } from "./live-list";
import { probeUpstream } from "./probe";
import { fromServerJson } from "./registry-import";
import { isObject } from "../../core/jsonrpc";

/** The largest upstream a PUT accepts, in bytes. */
const MAX_UPSTREAM_BYTES = 64 * 1024;
const NO_STORE = { "cache-control": "no-store" };

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };
type AdminContext = Context<{ Bindings: Bindings }>;
type Entries = Record<string, StoredEntry>;

function kvOf(c: AdminContext): KVNamespace {
  const kv = c.env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

/** The upstream `UPSTREAMS` declares under `name`, if any (live ones are not declared). */
function declared(c: AdminContext, name: string): UpstreamConfig | undefined {
  const upstreams = gatewayConfig(c.env).upstreams;
  const live = new Set(liveUpstreamsNow());
  return upstreams.ok ? upstreams.value.find((u) => u.name === name && !live.has(u)) : undefined;
}

function readOnly(c: AdminContext, name: string): Response {
  const how = "cannot be changed or removed here; edit UPSTREAMS and deploy, or choose another name";
  const error = `upstream "${name}" is declared in UPSTREAMS (wrangler.toml) and ${how}`;
  return c.json({ error }, 409);
}

type Problems = readonly DocumentProblem[];

function refused(c: AdminContext, name: string, problems: Problems, status: 400 | 413 = 400): Response {
  return c.json({ error: `invalid upstream "${name}"; nothing was stored`, problems }, status);
}

/** The entries of the stored document text; a broken document is a problem list (it must be fixed or deleted first). */
async function entriesOf(text: string | null): Promise<{ entries: Entries } | { problems: Problems }> {
  if (text === null) return { entries: {} };
  const parsed = await parseDocument(text);
  const checked = parsed.ok ? checkLiveDocument(parsed.value) : parsed;
  return checked.ok ? { entries: { ...checked.value.entries } } : { problems: checked.problems };
}

function brokenDocument(c: AdminContext, problems: Problems): Response {
  const where = `the stored live upstreams document (KV key "${LIVE_UPSTREAMS_KEY}")`;
  const error = `${where} is invalid and is not applied; fix it in KV or delete the key: ${formatProblems(problems)}`;
  return c.json({ error }, 409);
}

const entryOf = (entries: Entries, name: string) => (Object.hasOwn(entries, name) ? entries[name] : undefined);

/** Stores `entries` (none: the key is deleted), drops this isolate's copy and audits `edit`. */
async function store(c: AdminContext, entries: Entries, edit: LiveUpstreamEdit, name: string): Promise<string | null> {
  const kv = kvOf(c);
  const text = Object.keys(entries).length === 0 ? null : JSON.stringify({ upstreams: entries });
  if (text === null) await kv.delete(LIVE_UPSTREAMS_KEY);
  else await kv.put(LIVE_UPSTREAMS_KEY, text);
  forgetDocument(LIVE_UPSTREAMS_KEY);
  // The rest of this request (a console page rendered after the write) sees the new list too.
  await refreshLiveUpstreams(c.env, 0);
  if (!gatewayConfig(c.env).audit.enabled) return text;
  auditLiveUpstream(c.env.AUDIT_QUEUE, (p) => c.executionCtx.waitUntil(p), edit, name);
  return text;
}

async function getUpstream(c: AdminContext): Promise<Response> {
  const name = c.req.param("name")!;
  const fixed = declared(c, name);
  if (fixed) {
    const where = fixed.service === undefined ? { url: fixed.url } : { url: fixed.url, service: fixed.service };
    return c.json({ name, source: "declared", readOnly: true, ...where }, 200, NO_STORE);
  }
  const text = await kvOf(c).get(LIVE_UPSTREAMS_KEY);
  const found = await entriesOf(text);
  if ("problems" in found) return brokenDocument(c, found.problems);
  const entry = entryOf(found.entries, name);
  if (!entry) return c.json({ error: `no upstream named "${name}"` }, 404);
  const headers = { ...NO_STORE, ...(await etagHeaders(JSON.stringify(entry))) };
  return c.json({ name, source: "live", upstream: publicEntry(entry) }, 200, headers);
}

/** The body of a PUT or an import, read and parsed; a Response when it cannot be. */
async function bodyOf(c: AdminContext, name: string): Promise<{ value: unknown } | Response> {
  const text = await readBodyText(c.req.raw, MAX_UPSTREAM_BYTES);
  const at = (message: string) => [{ path: "", message }];
  if (text === undefined) return refused(c, name, at(`larger than ${MAX_UPSTREAM_BYTES} bytes`), 413);
  if (text.trim() === "") return refused(c, name, at("the body is empty; send the upstream as JSON or YAML"));
  const parsed = await parseDocument(text);
  return parsed.ok ? { value: parsed.value } : refused(c, name, parsed.problems);
}

async function putUpstream(c: AdminContext): Promise<Response> {
  const name = c.req.param("name")!;
  if (declared(c, name)) return readOnly(c, name);
  const body = await bodyOf(c, name);
  return body instanceof Response ? body : saveUpstream(c, name, body.value);
}

/** `POST /admin/upstreams/<name>/import`: `{"server": <server.json>, "values": {...}}` (registry-import.ts). */
async function importUpstream(c: AdminContext): Promise<Response> {
  const name = c.req.param("name")!;
  if (declared(c, name)) return readOnly(c, name);
  const body = await bodyOf(c, name);
  if (body instanceof Response) return body;
  const given = isObject(body.value) ? body.value : {};
  const values = given["values"] ?? {};
  if (!isObject(values)) {
    return refused(c, name, [{ path: "/values", message: "must map header and variable names to values" }]);
  }
  const imported = fromServerJson(given["server"], values);
  if (imported.ok) return saveUpstream(c, name, imported.body);
  const error = `cannot import upstream "${name}"; nothing was stored`;
  const answer: Record<string, unknown> = { error, problems: imported.problems };
  if (imported.needs !== undefined) answer["needs"] = imported.needs;
  return c.json(answer, 400);
}

/** Checks `body` as the upstream `name`, probes it and stores it (PUT and import). */
async function saveUpstream(c: AdminContext, name: string, body: unknown): Promise<Response> {
  const current = await entriesOf(await kvOf(c).get(LIVE_UPSTREAMS_KEY));
  if ("problems" in current) return brokenDocument(c, current.problems);
  const existing = entryOf(current.entries, name);
  const context = { env: c.env, requestUrl: new URL(c.req.url), secret: () => sessionSecret(c.env) };
  const candidate = await checkCandidate(name, body, existing ? { ...context, existing } : context);
  if (!candidate.ok) return refused(c, name, candidate.problems);
  // Probed before the write (which holds this isolate's other writes of the document), never inside it.
  const skip = c.req.query("probe") === "false";
  const probe = skip ? "skipped (probe=false)" : await probeUpstream(candidate.config, c.env);
  if (c.req.query("requireProbe") === "true" && (typeof probe === "string" || !probe.ok)) {
    const error = `upstream "${name}" did not answer the probe; nothing was stored (without requireProbe it would be)`;
    return c.json({ error, probe }, 422);
  }
  return conditionalWrite(c, kvOf(c), LIVE_UPSTREAMS_KEY, oneUpstream(name), async (stored) => {
    const now = await entriesOf(stored);
    if ("problems" in now) return { response: brokenDocument(c, now.problems) };
    const created = !Object.hasOwn(now.entries, name);
    if (created && Object.keys(now.entries).length >= MAX_LIVE_UPSTREAMS) {
      return { response: c.json({ error: `at most ${MAX_LIVE_UPSTREAMS} live upstreams; remove one first` }, 409) };
    }
    now.entries[name] = candidate.entry;
    const written = await store(c, now.entries, created ? "create" : "change", name);
    const answer = { name, source: "live", created, stored: publicEntry(candidate.entry), probe };
    return { response: c.json(answer, created ? 201 : 200), stored: written };
  });
}

/** What a write to upstream `name` is conditional on: that upstream's entry alone. */
function oneUpstream(name: string): DocumentShape {
  return {
    version: async (stored) => {
      const found = await entriesOf(stored);
      if ("problems" in found) return stored;
      const entry = entryOf(found.entries, name);
      return entry ? JSON.stringify(entry) : null;
    },
  };
}

async function deleteUpstream(c: AdminContext): Promise<Response> {
  const name = c.req.param("name")!;
  if (declared(c, name)) return readOnly(c, name);
  return conditionalWrite(c, kvOf(c), LIVE_UPSTREAMS_KEY, oneUpstream(name), async (stored) => {
    const now = await entriesOf(stored);
    if ("problems" in now) return { response: brokenDocument(c, now.problems) };
    if (!Object.hasOwn(now.entries, name)) {
      return { response: c.json({ error: `no live upstream named "${name}"` }, 404) };
    }
    delete now.entries[name];
    return { response: c.json({ deleted: name }), stored: await store(c, now.entries, "remove", name) };
  });
}

/** The live upstream routes, to mount at the admin app's root. */
export function createLiveUpstreamRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();
  routes.get("/upstreams/:name", getUpstream);
  routes.put("/upstreams/:name", putUpstream);
  routes.delete("/upstreams/:name", deleteUpstream);
  routes.post("/upstreams/:name/import", importUpstream);
  return routes;
}

/** "live" for an upstream added through the admin API, else "declared" (for `GET /admin/upstreams`). */
export function upstreamSource(upstream: UpstreamConfig): "live" | "declared" {
  return liveUpstreamsNow().includes(upstream) ? "live" : "declared";
}
