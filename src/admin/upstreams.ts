/**
 * Upstream health for operators (mounted under /admin, behind its bearer check):
 *
 *   GET  /admin/upstreams                each upstream (`source`: "declared" in UPSTREAMS or "live",
 *                                        added through features/live-upstreams/), its protocol revision, last success,
 *                                        last failure, and over the recent windows its
 *                                        calls, error rate and latency percentiles, measured
 *                                        on real traffic (pipeline/upstream-health.ts), and what
 *                                        features add (pins: mode, counts, definitions not
 *                                        approved, features/pins/pins-admin.ts)
 *   POST /admin/upstreams/<name>/probe   an initialize and a ping now, timed; the probe's
 *                                        upstream session is closed again
 *
 * Errors are redacted of configured secrets, as everywhere else.
 */
import { Hono } from "./hono-app";
import { gatewayConfig } from "../config/gateway-config";
import type { UpstreamConfig } from "../config/upstreams";
import { redactSecrets } from "../config/secrets";
import { INTERNAL_PRINCIPALS, internalCaller, internalPool } from "../context/internal-caller";
import { describeFailure } from "../upstream/failures";
import { probeInOwnSession } from "../upstream/internal-client";
import { describeInternalFailure } from "../upstream/internal-failure";
import { pendingWindows, HEALTH_FLUSH_INTERVAL_MS } from "../pipeline/upstream-health";
import { HEALTH_RETENTION_S, readWindows, summarize } from "../storage/upstream-health";

type UpstreamBindings = { GATEWAY_KV?: KVNamespace; [binding: string]: unknown };

const NOTE =
  `Approximate: measured on real traffic by each isolate and written to KV at most every ${HEALTH_FLUSH_INTERVAL_MS / 1000} s per upstream; ` +
  `"recent" covers the windows of the last ${HEALTH_RETENTION_S / 60} minutes that KV holds; latency is the gateway's time for the whole call.`;

function configured(env: UpstreamBindings): readonly UpstreamConfig[] {
  const parsed = gatewayConfig(env).upstreams;
  return parsed.ok ? parsed.value : [];
}

async function probe(upstream: UpstreamConfig, env: UpstreamBindings): Promise<Record<string, unknown>> {
  const caller = await internalCaller(INTERNAL_PRINCIPALS.probe, "legacy");
  const probed = await probeInOwnSession(internalPool(caller, env, env.GATEWAY_KV), upstream, { method: "ping" });
  const { initializeMs } = probed;
  if (!("answer" in probed))
    return {
      upstream: upstream.name,
      ok: false,
      stage: "initialize",
      error: redactSecrets(describeFailure(probed.opened), env),
      initializeMs,
    };
  const { answer, requestMs: pingMs } = probed;
  return {
    upstream: upstream.name,
    ok: answer.ok,
    protocolVersion: probed.opened.session.protocolVersion,
    serverInfo: probed.opened.initializeResult["serverInfo"] ?? null,
    capabilities: probed.opened.session.capabilities,
    initializeMs,
    pingMs,
    ...(answer.ok ? {} : { stage: "ping", error: redactSecrets(describeInternalFailure(answer), env) }),
  };
}

/** What a feature adds to each upstream of GET /admin/upstreams (pins: `{pins: ...}`), given by the composition root. */
export type UpstreamFacts = (
  upstream: UpstreamConfig,
  kv: KVNamespace | undefined,
) => Promise<Readonly<Record<string, unknown>>>;

/** Builds the upstream health routes, mounted at /admin; `facts` adds a feature's members to each upstream. */
export function createUpstreamsAdmin(facts: UpstreamFacts): Hono<{ Bindings: UpstreamBindings }> {
  const admin = new Hono<{ Bindings: UpstreamBindings }>();
  admin.get("/upstreams", async (c) => {
    const kv = c.env.GATEWAY_KV;
    const upstreams = await Promise.all(
      configured(c.env).map(async (upstream) => {
        const windows = [...(kv ? await readWindows(kv, upstream.name) : []), ...pendingWindows(upstream.name)];
        const added = await facts(upstream, kv);
        return { name: upstream.name, ...summarize(windows), ...added };
      }),
    );
    return c.json({ upstreams, note: NOTE }, 200, { "cache-control": "no-store" });
  });
  admin.post("/upstreams/:name/probe", async (c) => {
    const name = c.req.param("name");
    const upstream = configured(c.env).find((u) => u.name === name);
    if (!upstream) return c.json({ error: `no upstream named "${name}"` }, 404);
    return c.json(await probe(upstream, c.env), 200, { "cache-control": "no-store" });
  });
  return admin;
}
