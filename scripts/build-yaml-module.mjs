#!/usr/bin/env node
/**
 * Builds src/storage/yaml-module.mjs: the `yaml` package's `parse`, bundled into one
 * minified ES module that the Worker uploads beside its main module and imports only when
 * it reads a document that is not JSON (src/storage/document-store.ts). yaml is 96 KiB
 * minified, about a sixth of the Worker; as a module of its own, a cold isolate that never
 * reads a YAML document never parses it (issue 18; docs/benchmarks.md).
 *
 *   node scripts/build-yaml-module.mjs
 *
 * It also builds src/storage/oauth-provider-module.mjs the same way: Cloudflare's
 * workers-oauth-provider (about 130 KiB minified), which only a gateway with AUTH.signIn
 * imports (src/storage/oauth-library.ts; src/features/client-sign-in/), so the main module
 * and the cold isolates of every other gateway stay as they were.
 *
 * The files are generated, not committed (.gitignore). Every build makes it first:
 * wrangler.toml's `[build] command` runs this script before `wrangler deploy` (the dry run
 * too), `wrangler dev` (`npm start`, the e2e tests, the benchmarks) and
 * scripts/bundle-report.mjs; vitest.config.ts runs it for the workerd tests (the vitest
 * integration does not run wrangler's custom build). Its types are
 * src/storage/yaml-module.d.mts, committed, so `npm run typecheck` needs no build.
 *
 * The bundler is the esbuild wrangler bundles the Worker with (resolved through wrangler,
 * not a dependency of our own), with the conditions wrangler uses for workerd. The file is
 * written only when its text changes (`wrangler dev` runs this again on every change under
 * src/, and an unchanged file must not look like one), and then whole, through a rename
 * (gateways started at once, as the e2e tests do, each run it).
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const YAML_MODULE = path.join(ROOT, "src", "storage", "yaml-module.mjs");
export const OAUTH_PROVIDER_MODULE = path.join(ROOT, "src", "storage", "oauth-provider-module.mjs");
export const JSON_SCHEMA_MODULE = path.join(ROOT, "src", "storage", "json-schema-module.mjs");
export const CODE_MODE_MODULE = path.join(ROOT, "src", "storage", "code-mode-module.mjs");
export const GUARDRAILS_MODULE = path.join(ROOT, "src", "storage", "guardrails-module.mjs");
export const APPROVALS_MODULE = path.join(ROOT, "src", "storage", "approvals-module.mjs");
export const USER_CREDENTIALS_MODULE = path.join(ROOT, "src", "storage", "user-credentials-module.mjs");
export const SEARCH_MODULE = path.join(ROOT, "src", "storage", "search-module.mjs");
export const NAMED_SERVERS_MODULE = path.join(ROOT, "src", "storage", "named-servers-module.mjs");
/**
 * What the module exports: only what src/storage/document-store.ts calls. esbuild leaves out
 * what `parse` cannot reach, which is little (95.5 KiB against 100.9 for all of yaml): a
 * parsed document can be stringified again, so most of yaml is reachable from it.
 */
const ENTRY = 'export { parse } from "yaml";';

/** The esbuild that wrangler bundles with. */
async function wranglersEsbuild() {
  const fromWrangler = createRequire(createRequire(path.join(ROOT, "package.json")).resolve("wrangler/package.json"));
  return import(pathToFileURL(fromWrangler.resolve("esbuild")).href);
}

/** The version of an installed package. */
function versionOf(name) {
  return JSON.parse(
    readFileSync(createRequire(path.join(ROOT, "package.json")).resolve(`${name}/package.json`), "utf8"),
  ).version;
}

/** Builds the yaml module; returns whether the file changed. */
export function buildYamlModule() {
  return buildModule({ entry: ENTRY, file: YAML_MODULE, banner: `yaml ${versionOf("yaml")} (ISC license)` });
}

/** Builds the workers-oauth-provider module (its `cloudflare:workers` import left to workerd); returns whether it changed. */
export function buildOAuthProviderModule() {
  const name = "@cloudflare/workers-oauth-provider";
  return buildModule({
    // With the gateway's view of its namespace for loopback client ids, which only `npm start` uses.
    entry: `export * from "${name}";
export { withLoopbackClients } from "./src/features/client-sign-in/loopback-client.ts";`,
    file: OAUTH_PROVIDER_MODULE,
    banner: `${name} ${versionOf(name)} (MIT license)`,
    external: ["cloudflare:workers"],
  });
}

/**
 * Builds the @cfworker/json-schema module: only a call to a tool whose change waits for an
 * operator under `enforce` validates arguments (src/features/pins/pin-arguments.ts); returns whether it changed.
 */
