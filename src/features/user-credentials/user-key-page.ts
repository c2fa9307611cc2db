/**
 * The routes of the page where a user pastes their own key for a `userKey` upstream
 * (`/oauth/upstream/<name>/key`, reached by a sign-in link): the answers themselves are in
 * key-page.ts, loaded on demand; here is what they need of the gateway's state: the
 * upstream the path names (live ones included), whether a persona reaches it, and what a
 * saved key sets off (its audit event, the waiting call woken as after a sign-in).
 */
import type { Hono } from "../../admin/hono-app";
import { gatewayConfig } from "../../config/gateway-config";
import { sessionSecret } from "../../config/secrets";
import { reachableUpstreams } from "../personas/reachable-upstreams";
import { servicesFor } from "../../shell/services";
import { auditConnection } from "../upstream-sign-in/connection-events";
import { signalSignIn } from "../upstream-sign-in/sign-in-wait";
import { loadUserCredentialsLibrary } from "./library-loader";

type Bindings = { GATEWAY_KV?: KVNamespace; AUDIT_QUEUE?: Queue; [binding: string]: unknown };

/** Adds the key page's routes to the shell's app (a page route, before the MCP Origin guard). */
export function addUserKeyRoutes(app: Hono<{ Bindings: Bindings }>): void {
  app.on(["GET", "POST"], "/oauth/upstream/:name/key", async (c) => {
    const config = gatewayConfig(c.env);
    const name = c.req.param("name");
    const upstream = config.upstreams.ok ? config.upstreams.value.find((u) => u.name === name) : undefined;
    const kv = c.env.GATEWAY_KV;
    const open = config.auth.ok && config.auth.value.mode === "off";
    const reaches = async (roles: readonly string[]) =>
      open ||
      (!!kv && !!upstream && (await reachableUpstreams(kv, config.documentCacheTtlMs, roles, [upstream])).length > 0);
    const saved = async (principal: string, nonce: string) => {
      if (config.audit.enabled) {
        const event = { kind: "connect", principal, upstream: name, detail: "key pasted" } as const;
        auditConnection(c.env.AUDIT_QUEUE, (p) => c.executionCtx.waitUntil(p), event);
      }
      // A call that asked by elicitation/create waits for this: it runs again now.
      const waiting = servicesFor(c.env).inputRendezvous;
      if (waiting)
        await signalSignIn(waiting, nonce).catch((error: unknown) =>
          console.warn(`mcp-edge-gateway: telling the waiting call of a saved key failed: ${String(error)}`),
        );
    };
    const { keyRoute } = await loadUserCredentialsLibrary();
    return keyRoute(c.req.raw, { kv, secret: sessionSecret(c.env), upstream, reaches, saved });
  });
}
