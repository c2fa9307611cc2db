/**
 * What saving a live upstream finds there: an `initialize` (through the pool's own
 * handshake, so era discovery and credentials are the relay's) and a `tools/list`, timed,
 * the probe's upstream session closed again. Built from the same parts as the health
 * probe of `POST /admin/upstreams/<name>/probe` (admin/upstreams.ts). Errors are redacted
 * of configured secrets, the credential being saved included.
 */
import { GATEWAY_INFO } from "../../core/gateway-info";
import { randomHexId } from "../../core/ids";
import { isObject } from "../../core/jsonrpc";
import { LATEST_SESSION_REVISION } from "../../core/revisions";
import type { UpstreamConfig } from "../../config/upstreams";
import { redactSecrets } from "../../config/secrets";
import { describeFailure } from "../../upstream/failures";
import { exchange } from "../../upstream/client";
import { handshake } from "../../upstream/pool";

/** A probe's session is closed at once; this is only its bound in case it is not. */
const PROBE_SESSION_TTL_S = 60;
/** The answer names at most this many of the upstream's tools (and counts them all, first page only). */
export const MAX_PROBE_TOOL_NAMES = 50;

export type ProbeReport =
  | {
      readonly ok: true;
      readonly protocolVersion: string;
      readonly serverInfo: unknown;
      /** How many tools the first page of tools/list named, and the first MAX_PROBE_TOOL_NAMES of their names. */
      readonly tools: number;
      readonly toolNames: readonly string[];
      readonly ms: number;
    }
  | { readonly ok: false; readonly stage: "initialize" | "tools/list"; readonly error: string; readonly ms: number };

type ListAnswer = { ok: true; names: string[] } | { ok: false; error: string };
type Env = Readonly<Record<string, unknown>>;
const LIST_TOOLS = '{"jsonrpc":"2.0","id":"gw-probe-tools","method":"tools/list","params":{}}';

function toolNamesOf(result: unknown): string[] | undefined {
  const tools = isObject(result) && Array.isArray(result["tools"]) ? result["tools"] : undefined;
  return tools?.map((t) => (isObject(t) && typeof t["name"] === "string" ? t["name"] : "(unnamed)"));
}

/** The probe's way to the upstream: the upstream, the bindings and the session opened. */
type Leg = { upstream: UpstreamConfig; env: Env; sessionId: string | null; protocolVersion: string };

async function listTools(leg: Leg): Promise<ListAnswer> {
  const reply = await exchange({ ...leg, method: "POST", body: LIST_TOOLS, answerWithinTimeout: true });
  if (!reply.ok) return { ok: false, error: describeFailure(reply) };
  for await (const wire of reply.value.messages) {
    const message = wire.message;
    if (!("id" in message) || "method" in message) continue;
    if ("error" in message) return { ok: false, error: `tools/list answered with an error: ${message.error.message}` };
    const names = toolNamesOf(message.result);
    return names ? { ok: true, names } : { ok: false, error: "tools/list answered without a tools list" };
  }
  return { ok: false, error: "tools/list got no answer" };
}

async function closeSession(leg: Leg): Promise<void> {
  const closed = await exchange({ ...leg, method: "DELETE", answerWithinTimeout: true });
  if (closed.ok) for await (const _ of closed.value.messages); // drain
}

/**
 * Opens a session at `upstream`, lists its tools and closes the session again.
 *
 * @example
 * const report = await probeUpstream(candidate, c.env);
 */
export async function probeUpstream(upstream: UpstreamConfig, env: Env): Promise<ProbeReport> {
  const started = Date.now();
  const client = {
    sid: `probe-${randomHexId()}`,
    protocolVersion: LATEST_SESSION_REVISION,
    clientCapabilities: {},
    clientInfo: { ...GATEWAY_INFO },
    upstreams: {},
    exp: Math.floor(started / 1000) + PROBE_SESSION_TTL_S,
  };
  const redact = (text: string) => {
    const value = upstream.credential?.value;
    return redactSecrets(value ? text.split(value).join("[redacted]") : text, env);
  };
  const opened = await handshake(upstream, { env, kv: env["GATEWAY_KV"] as KVNamespace | undefined, session: client });
  if (!opened.ok) {
    return { ok: false, stage: "initialize", error: redact(describeFailure(opened)), ms: Date.now() - started };
  }
  const { session, initializeResult } = opened.value;
  const leg = { upstream, env, sessionId: session.sessionId, protocolVersion: session.protocolVersion };
  const listed = await listTools(leg);
  if (session.sessionId) await closeSession(leg);
  const ms = Date.now() - started;
  if (!listed.ok) return { ok: false, stage: "tools/list", error: redact(listed.error), ms };
  const serverInfo = initializeResult["serverInfo"] ?? null;
  const toolNames = listed.names.slice(0, MAX_PROBE_TOOL_NAMES);
  return { ok: true, protocolVersion: session.protocolVersion, serverInfo, tools: listed.names.length, toolNames, ms };
}