export function buildJsonSchemaModule() {
  const name = "@cfworker/json-schema";
  return buildModule({
    entry: `export { Validator } from "${name}";`,
    file: JSON_SCHEMA_MODULE,
    banner: `${name} ${versionOf(name)} (MIT license)`,
  });
}

/**
 * Builds code mode's program preparation with acorn, its sandbox's modules and its tool
 * declarations (src/features/code-mode/lazy-entry.ts): only
 * a client running a program imports it (src/storage/code-mode-library.ts); returns whether it changed.
 */
export function buildCodeModeModule() {
  return buildModule({
    entry: 'export { declarationsAnswer, runAnswer } from "./src/features/code-mode/lazy-entry.ts";',
    file: CODE_MODE_MODULE,
    banner: `src/features/code-mode/lazy-entry.ts and acorn ${versionOf("acorn")} (MIT license)`,
    external: ["cloudflare:workers"],
  });
}

/**
 * Builds the guardrails engine (src/features/guardrails/engine.ts): only a gateway with a
 * guardrails document imports it (src/storage/guardrails-library.ts); returns whether it changed.
 */
export function buildGuardrailsModule() {
  const entry = 'export * from "./src/features/guardrails/engine.ts";';
  return buildModule({ entry, file: GUARDRAILS_MODULE, banner: "src/features/guardrails/engine.ts" });
}

/**
 * Builds approvals (src/features/approvals/lazy-entry.ts): only a call held for approval, an
 * approver's request or the console's Approvals page imports it (src/storage/approvals-library.ts).
 */
export function buildApprovalsModule() {
  const entry = 'export * from "./src/features/approvals/lazy-entry.ts";';
  return buildModule({ entry, file: APPROVALS_MODULE, banner: "src/features/approvals/lazy-entry.ts" });
}

/**
 * Builds the token exchange and key page of users' own credentials
 * (src/features/user-credentials/lazy-entry.ts): only isolates serving a tokenExchange
 * upstream or the key page import it (src/storage/user-credentials-library.ts).
 */
export function buildUserCredentialsModule() {
  const entry = 'export * from "./src/features/user-credentials/lazy-entry.ts";';
  return buildModule({ entry, file: USER_CREDENTIALS_MODULE, banner: "src/features/user-credentials/lazy-entry.ts" });
}

/**
 * Builds named servers' logic (src/features/named-servers/lazy-entry.ts): imported only when a
 * server is used or edited, or an alias is stored (src/storage/named-servers-library.ts).
 */
export function buildNamedServersModule() {
  const entry = 'export * from "./src/features/named-servers/lazy-entry.ts";';
  return buildModule({ entry, file: NAMED_SERVERS_MODULE, banner: "src/features/named-servers/lazy-entry.ts" });
}

/**
 * Builds tool search (src/features/catalog/search-entry.ts: MiniSearch, the stemmer, the
 * ranking): imported only when a caller searches the catalog (src/storage/search-library.ts).
 */
export function buildSearchModule() {
  const entry = 'export * from "./src/features/catalog/search-entry.ts";';
  return buildModule({ entry, file: SEARCH_MODULE, banner: "src/features/catalog/search-entry.ts" });
}

/** Bundles `entry` into `file`, minified; writes it only when its text changed (returns whether it did). */
async function buildModule({ entry, file, banner, external = [] }) {
  const esbuild = await wranglersEsbuild();
  const result = await esbuild.build({
    stdin: { contents: entry, resolveDir: ROOT, sourcefile: `${path.basename(file, ".mjs")}-entry.js` },
    external,
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    // As wrangler resolves packages for workerd: yaml's browser build (ES modules), not its Node one.
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    target: "es2022",
    minify: true,
    legalComments: "none",
    banner: { js: `// Generated by scripts/build-yaml-module.mjs from ${banner}; do not edit.` },
    logLevel: "error",
  });
  const text = result.outputFiles[0].text;
  let previous;
  try {
    previous = readFileSync(file, "utf8");
  } catch {
    previous = undefined;
  }
  if (previous === text) return false;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [file, build] of [
    [YAML_MODULE, buildYamlModule],
    [OAUTH_PROVIDER_MODULE, buildOAuthProviderModule],
    [JSON_SCHEMA_MODULE, buildJsonSchemaModule],
    [CODE_MODE_MODULE, buildCodeModeModule],
    [GUARDRAILS_MODULE, buildGuardrailsModule],
    [APPROVALS_MODULE, buildApprovalsModule],
    [USER_CREDENTIALS_MODULE, buildUserCredentialsModule],
    [NAMED_SERVERS_MODULE, buildNamedServersModule],
    [SEARCH_MODULE, buildSearchModule],
  ]) {
    const changed = await build();
    console.log(`[lazy-module] ${path.relative(process.cwd(), file) || file} ${changed ? "written" : "up to date"}`);
  }
}
