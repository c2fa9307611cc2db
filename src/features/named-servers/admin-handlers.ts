/**
 * The admin API of named servers (admin-routes.ts mounts it under /admin, behind its bearer
 * check; this runs from the lazily loaded module):
 *
 *   GET    /admin/servers          every stored server: name, URL, title, roles, pick counts
 *   GET    /admin/servers/<name>   the document as stored, with its ETag
 *   PUT    /admin/servers/<name>   body: the document (JSON or YAML), checked before it is stored
 *   DELETE /admin/servers/<name>
 *
 * Writes honour If-Match / If-None-Match (admin/document-versions.ts), drop this isolate's
 * copy at once (other isolates read the new one within the document cache TTL) and are
 * audited as `(server-create)`, `(server-change)` and `(server-remove)`.
 */
import type { Context } from "hono";
import { readBodyText } from "../../admin/read-body";
import { conditionalWrite, etagHeaders } from "../../admin/document-versions";
import type { Checked, DocumentProblem } from "../../storage/document-store";
import type { AuditEvent } from "../audit/audit-event";
import { randomHexId } from "../../core/ids";
import { checkNamedServer, type NamedServer } from "./document";
import { MAX_LISTED_SERVERS, SERVER_NAME, serverPath } from "./server-name";

/** The largest server document a PUT accepts, in bytes. */
const MAX_SERVER_BYTES = 256 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace; [binding: string]: unknown };
type AdminContext = Context<{ Bindings: Bindings }>;
/** An edit the handlers audit. */
type ServerEdit = "create" | "change" | "remove";

/** What the handlers get from the main module (whose document store and audit trail they use). */
export type AdminParts = {
  readonly key: (name: string) => string;
  readonly parse: (text: string) => Checked<unknown> | Promise<Checked<unknown>>;
  readonly forget: (key: string) => void;
  /** Sends an audit event when the audit trail is on. */
  readonly audit: (event: AuditEvent) => void;
  readonly list: () => Promise<{ servers: { name: string; metadata: ServerSummary | null }[]; truncated: boolean }>;
};

/** What a listing shows of a server without reading its document (KV metadata, written with it). */
export type ServerSummary = {
  readonly title?: string;
  readonly roles?: readonly string[];
  readonly tools: number;
  readonly prompts: number;
  readonly resources: number;
};

function kvOf(c: AdminContext): KVNamespace {
  const kv = c.env.GATEWAY_KV;
  if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
  return kv;
}

function summaryOf(server: NamedServer): ServerSummary {
  const { title, roles, tools, prompts, resources } = server;
  const counts = { tools: tools.length, prompts: prompts.length, resources: resources.length };
  return { ...(title !== undefined ? { title: title.slice(0, 200) } : {}), ...(roles ? { roles } : {}), ...counts };
}

/** The audit event of an edit of the server `name` by the admin. */
function editEvent(edit: ServerEdit, name: string): AuditEvent {
  return {
    "gateway.event_id": randomHexId(),
    timestamp: new Date().toISOString(),
    "mcp.method.name": `(server-${edit})`,
    "mcp.protocol.version": "(none)",
    "user.id": "admin",
    "gateway.route": `/admin/servers/${name}`,
    "gateway.outcome": "success",
    "gateway.duration_ms": 0,
  };
}

function refused(c: AdminContext, name: string, problems: readonly DocumentProblem[], status: 400 | 413 = 400) {
  return c.json({ error: `invalid server "${name}"; nothing was stored`, problems }, status);
}

function badName(c: AdminContext, name: string): Response {
  const message = "must be 1-64 letters, digits, '-' or '_', starting with a letter or digit";
  return refused(c, name, [{ path: "", message: `the server's name (the URL's last segment) ${message}` }]);
}

/** `PUT /admin/servers/<name>`. */
export async function putServer(c: AdminContext, parts: AdminParts): Promise<Response> {
  const name = c.req.param("name")!;
  if (!SERVER_NAME.test(name)) return badName(c, name);
  const text = await readBodyText(c.req.raw, MAX_SERVER_BYTES);
  const at = (message: string) => [{ path: "", message }];
  if (text === undefined) return refused(c, name, at(`larger than ${MAX_SERVER_BYTES} bytes`), 413);
  if (text.trim() === "") return refused(c, name, at("the body is empty; send the server as JSON or YAML"));
  const parsed = await parts.parse(text);
  const checked = parsed.ok ? checkNamedServer(parsed.value) : parsed;
  if (!checked.ok) return refused(c, name, checked.problems);
  const kv = kvOf(c);
  const key = parts.key(name);
  return conditionalWrite(c, kv, key, {}, async (stored) => {
    const body = JSON.stringify(parsed.ok ? parsed.value : null);
    await kv.put(key, body, { metadata: summaryOf(checked.value) });
    parts.forget(key);
    const created = stored === null;
    parts.audit(editEvent(created ? "create" : "change", name));
    const answer = { name, url: `${new URL(c.req.url).origin}${serverPath(name)}`, created, stored: checked.value };
    return { response: c.json(answer, created ? 201 : 200), stored: body };
  });
}

/** `DELETE /admin/servers/<name>`. */
export async function deleteServer(c: AdminContext, parts: AdminParts): Promise<Response> {
  const name = c.req.param("name")!;
  const kv = kvOf(c);
  const key = parts.key(name);
  return conditionalWrite(c, kv, key, {}, async (stored) => {
    if (stored === null) return { response: c.json({ error: `no server named "${name}"` }, 404) };
    await kv.delete(key);
    parts.forget(key);
    parts.audit(editEvent("remove", name));
    return { response: c.json({ deleted: name }), stored: null };
  });
}

/** `GET /admin/servers`: every stored server, from the KV list's metadata (no document read). */
export async function getServers(c: AdminContext, parts: AdminParts): Promise<Response> {
  const { servers, truncated } = await parts.list();
  const origin = new URL(c.req.url).origin;
  const listed = servers.map(({ name, metadata }) => ({ name, url: `${origin}${serverPath(name)}`, ...metadata }));
  const more = truncated ? { truncated: `only the first ${MAX_LISTED_SERVERS} are listed` } : {};
  return c.json({ servers: listed, ...more }, 200, { "cache-control": "no-store" });
}

/** `GET /admin/servers/<name>`: the document as stored (as text when it does not parse), with its ETag. */
export async function getServer(c: AdminContext, parts: AdminParts): Promise<Response> {
  const name = c.req.param("name")!;
  const text = await kvOf(c).get(parts.key(name));
  if (text === null) return c.json({ error: `no server named "${name}"` }, 404);
  const parsed = await parts.parse(text);
  const headers = await etagHeaders(text);
  return parsed.ok
    ? c.json(parsed.value as object, 200, headers)
    : c.text(text, 200, { ...headers, "content-type": "text/plain; charset=utf-8" });
}
