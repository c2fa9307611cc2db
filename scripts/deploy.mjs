#!/usr/bin/env node
/**
 * `npm run deploy`: from a fresh Cloudflare account to a deployed gateway in one command.
 *
 *   npm run deploy                          # check, create what is missing, deploy
 *   npm run deploy -- --generate-secrets    # also generate SESSION_SECRET, ADMIN_TOKEN, IDENTITY_SIGNING_KEY where missing
 *   npm run deploy -- --open                # deploy although AUTH is unset or off (anyone may call the upstreams)
 *   npm run deploy -- --dry-run             # no account needed: config checks, then `wrangler deploy --dry-run` and the bundle budgets
 *   npm run deploy -- --config prod.toml    # another wrangler config
 *
 * What it does, in order, each step through `wrangler` (found on PATH; `npm run` puts
 * node_modules/.bin first):
 * 1. Refuses a gateway that would be open: AUTH unset (every MCP request refused) or
 *    `{"mode":"off"}` (anyone may call), unless `--open`. Nothing is touched before this.
 * 2. `wrangler whoami`: logged in?
 * 3. Resources the config binds: KV namespaces (looked up by title `<worker>-<binding>`,
 *    or by the binding's name as the manual steps created it; created when missing; the id
 *    written into the config in place of the placeholder), R2 buckets, Queues and dead-letter queues (`info`, then `create` when missing).
 *    Nothing that exists is created again, so a second run creates nothing.
 * 4. Secrets: the ones the config needs (SESSION_SECRET; IDENTITY_SIGNING_KEY when an
 *    upstream asks for identity assertions; every upstream's credential secret) against
 *    `wrangler secret list`. Missing ones are named with the exact command that sets each,
 *    and nothing is deployed, unless `--generate-secrets` may generate them: generated
 *    values go to `wrangler deploy --secrets-file` through a file only this user can read,
 *    removed afterwards, and are never printed (but ADMIN_TOKEN, which the operator needs,
 *    printed once). ADMIN_TOKEN is recommended, not required (without it the admin API is off).
 * 5. The demo upstream (demo/wrangler.toml) first when UPSTREAMS still uses it, then
 *    `wrangler deploy`.
 *
 * Both warn (and go on) where the config deploys something that cannot work as meant
 * (deployWarnings): an upstream on a loopback or private address, the demo upstream still in
 * UPSTREAMS, `--open` with AUTH unset.
 *
 * `--dry-run` does steps 1 and 4 from the config alone (warning instead of refusing) and
 * runs `wrangler deploy --dry-run --outdir <tmp>`; it fails when the main module is over
 * `--bundle-budget-kib` (default MAIN_MODULE_BUDGET_KIB) or all the modules uploaded are
 * over `--upload-budget-kib` (default UPLOAD_BUDGET_KIB). CI runs it.
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse as parseToml } from "smol-toml";
import { bundleModules } from "./lib/bundle-modules.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/**
 * The dry run's budgets, in KiB of minified JavaScript as uploaded (uncompressed), from
 * scripts/lib/bundle-modules.mjs. The one that counts is the main module's (`index.js`):
 * every cold isolate parses and runs all of it before its first request, and issue 18 asks
 * for 600 KiB. The modules uploaded beside it (yaml, src/storage/yaml-module.mjs) are
 * imported only when needed, so an isolate that never needs one never parses it; they still
 * count towards the whole upload, held to a budget of its own, so that moving code out of the main module
 * never hides growth: 640 (the budget the single bundle had before yaml moved out), raised
 * by 20 when reading and writing streams on bytes (src/core/sse-bytes.ts, json-bytes.ts,
 * byte-reads.ts, front/http/sse-writer.ts: +7 KiB in src/core, for isolate growth of about
 * 24 MiB instead of 117 relaying 150 MiB) took the whole to 642.7. Raised to 840 for
 * modules that most isolates never load: workers-oauth-provider (oauth-provider-module.mjs,
 * 121.4 KiB, AUTH.signIn only) and @cfworker/json-schema (json-schema-module.mjs, 22.2
 * KiB, moved out of the main module: arguments of a held call only); with issue 32's
 * defences (+25 KiB: findings, throttling, sign-in checks) and client sign-in's own code,
 * the whole was 821.5 and the main module 582.3. Raised to 1024 for two modules loaded only
 * by the features that need them: code mode's (code-mode-module.mjs, 134.3 KiB, about 100 of
 * them acorn: loaded only to answer sys___search_tools or sys___run_code in the code catalog
 * mode) and the guardrails engine (guardrails-module.mjs, 31.1 KiB, imported only when a
 * guardrails document is stored). Code mode took the main module from 584.8 to 590.7 KiB and
 * the guardrails' middleware, admin routes and console page 5.7 KiB more.
 * The main module's budget raised from 600 (issue 18) to 640 and the upload's to 1080 when
 * client sign-in's grants, consent and providers (+17.5 KiB) and live upstreams (+16.8 KiB)
 * landed: 632.8 KiB main, 1037.4 uploaded. Approvals (issue 37) added 1.8 KiB to the main
 * module (the CallApproval class and thin mounts) and approvals-module.mjs, loaded only for a
 * held call, an approver's request or the console's Approvals page. What it costs: V8 compiles about 0.035 ms more per
 * KiB (13.8 ms for 535 KiB against 17.2 for 631, docs/benchmarks.md), so about 1 ms per cold
 * isolate. The way back under 600 is operator-only code out of the main module (the console,
 * 46 KiB, and the admin routes), which first needs the isolate's document caches shared with
 * a module loaded on demand (an admin write forgets the cached copy the relay reads).
 * Issues 34-38's second round took the main module to 644.8 KiB; tool search (MiniSearch, the
 * stemmer and the ranking, search-module.mjs, 36.9 KiB) then moved out, loaded only by routes in
 * the search and code modes: 614.1 KiB, so the main budget comes down to 625 to keep that. The
 * upload's rose to 1180 for five modules loaded only by the features that need them:
 * approvals (20.5), named servers (18.7), users' token exchange and key page (14.2), search
 * (36.9) and the guardrails engine's webhook, model and streamed checks (31.1 -> 53.3):
 * 1134.3 KiB in all.
 * Issue 33's restructuring and issue 38's byte path took it from 614.8 to 625.6 KiB: one chain
 * per method and the per-method table (+2.4), the upstream target resolved once (+2.7), typed
 * answers and the ordered large-answer policy (+2.3), the byte path (+2.5), one internal
 * client (+1.2), typed failures (+0.7), the feature plugs (+0.9), one filter language (-1.7);
 * the budget rises to 630 for that, every part of it on the request path.
 * Issue 38's pieces path took it to 631.8 KiB: the resumable byte checker of large answers,
 * their pieces, their SSE path and a 2026-07-28 upstream's complete results (+5.8), the stand-in
 * id, approvals list and small-call fixes (+0.4); the budget rises to 635, all on the request path.
 * Issue 38's flows took it to 638.5 KiB (+6.8): an answer nobody reads passed on as it arrives
 * (the flow, its writing to either framing, the permit, the record's and audit's wait) and the
 * checker's loop for deep tokens; the budget rises to 642, all on the request path.
 */
