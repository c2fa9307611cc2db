/**
 * What saving a live upstream finds there: an `initialize` (through the pool's own
 * handshake, so era discovery and credentials are the relay's) and a `tools/list`, timed,
 * the probe's upstream session closed again, by the internal client
 * (upstream/internal-client.ts) as the probe's principal (context/internal-caller.ts), as
 * the health probe of `POST /admin/upstreams/<name>/probe` (admin/upstreams.ts) is. Errors are redacted
 * of configured secrets, the credential being saved included.
 */
import { isObject } from "../../core/jsonrpc";
import type { UpstreamConfig } from "../../config/upstreams";
import { redactSecrets } from "../../config/secrets";
import { INTERNAL_PRINCIPALS, internalCaller, internalPool } from "../../context/internal-caller";
import { describeFailure } from "../../upstream/failures";
import { probeInOwnSession } from "../../upstream/internal-client";
import { describeInternalFailure } from "../../upstream/internal-failure";
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

type Env = Readonly<Record<string, unknown>>;

function toolNamesOf(result: unknown): string[] | undefined {
  const tools = isObject(result) && Array.isArray(result["tools"]) ? result["tools"] : undefined;
  return tools?.map((t) => (isObject(t) && typeof t["name"] === "string" ? t["name"] : "(unnamed)"));
}

/**
 * Opens a session at `upstream`, lists its tools and closes the session again.
 *
 * @example
 * const report = await probeUpstream(candidate, c.env);
 */
export async function probeUpstream(upstream: UpstreamConfig, env: Env): Promise<ProbeReport> {
  const started = Date.now();
  const redact = (text: string) => {
    const value = upstream.credential?.value;
    return redactSecrets(value ? text.split(value).join("[redacted]") : text, env);
  };
  const caller = await internalCaller(INTERNAL_PRINCIPALS.probe, "legacy");
  const pool = internalPool(caller, env, env["GATEWAY_KV"] as KVNamespace | undefined);
  const probed = await probeInOwnSession(pool, upstream, { method: "tools/list", params: {} });
  if (!("answer" in probed)) {
    return { ok: false, stage: "initialize", error: redact(describeFailure(probed.opened)), ms: Date.now() - started };
  }
  const { opened: session, answer } = probed;
  const ms = Date.now() - started;
  if (!answer.ok) return { ok: false, stage: "tools/list", error: redact(describeInternalFailure(answer)), ms };
  const names = toolNamesOf(answer.value);
  if (!names) return { ok: false, stage: "tools/list", error: "tools/list answered without a tools list", ms };
  const serverInfo = session.initializeResult["serverInfo"] ?? null;
  const toolNames = names.slice(0, MAX_PROBE_TOOL_NAMES);
  return { ok: true, protocolVersion: session.session.protocolVersion, serverInfo, tools: names.length, toolNames, ms };
}
