/**
 * Users' connections to upstreams they sign in to (mounted under /admin, behind its bearer check):
 *
 *   GET    /admin/upstream-connections                          who is connected to which upstream, scope, expiry; never a token
 *   DELETE /admin/upstream-connections?principal=P&upstream=U   revokes one (at the authorization server too, where it can)
 */
import { Hono } from "../../admin/hono-app";
import { gatewayConfig } from "../../config/gateway-config";
import { sessionSecret } from "../../config/secrets";
import { listConnections } from "../../storage/upstream-tokens";
import { revokeConnection } from "../../upstream/oauth/access-token";
import { auditConnection } from "./connection-events";

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };

/** The routes, to mount at `/upstream-connections` of the admin app. */
export function createUpstreamConnectionRoutes(): Hono<{ Bindings: Bindings }> {
  const routes = new Hono<{ Bindings: Bindings }>();
  routes.get("/", async (c) => {
    const kv = c.env.GATEWAY_KV;
    if (!kv) return c.json({ error: "no KV namespace (GATEWAY_KV) is bound: no connections are kept" }, 503);
    return c.json({ connections: await listConnections(kv) }, 200, { "cache-control": "no-store" });
  });
  routes.delete("/", async (c) => {
    const kv = c.env.GATEWAY_KV;
    if (!kv) return c.json({ error: "no KV namespace (GATEWAY_KV) is bound: no connections are kept" }, 503);
    const principal = c.req.query("principal");
    const upstream = c.req.query("upstream");
    if (!principal || !upstream)
      return c.json(
        { error: "name the connection: DELETE /admin/upstream-connections?principal=<principal>&upstream=<upstream>" },
        400,
      );
    const config = gatewayConfig(c.env);
    const upstreams = config.upstreams.ok ? config.upstreams.value : [];
    const revoked = await revokeConnection(
      upstreams.find((u) => u.name === upstream),
      upstream,
      principal,
      { kv, secret: sessionSecret(c.env), env: c.env },
    );
    if (!revoked) return c.json({ error: `no connection of "${principal}" to "${upstream}"` }, 404);
    if (config.audit.enabled)
      auditConnection(c.env.AUDIT_QUEUE, (p) => c.executionCtx.waitUntil(p), {
        kind: "revoke",
        principal,
        upstream,
        by: "admin",
      });
    return c.json({ revoked: { principal, upstream } });
  });
  return routes;
}
