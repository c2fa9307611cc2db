/**
 * The admin routes of named servers, mounted under /admin behind its bearer check:
 * `GET /admin/servers`, `GET|PUT|DELETE /admin/servers/<name>`. Each is answered by the lazily
 * loaded module (admin-handlers.ts, which says what each does) with the main module's
 * document store, KV list and audit trail.
 */
import type { Context } from "hono";
import { Hono } from "../../admin/hono-app";
import { gatewayConfig } from "../../config/gateway-config";
import { forgetDocument, parseDocument } from "../../storage/document-store";
import { queueAuditEvents } from "../audit/audit-queue";
import type { AdminParts, ServerSummary } from "./admin-handlers";
import { loadNamedServers, type NamedServersModule } from "./loader";
import { listServers, serverKey } from "./store";

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };
type AdminContext = Context<{ Bindings: Bindings }>;
type Handler = (c: AdminContext, parts: AdminParts) => Promise<Response>;

function partsOf(c: AdminContext): AdminParts {
  const kv = c.env.GATEWAY_KV;
  return {
    key: serverKey,
    parse: parseDocument,
    forget: forgetDocument,
    audit(event) {
      if (gatewayConfig(c.env).audit.enabled) c.executionCtx.waitUntil(queueAuditEvents(c.env.AUDIT_QUEUE, [event]));
    },
    async list() {
      if (!kv) throw new Error("the GATEWAY_KV binding is missing from wrangler.toml");
      const { servers, truncated } = await listServers<ServerSummary>(kv);
      return { servers, truncated };
    },
  };
}

const answer =
  (pick: (module: NamedServersModule) => Handler) =>
  async (c: AdminContext): Promise<Response> =>
    pick(await loadNamedServers())(c, partsOf(c));

/** The named servers' admin routes, to mount at the admin app's root. */
export function createNamedServerRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();
  routes.get(
    "/servers",
    answer((m) => m.getServers),
  );
  routes.get(
    "/servers/:name",
    answer((m) => m.getServer),
  );
  routes.put(
    "/servers/:name",
    answer((m) => m.putServer),
  );
  routes.delete(
    "/servers/:name",
    answer((m) => m.deleteServer),
  );
  return routes;
}
