/**
 * The admin routes of named servers (mounted under /admin, behind its bearer check):
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
import { Hono } from "../../admin/hono-app";
import { readBodyText } from "../../admin/read-body";
import { conditionalWrite } from "../../admin/document-versions";
import { documentResponse } from "../../admin/document-routes";
import { gatewayConfig } from "../../config/gateway-config";
import { randomHexId } from "../../core/ids";
import { forgetDocument, parseDocument, type DocumentProblem } from "../../storage/document-store";
import { queueAuditEvents } from "../audit/audit-queue";
import { checkNamedServer, SERVER_NAME, type NamedServer } from "./document";
import { listServers, MAX_LISTED_SERVERS, serverKey } from "./store";

/** The largest server document a PUT accepts, in bytes. */
const MAX_SERVER_BYTES = 256 * 1024;

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };
type AdminContext = Context<{ Bindings: Bindings }>;
type Edit = "create" | "change" | "remove";

/** What a listing shows of a server without reading its document (KV metadata, written with it). */
type ServerSummary = {
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

function audit(c: AdminContext, edit: Edit, name: string): void {
  if (!gatewayConfig(c.env).audit.enabled) return;
  const event = {
    "gateway.event_id": randomHexId(),
    timestamp: new Date().toISOString(),
    "mcp.method.name": `(server-${edit})`,
    "mcp.protocol.version": "(none)",
    "user.id": "admin",
    "gateway.route": `/admin/servers/${name}`,
    "gateway.outcome": "success" as const,
    "gateway.duration_ms": 0,
  };
  c.executionCtx.waitUntil(queueAuditEvents(c.env.AUDIT_QUEUE, [event]));
}

function refused(c: AdminContext, name: string, problems: readonly DocumentProblem[], status: 400 | 413 = 400) {
  return c.json({ error: `invalid server "${name}"; nothing was stored`, problems }, status);
}

function badName(c: AdminContext, name: string): Response {
  const message = "must be 1-64 letters, digits, '-' or '_', starting with a letter or digit";
  return refused(c, name, [{ path: "", message: `the server's name (the URL's last segment) ${message}` }]);
}

async function putServer(c: AdminContext): Promise<Response> {
  const name = c.req.param("name")!;
  if (!SERVER_NAME.test(name)) return badName(c, name);
  const text = await readBodyText(c.req.raw, MAX_SERVER_BYTES);
  const at = (message: string) => [{ path: "", message }];
  if (text === undefined) return refused(c, name, at(`larger than ${MAX_SERVER_BYTES} bytes`), 413);
  if (text.trim() === "") return refused(c, name, at("the body is empty; send the server as JSON or YAML"));
  const parsed = await parseDocument(text);
  const checked = parsed.ok ? checkNamedServer(parsed.value) : parsed;
  if (!checked.ok) return refused(c, name, checked.problems);
  const kv = kvOf(c);
  const key = serverKey(name);
  return conditionalWrite(c, kv, key, {}, async (stored) => {
    const body = JSON.stringify(parsed.ok ? parsed.value : null);
    await kv.put(key, body, { metadata: summaryOf(checked.value) });
    forgetDocument(key);
    const created = stored === null;
    audit(c, created ? "create" : "change", name);
    const answer = { name, url: `${new URL(c.req.url).origin}/mcp/servers/${name}`, created, stored: checked.value };
    return { response: c.json(answer, created ? 201 : 200), stored: body };
  });
}

async function deleteServer(c: AdminContext): Promise<Response> {
  const name = c.req.param("name")!;
  const kv = kvOf(c);
  const key = serverKey(name);
  return conditionalWrite(c, kv, key, {}, async (stored) => {
    if (stored === null) return { response: c.json({ error: `no server named "${name}"` }, 404) };
    await kv.delete(key);
    forgetDocument(key);
    audit(c, "remove", name);
    return { response: c.json({ deleted: name }), stored: null };
  });
}

async function getServers(c: AdminContext): Promise<Response> {
  const { servers, truncated } = await listServers<ServerSummary>(kvOf(c));
  const origin = new URL(c.req.url).origin;
  const listed = servers.map(({ name, metadata }) => ({ name, url: `${origin}/mcp/servers/${name}`, ...metadata }));
  const more = truncated ? { truncated: `only the first ${MAX_LISTED_SERVERS} are listed` } : {};
  return c.json({ servers: listed, ...more }, 200, { "cache-control": "no-store" });
}

/** The named servers' admin routes, to mount at the admin app's root. */
export function createNamedServerRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();
  routes.get("/servers", getServers);
  routes.get("/servers/:name", async (c) =>
    documentResponse(c, await kvOf(c).get(serverKey(c.req.param("name"))), `no server named "${c.req.param("name")}"`),
  );
  routes.put("/servers/:name", putServer);
  routes.delete("/servers/:name", deleteServer);
  return routes;
}
