/**
 * The live upstreams as this isolate last read them, and how they join the declared ones.
 *
 * The shell calls `refreshLiveUpstreams` once at the start of every request (and the Cron
 * Trigger before its sweep): the document is read through the document store, so from KV
 * at most once per document TTL per isolate; its sealed credentials are opened once per
 * version read. `gatewayConfig` (config/gateway-config.ts) then merges the list with
 * `UPSTREAMS` synchronously, so everything that reads the upstream list (routes, pins,
 * health, list caching, sign-in) sees one list. Declared upstreams win a name clash.
 * Isolate memory only caches what KV holds: any isolate reads the same document.
 */
import type { UpstreamConfig } from "../../config/upstreams";
import type { GatewayConfig } from "../../config/gateway-config";
import { loadDocument, type Stored } from "../../storage/document-store";
import { checkLiveDocument, LIVE_UPSTREAMS_KEY, SEALED_SECRET_PLACEHOLDER, type LiveDocument } from "./document";
import { openCredential } from "./sealed-credential";

const NONE: readonly UpstreamConfig[] = [];
let current: readonly UpstreamConfig[] = NONE;
/**
 * The configurations opened from the last version of the document this isolate read, by its
 * entries' text: a copy read again unchanged keeps the same list (and so the same merged
 * configuration and pipeline).
 */
let opened: { readonly text: string; readonly list: Promise<readonly UpstreamConfig[]> } | undefined;
/** The merged configuration of each declared one, for the live list it was merged with. */
type Merged = { readonly live: readonly UpstreamConfig[]; readonly config: GatewayConfig };
const merged = new WeakMap<GatewayConfig, Merged>();

/** The live upstreams this isolate read last (their sealed credentials opened). */
export function liveUpstreamsNow(): readonly UpstreamConfig[] {
  return current;
}

async function openAll(document: LiveDocument, secret: unknown): Promise<readonly UpstreamConfig[]> {
  const out: UpstreamConfig[] = [];
  for (const config of document.configs) {
    if (config.credential?.secret !== SEALED_SECRET_PLACEHOLDER) {
      out.push(config);
      continue;
    }
    const stored = document.entries[config.name]?.["credential"] as { sealed: string };
    const usable = typeof secret === "string" && secret !== "";
    const value = usable ? await openCredential(secret, config.name, stored.sealed) : undefined;
    // Left out rather than called without its credential: the log says why (never the value).
    if (value === undefined) {
      const why = "its stored credential does not open with this SESSION_SECRET (rotated?); put the credential again";
      console.error(`mcp-edge-gateway: live upstream "${config.name}" is left out: ${why}`);
    } else out.push({ ...config, credential: { ...config.credential, value } });
  }
  return out;
}

/**
 * Reads the live upstreams for this request (this isolate's copy while younger than
 * `ttlMs`). Without a KV binding there are none.
 */
export async function refreshLiveUpstreams(env: Readonly<Record<string, unknown>>, ttlMs: number): Promise<void> {
  const kv = env["GATEWAY_KV"] as KVNamespace | undefined;
  if (!kv) return;
  const stored: Stored<LiveDocument> = await loadDocument(kv, LIVE_UPSTREAMS_KEY, ttlMs, checkLiveDocument);
  if (stored.state !== "valid") {
    current = NONE;
    return;
  }
  const text = JSON.stringify(stored.value.entries);
  if (opened?.text !== text) opened = { text, list: openAll(stored.value, env["SESSION_SECRET"]) };
  current = await opened.list;
}

/** `config` with the live upstreams after the declared ones (a declared name wins); itself when there are none. */
export function withLiveUpstreams(config: GatewayConfig, live: readonly UpstreamConfig[] = current): GatewayConfig {
  if (live.length === 0 || !config.upstreams.ok) return config;
  const known = merged.get(config);
  if (known && known.live === live) return known.config;
  const declared = config.upstreams.value;
  const names = new Set(declared.map((u) => u.name));
  const upstreams = [...declared, ...live.filter((u) => !names.has(u.name))];
  const next: GatewayConfig = { ...config, upstreams: { ok: true, value: upstreams } };
  merged.set(config, { live, config: next });
  return next;
}