export const MAIN_MODULE_BUDGET_KIB = 642;
export const UPLOAD_BUDGET_KIB = 1180;
const PLACEHOLDER = /^REPLACE_WITH_/;
const DEMO_SERVICE = "mcp-edge-gateway-demo";

const USAGE = `Usage: npm run deploy -- [--dry-run] [--open] [--generate-secrets] [--config <wrangler.toml>] [--bundle-budget-kib <n>] [--upload-budget-kib <n>]`;

/** Runs wrangler with `args`; its output is returned, not shown (callers print what matters). */
function wrangler(args, { input } = {}) {
  const run = spawnSync("wrangler", args, {
    cwd: ROOT,
    encoding: "utf8",
    input,
    env: process.env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error)
    throw new Error(
      `could not run wrangler (${run.error.message}); run this through \`npm run deploy\` so node_modules/.bin is on PATH`,
    );
  return { ok: run.status === 0, stdout: run.stdout ?? "", stderr: run.stderr ?? "" };
}

/** Like {@link wrangler}, but a failure ends the script with wrangler's own words. */
function wranglerOrExit(args, what) {
  const run = wrangler(args);
  if (!run.ok) fail(`${what} failed:\n${(run.stderr || run.stdout).trim()}`);
  return run;
}

function fail(message) {
  console.error(`[deploy] ${message}`);
  process.exit(1);
}

const say = (message) => console.log(`[deploy] ${message}`);

/** Why deploying this AUTH would leave the gateway closed or open; undefined when it is fine. */
export function authProblem(raw) {
  if (raw === undefined || raw === "") {
    return "AUTH is not set, so the deployed gateway would refuse every MCP request. Set AUTH in [vars] (docs/authentication.md), e.g. AUTH = '{\"apiKeys\": true}'.";
  }
  let value;
  try {
    value = typeof raw === "string" ? JSON.parse(raw) : raw;
  } catch {
    return "AUTH is not valid JSON; the deployed gateway would refuse every request.";
  }
  if (value && typeof value === "object" && value.mode === "off") {
    return 'AUTH is {"mode":"off"}: anyone who finds the URL could call every upstream. Turn authentication on.';
  }
  return undefined;
}

/** The upstream list in the config's vars (empty when absent or unreadable: the Worker reports that itself). */
function upstreamsOf(config) {
  try {
    const list = JSON.parse(config.vars?.UPSTREAMS ?? "[]");
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

/**
 * The secrets the config needs: `required` ones block a deploy when missing; `generate`
 * makes a value for the ones that are the gateway's own.
 */
export function secretsNeeded(config) {
  const upstreams = upstreamsOf(config);
  const needed = [
    {
      name: "SESSION_SECRET",
      why: "seals sessions and request state",
      required: true,
      generate: () => randomBytes(32).toString("hex"),
    },
    {
      name: "ADMIN_TOKEN",
      why:
        "turns the admin API on (at least 32 characters, e.g. `openssl rand -hex 32`; " +
        "a shorter one keeps it closed); " +
        "it is off without it",
      required: false,
      generate: () => randomBytes(32).toString("base64url"),
      show: true,
    },
  ];
  if (upstreams.some((upstream) => upstream?.identity)) {
    needed.push({
      name: "IDENTITY_SIGNING_KEY",
      why: "signs identity assertions to upstreams",
      required: true,
      generate: identitySigningKey,
    });
  }
  for (const upstream of upstreams) {
    const secret = upstream?.credential?.secret;
    if (typeof secret === "string" && !needed.some((s) => s.name === secret)) {
      needed.push({ name: secret, why: `credential of upstream "${upstream.name}"`, required: true });
    }
    // The client secret an upstream's sign-in (oauth) or token exchange authenticates the gateway with.
    const client = upstream?.auth?.clientSecret;
    if (typeof client === "string" && !needed.some((s) => s.name === client)) {
      const why = `client secret of upstream "${upstream.name}" (auth ${upstream.auth.type ?? "oauth"})`;
      needed.push({ name: client, why, required: true });
    }
  }
  return needed;
}

/** A private P-256 JWK, the form IDENTITY_SIGNING_KEY takes. */
function identitySigningKey() {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return JSON.stringify({ ...privateKey.export({ format: "jwk" }), kid: `gateway-${randomBytes(4).toString("hex")}` });
}

/** The KV namespaces, R2 buckets and queues the config binds. */
export function resourcesOf(config) {
  const queues = new Set();
  for (const producer of config.queues?.producers ?? []) queues.add(producer.queue);
  for (const consumer of config.queues?.consumers ?? []) {
    queues.add(consumer.queue);
    if (consumer.dead_letter_queue) queues.add(consumer.dead_letter_queue);
  }
  return {
    kv: (config.kv_namespaces ?? []).map((kv) => ({ binding: kv.binding, id: kv.id })),
    buckets: (config.r2_buckets ?? []).map((bucket) => bucket.bucket_name),
    queues: [...queues],
  };
}

/** `text` (a wrangler.toml) with the `id` of the KV binding `binding` set to `id`; comments and layout kept. */
export function withKvId(text, binding, id) {
  const blocks = text.split(/^(?=\[)/m);
  const index = blocks.findIndex(
    (block) => /^\[\[kv_namespaces\]\]/.test(block) && new RegExp(`^\\s*binding\\s*=\\s*"${binding}"`, "m").test(block),
  );
  if (index === -1) throw new Error(`no [[kv_namespaces]] block with binding "${binding}"`);
  const block = blocks[index];
  blocks[index] = /^\s*id\s*=.*$/m.test(block)
    ? block.replace(/^(\s*id\s*=\s*).*$/m, `$1"${id}"`)
    : block.replace(new RegExp(`^(\\s*binding\\s*=\\s*"${binding}".*)$`, "m"), `$1\nid = "${id}"`);
  return blocks.join("");
}

function kvNamespaces(configFile) {
  const run = wranglerOrExit(["kv", "namespace", "list", "-c", configFile], "Listing KV namespaces");
  try {
    return JSON.parse(run.stdout);
  } catch {
    fail(`could not read the KV namespace list wrangler printed:\n${run.stdout.slice(0, 500)}`);
  }
}

/** Makes sure each KV binding names a namespace of the account; returns the config text with ids filled in. */
function ensureKv(config, configFile, text) {
  const bindings = resourcesOf(config).kv;
  if (bindings.length === 0) return text;
  let namespaces = kvNamespaces(configFile);
  for (const { binding, id } of bindings) {
    if (id && !PLACEHOLDER.test(id)) {
      if (!namespaces.some((ns) => ns.id === id))
        fail(
          `KV namespace ${id} (binding ${binding}) is not in this account: fix its id in the config, or replace it by REPLACE_WITH_YOUR_KV_NAMESPACE_ID to have one created`,
        );
      say(`KV ${binding}: ${id} exists`);
      continue;
    }
    const title = `${config.name}-${binding}`;
    // `wrangler kv namespace create GATEWAY_KV`, as the manual steps used to say, titles it by the binding alone.
    let found = namespaces.find((ns) => ns.title === title) ?? namespaces.find((ns) => ns.title === binding);
    if (found) say(`KV ${binding}: found namespace "${found.title}" (${found.id})`);
    else {
      wranglerOrExit(["kv", "namespace", "create", title, "-c", configFile], `Creating KV namespace "${title}"`);
      namespaces = kvNamespaces(configFile);
      found = namespaces.find((ns) => ns.title === title);
      if (!found) fail(`KV namespace "${title}" was created but does not appear in the list`);
      say(`KV ${binding}: created namespace "${title}" (${found.id})`);
    }
    text = withKvId(text, binding, found.id);
  }
  return text;
}

/** `info`, then `create` when missing, for each R2 bucket and queue. */
function ensureBucketsAndQueues(config, configFile) {
  const { buckets, queues } = resourcesOf(config);
  for (const bucket of buckets) {
    if (wrangler(["r2", "bucket", "info", bucket, "-c", configFile]).ok) say(`R2 bucket ${bucket}: exists`);
    else {
      wranglerOrExit(["r2", "bucket", "create", bucket, "-c", configFile], `Creating R2 bucket "${bucket}"`);
      say(`R2 bucket ${bucket}: created`);
    }
  }
  for (const queue of queues) {
    if (wrangler(["queues", "info", queue, "-c", configFile]).ok) say(`Queue ${queue}: exists`);
    else {
      wranglerOrExit(["queues", "create", queue, "-c", configFile], `Creating queue "${queue}"`);
      say(`Queue ${queue}: created`);
    }
  }
}

/**
 * Names of the Worker's secrets (none when the Worker does not exist yet). Any other
 * failure ends the script: guessing "none" would make --generate-secrets overwrite the
 * secrets a deployed gateway has (every session, sealed state and task id would end).
 */
function secretNames(configFile) {
  const run = wrangler(["secret", "list", "--format", "json", "-c", configFile]);
  const output = `${run.stderr}${run.stdout}`;
  if (!run.ok && /Worker "[^"]*"(?: \(env: [^)]*\))? not found/.test(output)) return [];
  if (!run.ok)
    fail(
      `Listing the Worker's secrets failed, so which are missing is unknown (nothing was generated or deployed):\n${output.trim()}`,
    );
  try {
    return JSON.parse(run.stdout).map((secret) => secret.name);
  } catch {
    fail(
      `could not read the secret list wrangler printed (nothing was generated or deployed):\n${run.stdout.slice(0, 500)}`,
    );
  }
}

/** True when UPSTREAMS reaches the demo upstream through a service binding to it. */
function usesDemo(config) {
  const bindings = (config.services ?? [])
    .filter((service) => service.service === DEMO_SERVICE)
    .map((service) => service.binding);
  return upstreamsOf(config).some((upstream) => bindings.includes(upstream?.service));
}

/** IPv4 ranges a deployed Worker cannot reach: [first octets, prefix length, what they are]. */
const UNREACHABLE_IPV4 = [
  [[127], 8, "a loopback address"],
  [[0], 8, 'a "this host" address'],
  [[10], 8, "a private address (10.0.0.0/8)"],
  [[172, 16], 12, "a private address (172.16.0.0/12)"],
  [[192, 168], 16, "a private address (192.168.0.0/16)"],
  [[169, 254], 16, "a link-local address"],
  [[100, 64], 10, "a shared (carrier-grade NAT) address"],
];

/** Why `hostname` (as URL parses it) names no host a deployed Worker can reach; undefined for a public one. */
export function unreachableHost(hostname) {
  let host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  // An IPv4-mapped IPv6 address, which URL writes in hex (::ffff:7f00:1), is its IPv4 address.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    host = [mapped[1], mapped[2]].flatMap((part) => [parseInt(part, 16) >> 8, parseInt(part, 16) & 255]).join(".");
  }
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback name";
  if (/\.(local|internal|lan|home\.arpa)$/.test(host)) return "a local network name";
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) {
    const value = v4.slice(1).reduce((sum, octet) => sum * 256 + Number(octet), 0);
    for (const [octets, bits, what] of UNREACHABLE_IPV4) {
      const base = [...octets, 0, 0, 0, 0].slice(0, 4).reduce((sum, octet) => sum * 256 + octet, 0);
      if (Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits))) return what;
    }
    return undefined;
  }
  if (host === "::1") return "a loopback address";
  if (host === "::") return "an unspecified address";
  if (/^f[cd][0-9a-f]{0,2}:/.test(host)) return "a private address (fc00::/7)";
  if (/^fe[89ab][0-9a-f]?:/.test(host)) return "a link-local address";
  return undefined;
}

