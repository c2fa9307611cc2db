/**
 * What each upstream offers (tools, prompts, resources), listed for the Tools and
 * Personas pages through the gateway's own upstream pool, as the relay would, by the
 * internal client (upstream/internal-client.ts) as the console's own principal
 * (context/internal-caller.ts): its upstream sessions speak each upstream's own revision
 * and are kept by the pool for the day. At most MAX_PAGES pages per list.
 */
import type { JsonObject } from "../../core/jsonrpc";
import type { UpstreamConfig } from "../../config/upstreams";
import { redactSecrets } from "../../config/secrets";
import { INTERNAL_PRINCIPALS, internalCaller, internalPool } from "../../context/internal-caller";
import { listUpstream } from "../../upstream/internal-client";
import { describeInternalFailure, type InternalCallFailure } from "../../upstream/internal-failure";
import type { ConsoleBindings } from "../../admin/console/context";

const MAX_PAGES = 10;
/** A page of the console waits this long for an upstream's lists; a slow or down upstream shows as an error. */
const CATALOG_TIMEOUT_MS = 10_000;

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

/** The console's error for a list it could not read: an upstream's own message as it gave it. */
function listError(failure: InternalCallFailure): string {
  return failure.reason === "rpc-error" ? failure.message : describeInternalFailure(failure);
}

const LISTS = [
  ["tools/list", "tools", "tool"],
  ["prompts/list", "prompts", "prompt"],
  ["resources/list", "resources", "resource"],
] as const;

/** Lists one upstream's tools, prompts and resources (a list it does not offer is skipped). */
export async function upstreamCatalog(upstream: UpstreamConfig, env: ConsoleBindings): Promise<UpstreamCatalog> {
  const entries: CatalogEntry[] = [];
  const caller = await internalCaller(INTERNAL_PRINCIPALS.console, "legacy");
  const pool = internalPool(caller, env, env.GATEWAY_KV, AbortSignal.timeout(CATALOG_TIMEOUT_MS));
  for (const [method, field, kind] of LISTS) {
    const listed = await listUpstream(pool, upstream, method, field, { maxPages: MAX_PAGES });
    if (!listed.ok) {
      if (kind === "tool") return { upstream: upstream.name, entries, error: redactSecrets(listError(listed), env) };
      continue; // an upstream without prompts or resources answers "method not found"
    }
    for (const item of listed.value.items) {
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
  }
  return { upstream: upstream.name, entries };
}
