#!/usr/bin/env node
/**
 * `npm start`: runs the gateway and the demo upstream in one local `wrangler dev` session.
 *
 *   npm start                          # http://127.0.0.1:8787/mcp, relaying to the demo upstream
 *   npm start -- --port 9000 --ip 0.0.0.0
 *   npm start -- --var UPSTREAMS:'[{"name":"x","url":"https://example.com/mcp"}]'
 *   npm start -- --persist-to .wrangler/other-state
 *
 * It runs `wrangler dev -c wrangler.toml -c demo/wrangler.toml`: the first config is the
 * gateway (the primary Worker, the one listening on --ip/--port), the second the demo
 * upstream, which the gateway reaches through its DEMO_UPSTREAM service binding. Every
 * argument after `--` is passed on to wrangler; `--ip 127.0.0.1` and `--port 8787` are
 * only defaults. Wrangler applies `--var`, `--persist-to` and `--env-file` to the
 * primary Worker only.
 *
 * Session key: the gateway signs its session tokens with the SESSION_SECRET secret. When
 * the user supplies none (not in `--var SESSION_SECRET:...`, not in the environment, not
 * in the .dev.vars / .env file wrangler would load), a random 32-byte key is generated
 * once into .wrangler/dev-session-secret, so sessions survive a restart of `npm start`
 * with no setup. A SESSION_SECRET in the environment is handed on too, because wrangler
 * does not read secrets from the environment by default.
 *
 * Neither ever goes on a command line (`ps` shows those to every user of the machine):
 * the key is written to a file only this user can read, `.wrangler/start-<pid>.env`
 * (removed on exit), and given to wrangler with `--env-file`. Since wrangler loads no
 * .dev.vars or .env file of its own once `--env-file` is given, the files it would have
 * loaded are named before it, so they apply as before.
 *
 * Authentication: a deployed gateway without an AUTH var refuses MCP requests. Locally,
 * unless AUTH is set (`--var AUTH:...`, the AUTH environment variable, or .dev.vars),
 * `npm start` runs the gateway open (`AUTH={"mode":"off"}`) and says so.
 *
 * Wrangler runs from node_modules with this Node (wrangler needs Node >= 22), with the
 * terminal inherited; SIGINT/SIGTERM (and SIGHUP, as SIGTERM) are forwarded and its exit code
 * returned. Wrangler runs in the repository root, so relative paths in arguments are taken
 * from there (as they are under `npm start`, which always runs in the package root).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const SECRET_FILE = path.join(ROOT, ".wrangler", "dev-session-secret");
const DEFAULTS = { ip: "127.0.0.1", port: "8787" };
/** The shortest ADMIN_TOKEN the gateway opens its admin surface for (src/auth/admin-token.ts). */
const MIN_ADMIN_TOKEN_CHARS = 32;
/** Authentication off, for local development only. */
const OPEN_AUTH = '{"mode":"off"}';
/** Characters a secret may hold to be written unquoted-safe in a dotenv file (no quotes, `$`, `#`, `\\`, spaces). */
const DOTENV_SAFE = /^[A-Za-z0-9_\-+/=.:,@%^*~!?()[\]{}<>|;&]+$/;

/** True when `args` contains `--name` or `--name=...` (or `--no-name` for booleans). */
function hasFlag(args, name) {
  return args.some((a) => a === `--${name}` || a.startsWith(`--${name}=`) || a === `--no-${name}`);
}

/** Values of an option that may repeat and, like wrangler's array options, take several values. */
function flagValues(args, names) {
  const values = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf("=");
    const key = eq === -1 ? arg : arg.slice(0, eq);
    if (!names.includes(key)) continue;
    if (eq !== -1) {
      values.push(arg.slice(eq + 1));
      continue;
    }
    while (i + 1 < args.length && !args[i + 1].startsWith("-")) values.push(args[++i]);
  }
  return values;
}