/**
 * What a deploy of `config` would get wrong that no check refuses: upstreams a deployed
 * Worker cannot reach, the demo upstream going out with the gateway, and `--open` given for
 * an AUTH that is unset (which does not open the gateway: it refuses every request).
 */
export function deployWarnings(config, { open = false } = {}) {
  const warnings = [];
  for (const upstream of upstreamsOf(config)) {
    if (typeof upstream?.url !== "string") continue;
    let url;
    try {
      url = new URL(upstream.url);
    } catch {
      continue; // the Worker reports an invalid UPSTREAMS itself
    }
    const what = unreachableHost(url.hostname);
    if (what) {
      warnings.push(
        `upstream "${upstream.name}" is at ${url.origin}, ${what}: a deployed gateway runs on Cloudflare, ` +
          "not on this machine or network, and cannot reach it. Give it a public https URL " +
          "(a Cloudflare Tunnel can publish one), or reach a Worker through a service binding.",
      );
    }
  }
  if (usesDemo(config)) {
    warnings.push(
      `UPSTREAMS still uses the demo upstream: a deploy also deploys demo/ as the Worker "${DEMO_SERVICE}" ` +
        "and serves its tools through the gateway. Replace UPSTREAMS with your own servers (docs/configuration.md).",
    );
  }
  const auth = config.vars?.AUTH;
  if (open && (auth === undefined || auth === "")) {
    warnings.push(
      "--open does not open a gateway whose AUTH is unset: deployed, it refuses every MCP request. " +
        'To let anyone call it, set AUTH = \'{"mode":"off"}\'; ' +
        "to require credentials, set AUTH (docs/authentication.md).",
    );
  }
  return warnings;
}

