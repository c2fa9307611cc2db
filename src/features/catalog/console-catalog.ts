/**
 * What each upstream offers (tools, prompts, resources), listed for the Tools and
 * Personas pages through the gateway's own upstream pool, as the relay would: the
 * console's client session speaks each upstream's own revision and is kept per isolate
 * (a cache; a new one is opened whenever it is gone). At most MAX_PAGES pages per list.
 */
import { randomHexId } from "../../core/ids";
import { GATEWAY_INFO } from "../../core/gateway-info";
import { isObject, type JsonObject } from "../../core/jsonrpc";
import type { UpstreamConfig } from "../../config/upstreams";
import { redactSecrets } from "../../config/secrets";
import { LATEST_SESSION_REVISION } from "../../core/revisions";
import { describeFailure } from "../../upstream/failures";
import { sendToUpstream, upstreamMessages } from "../../upstream/pool";
import type { UpstreamClient } from "../../upstream/upstream-session";
import type { ConsoleBindings } from "../../admin/console/context";

const MAX_PAGES = 10;
/** A page of the console waits this long for an upstream's lists; a slow or down upstream shows as an error. */
const CATALOG_TIMEOUT_MS = 10_000;
const CLIENT_TTL_S = 60 * 60;

/** One tool, prompt or resource as an upstream lists it (its own name; `key` is `<upstream>___<name>`, or a resource's URI). */
export type CatalogEntry = {
  readonly kind: "tool" | "prompt" | "resource";
  readonly name: string;
  readonly key: string;
  readonly title?: string;
  readonly description?: string;
  /** A tool's definition as the upstream lists it (the Servers page estimates its list's tokens from it). */
  readonly definition?: JsonObject;
};

/** One upstream's lists, or why they could not be read. */
export type UpstreamCatalog = {
  readonly upstream: string;
  readonly entries: readonly CatalogEntry[];
  readonly error?: string;
};

let client: UpstreamClient | undefined;

function consoleClient(): UpstreamClient {
  const now = Math.floor(Date.now() / 1000);
  if (!client || client.exp - now < 60) {
    client = {
      sid: `console-${randomHexId()}`,
      protocolVersion: LATEST_SESSION_REVISION,
      clientCapabilities: {},
      clientInfo: { ...GATEWAY_INFO },
      upstreams: {},
      exp: now + CLIENT_TTL_S,
    };
  }
  return client;
}

async function listPage(
  upstream: UpstreamConfig,
  env: ConsoleBindings,
  method: string,
  cursor: string | undefined,
  signal: AbortSignal,
): Promise<{ ok: true; result: JsonObject } | { ok: false; error: string }> {
  const request = { jsonrpc: "2.0", id: `console-${method}`, method, ...(cursor ? { params: { cursor } } : {}) };
  const reply = await sendToUpstream(
    upstream,
    JSON.stringify(request),
    { env, kv: env.GATEWAY_KV, session: consoleClient(), signal },
    { answerWithinTimeout: true },
  );
  if (!reply.ok) return { ok: false, error: describeFailure(reply) };
  for await (const item of upstreamMessages(reply.value, upstream.name)) {
    if (!item.ok) return { ok: false, error: describeFailure(item) };
    const message = item.value.message as JsonObject;
    if (message["id"] !== request.id || "method" in message) continue;
    if (isObject(message["error"])) return { ok: false, error: String(message["error"]["message"]) };
    return isObject(message["result"])
      ? { ok: true, result: message["result"] }
      : { ok: false, error: "the answer had no result" };
  }
  return { ok: false, error: `${method} got no answer` };
}

const LISTS = [
  ["tools/list", "tools", "tool"],
  ["prompts/list", "prompts", "prompt"],
  ["resources/list", "resources", "resource"],
] as const;

/** Lists one upstream's tools, prompts and resources (a list it does not offer is skipped). */
export async function upstreamCatalog(upstream: UpstreamConfig, env: ConsoleBindings): Promise<UpstreamCatalog> {
  const entries: CatalogEntry[] = [];
  const signal = AbortSignal.timeout(CATALOG_TIMEOUT_MS);
  for (const [method, field, kind] of LISTS) {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const listed = await listPage(upstream, env, method, cursor, signal);
      if (!listed.ok) {
        if (kind === "tool") return { upstream: upstream.name, entries, error: redactSecrets(listed.error, env) };
        break; // an upstream without prompts or resources answers "method not found"
      }
      const items = Array.isArray(listed.result[field]) ? listed.result[field] : [];
      for (const item of items) {
        if (!isObject(item)) continue;
        const name = String(kind === "resource" ? (item["uri"] ?? "") : (item["name"] ?? ""));
        entries.push({
          kind,
          name,
          key: kind === "resource" ? name : `${upstream.name}___${name}`,
          ...(typeof item["title"] === "string" ? { title: item["title"] } : {}),
          ...(typeof item["description"] === "string" ? { description: item["description"] } : {}),
          ...(kind === "tool" ? { definition: item } : {}),
        });
      }
      cursor = typeof listed.result["nextCursor"] === "string" ? listed.result["nextCursor"] : undefined;
      if (!cursor) break;
    }
  }
  return { upstream: upstream.name, entries };
}
