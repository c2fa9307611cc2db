/**
 * Miniflare options for the gateway's bundle, read from wrangler.toml, so the tests and
 * benchmarks that run the dry run's modules (test/e2e/uploaded-modules.test.ts,
 * bench/cold-start.mjs) run them with the deployed Worker's compatibility date, flags and
 * bindings rather than a copy that drifts from it. Only what those runs use is read:
 * compatibility, KV, R2, the queue producer and the Durable Objects (vars and services are
 * each run's own).
 *
 *   const options = { ...gatewayWorkerOptions(), modules, modulesRoot: outdir, bindings };
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "smol-toml";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * @param {string} [config] a wrangler.toml (the repository's by default)
 * @returns {{ compatibilityDate: string, compatibilityFlags: string[], kvNamespaces: string[], r2Buckets: string[], queueProducers: Record<string, string>, durableObjects: Record<string, { className: string, useSQLite: boolean }> }}
 */
export function gatewayWorkerOptions(config = path.join(ROOT, "wrangler.toml")) {
  const toml = /** @type {any} */ (parse(readFileSync(config, "utf8")));
  const sqlite = new Set((toml.migrations ?? []).flatMap((migration) => migration.new_sqlite_classes ?? []));
  return {
    compatibilityDate: toml.compatibility_date,
    compatibilityFlags: toml.compatibility_flags ?? [],
    kvNamespaces: (toml.kv_namespaces ?? []).map((kv) => kv.binding),
    r2Buckets: (toml.r2_buckets ?? []).map((r2) => r2.binding),
    queueProducers: Object.fromEntries(
      (toml.queues?.producers ?? []).map((producer) => [producer.binding, producer.queue]),
    ),
    durableObjects: Object.fromEntries(
      (toml.durable_objects?.bindings ?? []).map((object) => [
        object.name,
        { className: object.class_name, useSQLite: sqlite.has(object.class_name) },
      ]),
    ),
  };
}
