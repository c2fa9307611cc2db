/**
 * The Worker's modules as `wrangler deploy --dry-run --outdir <dir>` leaves them in <dir>:
 * the main module (`index.js`, what every cold isolate parses and runs before its first
 * request) and the modules uploaded beside it (`find_additional_modules` in wrangler.toml:
 * yaml, imported on an isolate's first YAML document), each with its size as uploaded
 * (minified, not compressed). Source maps and wrangler's README are not modules.
 *
 * Used by the dry run's budget (scripts/deploy.mjs), scripts/bundle-report.mjs, the
 * cold-start benchmark and the test of the uploaded modules, so they all count the same files.
 *
 *   const { main, modules, totalBytes } = bundleModules(outdir);
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** The gateway's main module: wrangler names the bundle after `main` (src/index.ts). */
export const MAIN_MODULE = "index.js";

/**
 * @param {string} outdir a `wrangler deploy --dry-run --outdir` directory
 * @param {string} mainModule the main module's name (another Worker's: its `main`, as `.js`)
 * @returns {{ main: BundleModule, modules: BundleModule[], totalBytes: number }} `modules` starts with `main`
 * @typedef {{ name: string, path: string, bytes: number, type: 'ESModule' }} BundleModule
 */
export function bundleModules(outdir, mainModule = MAIN_MODULE) {
  const names = readdirSync(outdir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(?:m?js|cjs)$/.test(entry.name))
    .map((entry) => path.relative(outdir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));
  if (!names.includes(mainModule))
    throw new Error(`no ${mainModule} in ${outdir}: not what \`wrangler deploy --dry-run --outdir\` writes`);
  const modules = [mainModule, ...names.filter((name) => name !== mainModule).sort()].map((name) => {
    // The gateway uploads ES modules only; a CommonJS one would need its own type here and in wrangler.toml's rules.
    if (name.endsWith(".cjs"))
      throw new Error(`${name}: a CommonJS module in the bundle; only ES modules are expected`);
    const file = path.join(outdir, name);
    return { name, path: file, bytes: statSync(file).size, type: "ESModule" };
  });
  return { main: modules[0], modules, totalBytes: modules.reduce((sum, module) => sum + module.bytes, 0) };
}
