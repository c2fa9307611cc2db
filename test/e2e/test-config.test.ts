/**
 * The workers tests never read a developer's local files: wrangler adds the `.dev.vars`
 * (else `.env`) beside a config to its bindings, and a developer following
 * docs/authentication.md keeps an ADMIN_TOKEN there. vitest.config.ts hands the Cloudflare
 * integration a copy of wrangler.toml in a directory of its own
 * (test/helpers/node/isolated-wrangler-config.ts); here wrangler itself resolves the
 * bindings of a config beside such files, as the integration does, and of that copy.
 * test/config/config.test.ts checks, inside workerd, that the running tests got no local value.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { isolatedWranglerConfig } from "../helpers/node/isolated-wrangler-config.ts";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
/** At least 32 characters, as the admin token rules ask. */
const LOCAL_ADMIN_TOKEN = "a-developer-local-admin-token-0123456789";

let dir: string;

/** The bindings wrangler gives the Worker of `configPath`, the way the vitest integration asks for them. */
function bindingsOf(configPath: string): Record<string, unknown> {
  const config = unstable_readConfig({ config: configPath });
  const overrides = { enableContainers: false };
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config, undefined, { overrides });
  return (workerOptions.bindings ?? {}) as Record<string, unknown>;
}

beforeEach(() => {
  // A checkout of the repository's config with a developer's local files beside it.
  dir = mkdtempSync(path.join(tmpdir(), "test-config-"));
  cpSync(path.join(ROOT, "wrangler.toml"), path.join(dir, "wrangler.toml"));
  writeFileSync(path.join(dir, ".dev.vars"), `ADMIN_TOKEN=${LOCAL_ADMIN_TOKEN}\nSESSION_SECRET=local-session-secret\n`);
  writeFileSync(path.join(dir, ".env"), "FROM_DOT_ENV=1\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the workers tests' wrangler config", () => {
  it("would pick up .dev.vars if the tests read wrangler.toml in place (the failure it prevents)", () => {
    expect(bindingsOf(path.join(dir, "wrangler.toml"))).toMatchObject({ ADMIN_TOKEN: LOCAL_ADMIN_TOKEN });
  });

  it("reads neither .dev.vars nor .env, and keeps every binding and var of wrangler.toml", () => {
    const isolated = isolatedWranglerConfig(path.join(dir, "wrangler.toml"), path.join(dir, "isolated"));
    const bindings = bindingsOf(isolated);
    expect(bindings).not.toHaveProperty("ADMIN_TOKEN");
    expect(bindings).not.toHaveProperty("SESSION_SECRET");
    expect(bindings).not.toHaveProperty("FROM_DOT_ENV");
    const original = unstable_readConfig({ config: path.join(dir, "wrangler.toml") });
    const copy = unstable_readConfig({ config: isolated });
    expect(Object.keys(bindings).sort()).toEqual(Object.keys(original.vars).sort());
    const fields = ["kv_namespaces", "r2_buckets", "queues", "durable_objects", "ratelimits", "services"] as const;
    for (const field of [...fields, "compatibility_date", "compatibility_flags", "rules", "migrations"] as const) {
      expect(copy[field], field).toEqual(original[field]);
    }
    // Paths still name the repository's files, now from another directory.
    expect(copy.main).toBe(path.join(dir, "src", "index.ts"));
    expect(copy.base_dir).toBe(path.join(dir, "src", "storage"));
  });
});