/** True when the dotenv-style file sets SESSION_SECRET to a non-empty value. */
function fileSetsSecret(file) {
  if (!existsSync(file)) return false;
  const match = /^\s*(?:export\s+)?SESSION_SECRET\s*(?:=|:\s)[ \t]*(.*)$/m.exec(readFileSync(file, "utf8"));
  const value = match?.[1]
    ?.replace(/\s+#.*$/, "")
    .trim()
    .replace(/^(['"`])(.*)\1$/, "$2");
  return Boolean(value);
}

/** Whether the secrets file wrangler loads for the gateway (same rules as wrangler) sets SESSION_SECRET. */
function devVarsSetSecret(args) {
  const env = flagValues(args, ["--env", "-e"]).at(-1);
  const envFiles = flagValues(args, ["--env-file"]);
  if (envFiles.length > 0) return envFiles.some((f) => fileSetsSecret(path.resolve(ROOT, f)));
  for (const name of env ? [`.dev.vars.${env}`, ".dev.vars"] : [".dev.vars"]) {
    if (existsSync(path.join(ROOT, name))) return fileSetsSecret(path.join(ROOT, name));
  }
  if (process.env.CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV === "false") return false;
  const dotEnv = [".env", ".env.local", ...(env ? [`.env.${env}`, `.env.${env}.local`] : [])];
  return dotEnv.some((name) => fileSetsSecret(path.join(ROOT, name)));
}

/**
 * The env files wrangler would load for the gateway by itself (the same rules as
 * wrangler: `.dev.vars[.<env>]`, else `.env` files), as absolute paths; none when the
 * user gave `--env-file` (those stay among the user's arguments).
 */
function defaultEnvFiles(args) {
  if (flagValues(args, ["--env-file"]).length > 0) return [];
  const env = flagValues(args, ["--env", "-e"]).at(-1);
  for (const name of env ? [`.dev.vars.${env}`, ".dev.vars"] : [".dev.vars"]) {
    if (existsSync(path.join(ROOT, name))) return [path.join(ROOT, name)];
  }
  if (process.env.CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV === "false") return [];
  // Only files that exist: Node itself also reads `--env-file` anywhere in its arguments, and exits on a missing one.
  return [".env", ".env.local", ...(env ? [`.env.${env}`, `.env.${env}.local`] : [])]
    .map((name) => path.join(ROOT, name))
    .filter((file) => existsSync(file));
}

/** The SESSION_SECRET start.mjs must hand to wrangler, or undefined when wrangler finds the user's own. */
function sessionSecretToPass(args) {
  if (flagValues(args, ["--var"]).some((v) => v.startsWith("SESSION_SECRET:"))) return undefined;
  if (process.env.SESSION_SECRET) return process.env.SESSION_SECRET;
  if (devVarsSetSecret(args)) return undefined;
  return devSessionSecret();
}

/** Writes `SESSION_SECRET=<secret>` to a file only this user can read; returns its path. */
function writeSecretFile(secret) {
  if (!DOTENV_SAFE.test(secret)) {
    throw new Error(
      "SESSION_SECRET in the environment holds spaces, quotes, '$', '#' or '\\'; put it in .dev.vars instead, or use `openssl rand -hex 32`",
    );
  }
  const file = path.join(ROOT, ".wrangler", `start-${process.pid}.env`);
  mkdirSync(path.dirname(file), { recursive: true });
  // Files of earlier runs that ended without cleaning up (SIGKILL).
  for (const name of readdirSync(path.dirname(file))) {
    const pid = /^start-(\d+)\.env$/.exec(name)?.[1];
    if (pid && Number(pid) !== process.pid && !isRunning(Number(pid)))
      rmSync(path.join(path.dirname(file), name), { force: true });
  }
  writeFileSync(file, `SESSION_SECRET=${secret}\n`, { mode: 0o600 });
  return file;
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** The persistent dev session key, generated on first use (safe when several starts race). */
function devSessionSecret() {
  const read = () => {
    const saved = existsSync(SECRET_FILE) ? readFileSync(SECRET_FILE, "utf8").trim() : "";
    return /^[0-9a-f]{64}$/i.test(saved) ? saved : undefined;
  };
  const saved = read();
  if (saved) return saved;
  const secret = randomBytes(32).toString("hex");
  const temp = `${SECRET_FILE}.${process.pid}.tmp`;
  mkdirSync(path.dirname(SECRET_FILE), { recursive: true });
  writeFileSync(temp, `${secret}\n`, { mode: 0o600 });
  try {
    linkSync(temp, SECRET_FILE); // atomic, and fails if another start created the file meanwhile
  } catch (error) {
    const winner = error.code === "EEXIST" ? read() : undefined;
    if (winner) return winner;
    renameSync(temp, SECRET_FILE); // no valid key there, or no hard links on this file system
  } finally {
    rmSync(temp, { force: true });
  }
  console.log(`[start] Generated a dev session key in ${path.relative(ROOT, SECRET_FILE)}`);
  return secret;
}

/** The value the dotenv-style file gives `name` (the last one), or undefined. */
function fileValue(file, name) {
  if (!existsSync(file)) return undefined;
  const line = new RegExp(`^\\s*(?:export\\s+)?${name}\\s*(?:=|:\\s)[ \\t]*(.*)$`, "gm");
  const matches = [...readFileSync(file, "utf8").matchAll(line)];
  return matches
    .at(-1)?.[1]
    ?.replace(/\s+#.*$/, "")
    .trim()
    .replace(/^(['"`])(.*)\1$/, "$2");
}

/** What the gateway gets for `name`: `--var name:...`, else `environment`'s (when given), else the env files'. */
function givenValue(args, name, environment = {}) {
  const given = flagValues(args, ["--var"])
    .filter((v) => v.startsWith(`${name}:`))
    .at(-1)
    ?.slice(name.length + 1);
  const files = [...flagValues(args, ["--env-file"]).map((f) => path.resolve(ROOT, f)), ...defaultEnvFiles(args)];
  if (given !== undefined) return given;
  return environment[name] ?? files.map((file) => fileValue(file, name)).findLast((value) => value !== undefined);
}

/**
 * What to say when the ADMIN_TOKEN the gateway will get (`--var ADMIN_TOKEN:...`, else the
 * env files wrangler loads) is shorter than MIN_ADMIN_TOKEN_CHARS: the admin API and console
 * then stay closed (src/auth/admin-token.ts). Undefined when it is long enough or unset.
 */
export function adminTokenWarning(args) {
  // Wrangler gives the Worker no secret from the environment: only --var and the env files count.
  const token = givenValue(args, "ADMIN_TOKEN");
  if (!token || token.length >= MIN_ADMIN_TOKEN_CHARS) return undefined;
  return (
    `ADMIN_TOKEN is shorter than ${MIN_ADMIN_TOKEN_CHARS} characters: the admin API and console stay closed. ` +
    "Make one with `openssl rand -hex 32` and set it in .dev.vars (ADMIN_TOKEN=<token>) " +
    "or with --var ADMIN_TOKEN:<token>."
  );
}

/**
 * The reminder `npm start` prints when the AUTH it hands the gateway (`--var`, the
 * environment, an env file) turns authentication on: authorization is default-deny, so
 * without a persona for their roles callers see no tools. The gateway itself can say more
 * once running: its log (this terminal) warns when a caller's roles select no persona.
 */
export function personaReminder(args, environment = process.env) {
  const text = givenValue(args, "AUTH", environment);
  let auth;
  try {
    auth = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined; // the gateway reports an invalid AUTH itself
  }
  if (typeof auth !== "object" || auth === null || auth.mode === "off") return undefined;
  return (
    "Authentication is on: a caller lists and calls only what a persona grants its roles (default deny). " +
    "Define personas with PUT /admin/personas/<name> or on the console's Personas page (docs/authentication.md); " +
    "this log warns when a caller's roles select none."
  );
}

/** True when the dotenv-style file sets `name`. */
function fileSets(file, name) {
  return (
    existsSync(file) && new RegExp(`^\\s*(?:export\\s+)?${name}\\s*(?:=|:\\s)`, "m").test(readFileSync(file, "utf8"))
  );
}

/**
 * The AUTH wrangler must be given: the environment's AUTH, else `{"mode":"off"}` when the
 * user set none (in --var or the env files wrangler loads); undefined when the user did.
 */
export function authToPass(args, environment = process.env) {
  if (flagValues(args, ["--var"]).some((v) => v.startsWith("AUTH:"))) return undefined;
  if (environment.AUTH) return environment.AUTH;
  const files = flagValues(args, ["--env-file"]).map((f) => path.resolve(ROOT, f));
  if ([...files, ...defaultEnvFiles(args)].some((file) => fileSets(file, "AUTH"))) return undefined;
  return OPEN_AUTH;
}

/**
 * The full wrangler argument list for the given user arguments; `secretFile` is an env
 * file holding SESSION_SECRET, loaded after the files wrangler would have loaded itself.
 */
export function wranglerArgs(userArgs, secretFile, auth = undefined) {
  const args = ["dev", "-c", "wrangler.toml", "-c", path.join("demo", "wrangler.toml")];
  if (auth !== undefined) args.push("--var", `AUTH:${auth}`);
  if (!hasFlag(userArgs, "show-interactive-dev-session")) args.push("--show-interactive-dev-session=false");
  if (!hasFlag(userArgs, "ip")) args.push("--ip", DEFAULTS.ip);
  if (!hasFlag(userArgs, "port")) args.push("--port", DEFAULTS.port);
  if (secretFile !== undefined)
    for (const file of [...defaultEnvFiles(userArgs), secretFile]) args.push("--env-file", file);
  // Defaults first: wrangler's array options (--var, --env-file) swallow the plain words that follow them.
  return [...args, ...userArgs];
}

function main() {
  if (!existsSync(WRANGLER)) {
    console.error(`[start] ${path.relative(ROOT, WRANGLER)} not found: run \`npm install\` first.`);
    process.exit(1);
  }
  const userArgs = process.argv.slice(2);
  const secret = sessionSecretToPass(userArgs);
  let secretFile;
  try {
    secretFile = secret === undefined ? undefined : writeSecretFile(secret);
  } catch (error) {
    console.error(`[start] ${error.message}`);
    process.exit(1);
  }
  if (secretFile !== undefined) process.on("exit", () => rmSync(secretFile, { force: true }));
  // With --env-file, wrangler reads env files only when this is not "false"; the list above already honours it.
  // The secret is in the file now; wrangler and workerd need not carry it in their environment.
  const { SESSION_SECRET: _passedInFile, ...inherited } = process.env;
  const env = secretFile === undefined ? process.env : { ...inherited, CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true" };
  const auth = authToPass(userArgs);
  if (auth === OPEN_AUTH) {
    console.log(
      '[start] Authentication is OFF (AUTH={"mode":"off"}): anyone who can reach this port can call the upstreams. Set AUTH to turn it on (docs/authentication.md).',
    );
  }
  const personas = personaReminder(userArgs);
  if (personas) console.log(`[start] ${personas}`);
  const shortToken = adminTokenWarning(userArgs);
  if (shortToken) console.log(`[start] warning: ${shortToken}`);
  const child = spawn(process.execPath, [WRANGLER, ...wranglerArgs(userArgs, secretFile, auth)], {
    cwd: ROOT,
    stdio: "inherit",
    env,
  });
  // wrangler's launcher shuts down cleanly on SIGINT and SIGTERM only, so a hangup becomes SIGTERM.
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal === "SIGHUP" ? "SIGTERM" : signal);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward);
  child.on("error", (error) => {
    console.error(`[start] Could not run wrangler: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
