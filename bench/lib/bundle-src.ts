/**
 * Loads the gateway's own modules into a Node benchmark: src/ is written for workerd's
 * bundler (extensionless imports), so it is bundled with esbuild first. The bundle is
 * written inside node_modules, where its external packages resolve.
 */
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Bundles `source` (an ES module text importing from ./src/...) and imports it. */
export async function loadSource<T>(source: string): Promise<T> {
  const dir = mkdtempSync(path.join(ROOT, "node_modules", ".bench-"));
  const outfile = path.join(dir, "bundle.mjs");
  try {
    await build({
      stdin: { contents: source, resolveDir: ROOT, loader: "ts" },
      bundle: true,
      format: "esm",
      platform: "node",
      external: ["yaml"],
      mainFields: ["module", "main"],
      outfile,
      logLevel: "error",
    });
    return (await import(pathToFileURL(outfile).href)) as T;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
