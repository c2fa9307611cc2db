/**
 * The admin routes of live upstreams (mounted under /admin, behind its bearer check):
 *
 *   GET    /admin/upstreams/<name>   a live upstream as stored (a sealed credential shown only
 *                                   as `"sealed": true`), or a declared one's name and URL
 *   PUT    /admin/upstreams/<name>   body: the upstream (JSON or YAML), as an UPSTREAMS entry
 *                                   without its name; probed (?probe=false skips it,
 *                                   ?requireProbe=true refuses to store when it fails)
 *   DELETE /admin/upstreams/<name>
 *
 * `GET /admin/upstreams` (admin/upstreams.ts) lists declared and live ones alike. Declared
 * upstreams are read-only here (409). Writes honour If-Match / If-None-Match against the
 * whole live document's ETag (admin/document-versions.ts) and are audited (audit.ts).
 */
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { readBodyText } from "../../admin/read-body";
import { conditionalWrite, etagHeaders } from "../../admin/document-versions";
import { gatewayConfig } from "../../config/gateway-config";
import { sessionSecret } from "../../config/secrets";
import { forgetDocument, formatProblems, parseDocument, type DocumentProblem } from "../../storage/document-store";
import { auditLiveUpstream, type LiveUpstreamEdit } from "./audit";
import { checkCandidate } from "./candidate";
import { checkLiveDocument, LIVE_UPSTREAMS_KEY, MAX_LIVE_UPSTREAMS, publicEntry, type StoredEntry } from "./document";
import { liveUpstreamsNow } from "./live-list";
import { probeUpstream } from "./probe";

/** The largest upstream a PUT accepts, in bytes. */
const MAX_UPSTREAM_BYTES = 64 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };
type AdminContext = Context<{ Bindings: Bindings }>;

