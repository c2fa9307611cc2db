/**
 * The wrangler config the workers tests run with: wrangler.toml as it is, written as JSON
 * into a directory of its own, so the test runtime reads none of a developer's local files.
 *
 * Wrangler takes local secrets from the config's own directory: `.dev.vars`, else `.env`
 * files (getVarsForDev in wrangler, which the Cloudflare vitest integration calls with no
 * way to pass `--env-file`). A developer who follows docs/authentication.md keeps an
 * ADMIN_TOKEN there for `npm start`; read by the tests, it turned the admin API on where
 * tests expect it off. The copy's directory holds no such file, and its relative paths are
 * made absolute so it describes the same Worker.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";

/** Top-level fields of a wrangler config that name a path relative to the config's directory. */
const PATH_FIELDS = ["main", "base_dir", "tsconfig"] as const;

/**
 * Writes `source` (a wrangler.toml) as `wrangler.json` in `outDir` and returns its path.
 * The write is atomic (a temporary file renamed), so two runs at once never read half a file.
 *
 * @example
 * const configPath = isolatedWranglerConfig("wrangler.toml", "node_modules/.cache/mcp-edge-gateway/workers-test");
 */
export function isolatedWranglerConfig(source: string, outDir: string): string {
  const sourceDir = path.dirname(path.resolve(source));
  const config: Record<string, unknown> = parse(readFileSync(source, "utf8"));
  for (const field of PATH_FIELDS) {
    const value = config[field];
    if (typeof value === "string") config[field] = path.resolve(sourceDir, value);
  }
  const assets = config["assets"];
  if (typeof assets === "object" && assets !== null && "directory" in assets && typeof assets.directory === "string") {
    config["assets"] = { ...assets, directory: path.resolve(sourceDir, assets.directory) };
  }
  // The custom build (scripts/build-yaml-module.mjs) runs for deploys and `wrangler dev`;
  // vitest.config.ts runs it itself.
  delete config["build"];
  mkdirSync(outDir, { recursive: true });
  const target = path.join(outDir, "wrangler.json");
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`);
  renameSync(temporary, target);
  return target;
}
