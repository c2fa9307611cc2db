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
import { GATEWAY_INFO } from "../core/gateway-info";
import { randomHexId } from "../core/ids";
import { gatewayConfig } from "../config/gateway-config";
import type { UpstreamConfig } from "../config/upstreams";
import { redactSecrets } from "../config/secrets";
import { LATEST_SESSION_REVISION } from "../core/revisions";
import { describeFailure } from "../upstream/failures";
import { exchange } from "../upstream/client";
import { handshake } from "../upstream/pool";
import { pendingWindows, HEALTH_FLUSH_INTERVAL_MS } from "../pipeline/upstream-health";
import { HEALTH_RETENTION_S, readWindows, summarize } from "../storage/upstream-health";

type UpstreamBindings = { GATEWAY_KV?: KVNamespace; [binding: string]: unknown };

/** A probe's session is closed at once; this is only its bound in case it is not. */
const PROBE_SESSION_TTL_S = 60;

const NOTE =
  `Approximate: measured on real traffic by each isolate and written to KV at most every ${HEALTH_FLUSH_INTERVAL_MS / 1000} s per upstream; ` +
  `"recent" covers the windows of the last ${HEALTH_RETENTION_S / 60} minutes that KV holds; latency is the gateway's time for the whole call.`;

function configured(env: UpstreamBindings): readonly UpstreamConfig[] {
  const parsed = gatewayConfig(env).upstreams;
  return parsed.ok ? parsed.value : [];
}

async function ping(
  upstream: UpstreamConfig,
  env: UpstreamBindings,
  sessionId: string | null,
  protocolVersion: string,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const reply = await exchange({
    upstream,
    env,
    method: "POST",
    body: '{"jsonrpc":"2.0","id":"gw-probe","method":"ping"}',
    sessionId,
    protocolVersion,
    answerWithinTimeout: true,
  });
  if (!reply.ok) return { ok: false, error: describeFailure(reply) };
  for await (const wire of reply.value.messages) {
    if ("id" in wire.message && !("method" in wire.message))
      return "error" in wire.message
        ? { ok: false, error: `ping answered with an error: ${wire.message.error.message}` }
        : { ok: true };
  }
  return { ok: false, error: "ping got no answer" };
}

async function probe(upstream: UpstreamConfig, env: UpstreamBindings): Promise<Record<string, unknown>> {
  const started = Date.now();
  const client = {
    sid: `probe-${randomHexId()}`,
    protocolVersion: LATEST_SESSION_REVISION,
    clientCapabilities: {},
    clientInfo: { ...GATEWAY_INFO },
    upstreams: {},
    exp: Math.floor(started / 1000) + PROBE_SESSION_TTL_S,
  };
  const opened = await handshake(upstream, { env, kv: env.GATEWAY_KV, session: client });
  const initializeMs = Date.now() - started;
  if (!opened.ok)
    return {
      upstream: upstream.name,
      ok: false,
      stage: "initialize",
      error: redactSecrets(describeFailure(opened), env),
      initializeMs,
    };
  const { session, initializeResult } = opened.value;
  const pinged = Date.now();
  const answer = await ping(upstream, env, session.sessionId, session.protocolVersion);
  const pingMs = Date.now() - pinged;
  if (session.sessionId) {
    const closed = await exchange({
      upstream,
      env,
      method: "DELETE",
      sessionId: session.sessionId,
      protocolVersion: session.protocolVersion,
      answerWithinTimeout: true,
    });
    if (closed.ok) for await (const _ of closed.value.messages); // drain
  }
  return {
    upstream: upstream.name,
    ok: answer.ok,
    protocolVersion: session.protocolVersion,
    serverInfo: initializeResult["serverInfo"] ?? null,
    capabilities: session.capabilities,
    initializeMs,
    pingMs,
    ...(answer.ok ? {} : { stage: "ping", error: redactSecrets(answer.error, env) }),
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