function kvOf(c: AdminContext): KVNamespace {
  const kv = c.env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

/** True when `UPSTREAMS` declares `name` (live ones are not declared). */
function declares(c: AdminContext, name: string): boolean {
  const upstreams = gatewayConfig(c.env).upstreams;
  const live = new Set(liveUpstreamsNow());
  return upstreams.ok && upstreams.value.some((u) => u.name === name && !live.has(u));
}

function readOnly(c: AdminContext, name: string): Response {
  return c.json({ error: `upstream "${name}" is declared in UPSTREAMS (wrangler.toml) and cannot be changed or removed here; edit UPSTREAMS and deploy, or choose another name` }, 409);
}

/** The entries of the stored document text; a broken document is a problem list (it must be fixed or deleted first). */
async function entriesOf(text: string | null): Promise<{ entries: Record<string, StoredEntry> } | { problems: readonly DocumentProblem[] }> {
  if (text === null) return { entries: {} };
  const parsed = await parseDocument(text);
  const checked = parsed.ok ? checkLiveDocument(parsed.value) : parsed;
  return checked.ok ? { entries: { ...checked.value.entries } } : { problems: checked.problems };
}

function brokenDocument(c: AdminContext, problems: readonly DocumentProblem[]): Response {
  const error = `the stored live upstreams document (KV key "${LIVE_UPSTREAMS_KEY}") is invalid and is not applied; fix it in KV or delete the key: ${formatProblems(problems)}`;
  return c.json({ error }, 409);
}

/** Stores `entries` (none: the key is deleted), drops this isolate's copy and audits `edit`. */
async function store(c: AdminContext, entries: Record<string, StoredEntry>, edit: LiveUpstreamEdit, name: string): Promise<string | null> {
  const kv = kvOf(c);
  const text = Object.keys(entries).length === 0 ? null : JSON.stringify({ upstreams: entries });
  if (text === null) await kv.delete(LIVE_UPSTREAMS_KEY);
  else await kv.put(LIVE_UPSTREAMS_KEY, text);
  forgetDocument(LIVE_UPSTREAMS_KEY);
  if (gatewayConfig(c.env).audit.enabled) auditLiveUpstream(c.env.AUDIT_QUEUE, (p) => c.executionCtx.waitUntil(p), edit, name);
  return text;
}

/** Adds the live upstream routes to the admin app. */
export function createLiveUpstreamRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();

  routes.get("/upstreams/:name", async (c) => {
    const name = c.req.param("name");
    if (declares(c, name)) {
      const declared = gatewayConfig(c.env).upstreams;
      const upstream = declared.ok ? declared.value.find((u) => u.name === name) : undefined;
      return c.json({ name, source: "declared", readOnly: true, url: upstream?.url, ...(upstream?.service ? { service: upstream.service } : {}) }, 200, { "cache-control": "no-store" });
    }
    const text = await kvOf(c).get(LIVE_UPSTREAMS_KEY);
    const found = await entriesOf(text);
    if ("problems" in found) return brokenDocument(c, found.problems);
    const entry = Object.hasOwn(found.entries, name) ? found.entries[name] : undefined;
    if (!entry) return c.json({ error: `no upstream named "${name}"` }, 404);
    return c.json({ name, source: "live", upstream: publicEntry(entry) }, 200, { "cache-control": "no-store", ...(await etagHeaders(text)) });
  });

  routes.put("/upstreams/:name", async (c) => {
    const name = c.req.param("name");
    if (declares(c, name)) return readOnly(c, name);
    const text = await readBodyText(c.req.raw, MAX_UPSTREAM_BYTES);
    if (text === undefined) return c.json({ error: `invalid upstream "${name}"; nothing was stored`, problems: [{ path: "", message: `larger than ${MAX_UPSTREAM_BYTES} bytes` }] }, 413);
    const parsed = text.trim() === "" ? { ok: false as const, problems: [{ path: "", message: "the body is empty; send the upstream as JSON or YAML" }] } : await parseDocument(text);
    const current = await entriesOf(await kvOf(c).get(LIVE_UPSTREAMS_KEY));
    if ("problems" in current) return brokenDocument(c, current.problems);
    const existing = Object.hasOwn(current.entries, name) ? current.entries[name] : undefined;
    const context = { env: c.env, requestUrl: new URL(c.req.url), secret: () => sessionSecret(c.env), ...(existing ? { existing } : {}) };
    const candidate = parsed.ok ? await checkCandidate(name, parsed.value, context) : parsed;
    if (!candidate.ok) return c.json({ error: `invalid upstream "${name}"; nothing was stored`, problems: candidate.problems }, 400);
    const probe = c.req.query("probe") === "false" ? undefined : await probeUpstream(candidate.config, c.env);
    if (c.req.query("requireProbe") === "true" && probe?.ok !== true) {
      return c.json({ error: `upstream "${name}" did not answer the probe; nothing was stored (leave out requireProbe to store it anyway)`, probe: probe ?? null }, 422);
    }
    return conditionalWrite(c, kvOf(c), LIVE_UPSTREAMS_KEY, {}, async (stored) => {
      const now = await entriesOf(stored);
      if ("problems" in now) return { response: brokenDocument(c, now.problems) };
      const created = !Object.hasOwn(now.entries, name);
      if (created && Object.keys(now.entries).length >= MAX_LIVE_UPSTREAMS) return { response: c.json({ error: `at most ${MAX_LIVE_UPSTREAMS} live upstreams; remove one first` }, 409) };
      now.entries[name] = candidate.entry;
      const written = await store(c, now.entries, created ? "create" : "change", name);
      const answer = { name, source: "live", created, stored: publicEntry(candidate.entry), probe: probe ?? "skipped (probe=false)" };
      return { response: c.json(answer, created ? 201 : 200), stored: written };
    });
  });

  routes.delete("/upstreams/:name", async (c) => {
    const name = c.req.param("name");
    if (declares(c, name)) return readOnly(c, name);
    return conditionalWrite(c, kvOf(c), LIVE_UPSTREAMS_KEY, {}, async (stored) => {
      const now = await entriesOf(stored);
      if ("problems" in now) return { response: brokenDocument(c, now.problems) };
      if (!Object.hasOwn(now.entries, name)) return { response: c.json({ error: `no live upstream named "${name}"` }, 404) };
      delete now.entries[name];
      return { response: c.json({ deleted: name }), stored: await store(c, now.entries, "remove", name) };
    });
  });

  return routes;
}

/** "live" for an upstream added through the admin API, else "declared" (for `GET /admin/upstreams`). */
export function upstreamSource(upstream: object): "live" | "declared" {
  return liveUpstreamsNow().includes(upstream as never) ? "live" : "declared";
}