/**
 * What the config says of code mode (docs/code-mode.md): whether a Worker Loader is bound as
 * `LOADER`, and what that asks of the account. The account's side is known only when
 * `wrangler deploy` runs: an account without the Worker Loader makes it fail, and
 * {@link loaderHint} says so beside wrangler's words.
 */
export function codeModeNote(config) {
  const bound = (config.worker_loaders ?? []).some((loader) => loader?.binding === "LOADER");
  return bound
    ? "code mode: on (a Worker Loader is bound as LOADER); the account needs the Worker Loader, " +
        "or wrangler deploy fails: remove [[worker_loaders]] from wrangler.toml to deploy without code mode"
    : "code mode: off (no [[worker_loaders]] binding named LOADER): catalog=code is refused with a message naming it";
}

/** A hint for a failed `wrangler deploy` whose words name the Worker Loader; undefined otherwise. */
export function loaderHint(output) {
  return /worker[ _-]?loader/i.test(output)
    ? "the account may not have the Worker Loader that code mode uses: remove [[worker_loaders]] from " +
        "wrangler.toml to deploy without code mode (catalog=code is then refused), or enable it for the account"
    : undefined;
}

function dryRun(config, configFile, { mainBudgetKib, uploadBudgetKib, open }) {
  const auth = authProblem(config.vars?.AUTH);
  if (auth && !open) say(`warning: a real deploy would stop here unless given --open: ${auth}`);
  if (auth && open) say(`warning: a real deploy would go ahead (--open): ${auth}`);
  for (const warning of deployWarnings(config, { open })) say(`warning: ${warning}`);
  say(codeModeNote(config));
  for (const secret of secretsNeeded(config))
    say(`secret ${secret.name}: ${secret.why} (${secret.required ? "required" : "recommended"})`);
  const outdir = mkdtempSync(path.join(tmpdir(), "gateway-bundle-"));
  try {
    wranglerOrExit(["deploy", "--dry-run", "-c", configFile, "--outdir", outdir], "wrangler deploy --dry-run");
    const { main, modules, totalBytes } = bundleModules(outdir);
    const mainKib = main.bytes / 1024;
    const totalKib = totalBytes / 1024;
    const each = modules.map((module) => `${module.name} ${(module.bytes / 1024).toFixed(1)}`).join(", ");
    say(
      `bundle: ${mainKib.toFixed(1)} KiB main module (budget ${mainBudgetKib} KiB); ${totalKib.toFixed(1)} KiB uploaded in all (budget ${uploadBudgetKib} KiB): ${each}`,
    );
    const find = "find what grew (node scripts/bundle-report.mjs) before raising the budget";
    if (mainKib > mainBudgetKib)
      fail(`the main module is ${mainKib.toFixed(1)} KiB, over its budget of ${mainBudgetKib} KiB: ${find}`);
    if (totalKib > uploadBudgetKib)
      fail(
        `the modules uploaded are ${totalKib.toFixed(1)} KiB in all, over their budget of ${uploadBudgetKib} KiB: ${find}`,
      );
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function deploy(config, configFile, text, { open, generateSecrets }) {
  const auth = authProblem(config.vars?.AUTH);
  if (auth && !open) fail(`refusing to deploy: ${auth} To deploy anyway, pass --open.`);
  if (auth) say(`warning: ${auth} (deploying anyway: --open)`);
  for (const warning of deployWarnings(config, { open })) say(`warning: ${warning}`);
  if (!wrangler(["whoami", "--json", "-c", configFile]).ok)
    fail(
      "wrangler is not logged in to a Cloudflare account: run `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then run this again",
    );

  const filled = ensureKv(config, configFile, text);
  if (filled !== text) {
    writeFileSync(configFile, filled);
    say(`wrote the KV namespace id into ${path.relative(process.cwd(), configFile) || configFile}`);
  }
  ensureBucketsAndQueues(config, configFile);

  const present = new Set(secretNames(configFile));
  const generated = {};
  const missing = [];
  for (const secret of secretsNeeded(config)) {
    if (present.has(secret.name)) continue;
    if (generateSecrets && secret.generate) generated[secret.name] = secret.generate();
    else if (secret.required) missing.push(secret);
    else say(`secret ${secret.name} is not set: ${secret.why}. Set it with: npx wrangler secret put ${secret.name}`);
  }
  if (missing.length > 0) {
    const lines = missing.map(
      (secret) =>
        `  npx wrangler secret put ${secret.name}    # ${secret.why}${secret.generate ? " (or rerun with --generate-secrets)" : ""}`,
    );
    fail(
      `not deployed: ${missing.length} required secret(s) missing. Set each, then run this again:\n${lines.join("\n")}`,
    );
  }

  if (usesDemo(config)) {
    say("UPSTREAMS still uses the demo upstream: deploying it first (replace UPSTREAMS with your own servers)");
    wranglerOrExit(["deploy", "-c", path.join(ROOT, "demo", "wrangler.toml")], "Deploying the demo upstream");
  }
  const args = ["deploy", "-c", configFile];
  const secretDir =
    Object.keys(generated).length > 0 ? mkdtempSync(path.join(tmpdir(), "gateway-secrets-")) : undefined;
  let run;
  try {
    if (secretDir) {
      const file = path.join(secretDir, "secrets.json");
      writeFileSync(file, JSON.stringify(generated), { mode: 0o600 });
      args.push("--secrets-file", file);
      say(`uploading generated secret(s): ${Object.keys(generated).join(", ")}`);
    }
    say(codeModeNote(config));
    run = wrangler(args);
  } finally {
    // Before any exit: fail() ends the process, and a finally after it would never run.
    if (secretDir) rmSync(secretDir, { recursive: true, force: true });
  }
  if (!run.ok) {
    const words = (run.stderr || run.stdout).trim();
    const hint = loaderHint(words);
    fail(`wrangler deploy failed:\n${words}${hint ? `\n${hint}` : ""}`);
  }
  process.stdout.write(run.stdout);
  if (generated.ADMIN_TOKEN)
    say(`ADMIN_TOKEN (shown once, keep it in your password manager): ${generated.ADMIN_TOKEN}`);
  say("deployed");
}

function main() {
  let options;
  try {
    ({ values: options } = parseArgs({
      options: {
        "dry-run": { type: "boolean", default: false },
        open: { type: "boolean", default: false },
        "generate-secrets": { type: "boolean", default: false },
        config: { type: "string", default: path.join(ROOT, "wrangler.toml") },
        "bundle-budget-kib": { type: "string", default: String(MAIN_MODULE_BUDGET_KIB) },
        "upload-budget-kib": { type: "string", default: String(UPLOAD_BUDGET_KIB) },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (error) {
    fail(`${error.message}\n${USAGE}`);
  }
  if (options.help) return console.log(USAGE);
  const budgets = {
    mainBudgetKib: Number(options["bundle-budget-kib"]),
    uploadBudgetKib: Number(options["upload-budget-kib"]),
  };
  if (!Number.isFinite(budgets.mainBudgetKib) || budgets.mainBudgetKib <= 0)
    fail(`--bundle-budget-kib must be a positive number\n${USAGE}`);
  if (!Number.isFinite(budgets.uploadBudgetKib) || budgets.uploadBudgetKib <= 0)
    fail(`--upload-budget-kib must be a positive number\n${USAGE}`);
  const configFile = path.resolve(options.config);
  let text;
  let config;
  try {
    text = readFileSync(configFile, "utf8");
    config = parseToml(text);
  } catch (error) {
    fail(`cannot read ${configFile}: ${error.message}`);
  }
  if (options["dry-run"]) dryRun(config, configFile, { ...budgets, open: options.open });
  else deploy(config, configFile, text, { open: options.open, generateSecrets: options["generate-secrets"] });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
