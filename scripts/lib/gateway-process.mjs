/**
 * Starts the gateway as a child process, exactly the way the README tells users to:
 * `npm start -- --port <port> --var K:V ...`, i.e. `node scripts/start.mjs ...`, which runs
 * the gateway and the demo upstream in one `wrangler dev` session.
 *
 * Used by the end-to-end tests, the conformance script and the benchmark, so that all of
 * them exercise the real local setup rather than an in-process imitation of it.
 *
 *   import { freePort, startGateway } from './lib/gateway-process.mjs';
 *   const gateway = await startGateway({ port: await freePort(), vars: { UPSTREAMS: [...] } });
 *   try { await fetch(`${gateway.url}/mcp`, ...); } finally { await gateway.stop(); }
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const READY_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 200;
const KILL_GRACE_MS = 5_000;
const START_ATTEMPTS = 3;

/** Terminal styles wrangler may put in its lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI styles start with ESC (0x1b), the character to strip.
const ANSI_STYLE = /\x1b\[[0-9;]*m/g;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ports picked by freePort: from 20000 to below the range the kernel hands out for port 0
 * (`ip_local_port_range`, 32768 up by default on Linux), or none where that range starts too low.
 */
const PICKED_PORTS = (() => {
  const from = 20_000;
  let below = 32_768;
  try {
    below = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || below;
  } catch {
    // Not Linux: the usual range.
  }
  return { from, to: Math.min(32_000, below) };
})();
const PICK_ATTEMPTS = 50;

/** Resolves with `port` when 127.0.0.1:`port` can be listened on now (port 0: one the kernel picks), else with 0. */
function listenable(port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", (error) => (error.code === "EADDRINUSE" ? resolve(0) : reject(error)));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const found = typeof address === "object" && address ? address.port : 0;
      server.close((error) => (error ? reject(error) : resolve(found)));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1, picked at random below the kernel's range for port 0 and
 * checked by listening on it. Every wrangler and Miniflare listens on port 0 for its
 * internal sockets, so a port the kernel picked for this could be given to one of them
 * before the gateway bound it (an e2e test's admin call once got a 403 "Forbidden", as
 * Miniflare's loopback server answers a stranger); the kernel does not hand out ports
 * from below its range.
 * @returns {Promise<number>}
 */
export async function freePort() {
  for (let attempt = 0; PICKED_PORTS.to - PICKED_PORTS.from >= 1_000 && attempt < PICK_ATTEMPTS; attempt++) {
    const port = await listenable(
      PICKED_PORTS.from + Math.floor(Math.random() * (PICKED_PORTS.to - PICKED_PORTS.from)),
    );
    if (port !== 0) return port;
  }
  return listenable(0);
}

/**
 * @typedef {object} GatewayProcess
 * @property {string} url      Base URL, `http://127.0.0.1:<port>` (the MCP endpoint is `${url}/mcp`).
 * @property {number} port     The port the gateway listens on.
 * @property {number} pid      The pid of `node scripts/start.mjs`, the root of the process group (wrangler, workerd).
 * @property {() => Promise<void>} stop  Ends the whole process group (SIGTERM, SIGKILL after 5 s); resolves once it exited.
 * @property {() => string} logs         Everything the process wrote to stdout and stderr so far.
 */

/**
 * Starts `node scripts/start.mjs --port <port> --var K:V ... [--persist-to dir] ...extraArgs`
 * and waits until wrangler says it is ready on that port and `GET http://127.0.0.1:<port>/`
 * answers as the gateway (its name in the JSON of its home page). A port another process
 * took meanwhile fails the start ("Address already in use"), on every attempt.
 *
 * @param {object} options
 * @param {number} options.port                  Port to listen on (see {@link freePort}).
 * @param {Record<string, unknown>} [options.vars]  Worker vars passed as `--var K:V`; non-string values are JSON-encoded.
 * @param {string} [options.persistTo]           Directory for local KV/R2/queue state (`--persist-to`).
 * @param {string[]} [options.extraArgs]         Further arguments for wrangler dev, appended last.
 * @param {string} [options.cwd]                 Repository root to run in (default: this repository).
 * @param {Record<string, string>} [options.env] Extra environment variables for `npm start` (e.g. SESSION_SECRET).
 * @returns {Promise<GatewayProcess>}
 * @throws {Error} When the process exits or is not ready within 60 s; the message includes its logs.
 */
export async function startGateway(options) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startGatewayOnce(options);
    } catch (error) {
      // wrangler picks free ports for its internal sockets by probing; two instances
      // starting at the same moment can pick the same one. Starting again settles it.
      if (attempt >= START_ATTEMPTS || !String(error.message).includes("Address already in use")) throw error;
    }
  }
}

/** True for the gateway's own answer to `GET /` (its name, whatever else the page says). */
function isGatewayHome(text) {
  try {
    return JSON.parse(text)?.name === "mcp-edge-gateway";
  } catch {
    return false;
  }
}

async function startGatewayOnce({ port, vars = {}, persistTo, extraArgs = [], cwd = REPO_ROOT, env = {} }) {
  const args = [path.join(cwd, "scripts", "start.mjs"), "--port", String(port)];
  for (const [key, value] of Object.entries(vars)) {
    args.push("--var", `${key}:${typeof value === "string" ? value : JSON.stringify(value)}`);
  }
  if (persistTo !== undefined) args.push("--persist-to", persistTo);
  args.push(...extraArgs);

  let output = "";
  const child = spawn(process.execPath, args, {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const spawnError = new Promise((resolve) => child.once("error", resolve));

  const signalGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  };
  // Should this process end without calling stop(), do not leave wrangler and workerd running.
  const killOnExit = () => signalGroup("SIGKILL");
  process.once("exit", killOnExit);
  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      process.removeListener("exit", killOnExit);
      if (child.pid === undefined) return;
      if (!hasExited) {
        signalGroup("SIGTERM");
        const timer = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      // Anything of the group left behind (wrangler's workerd, esbuild) goes too.
      signalGroup("SIGKILL");
    })());
  const logs = () => output;
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + READY_TIMEOUT_MS;
  const readyLine = new RegExp(`Ready on http://127\\.0\\.0\\.1:${port}(?!\\d)`);
  let lastAnswer;
  for (;;) {
    const failure = await Promise.race([
      exited.then(({ code, signal }) => `exited early (code ${code}, signal ${signal})`),
      spawnError.then((error) => `could not be started: ${error.message}`),
      sleep(0),
    ]);
    if (failure) {
      await stop();
      throw new Error(`Gateway on port ${port} ${failure}. Logs:\n${output}`);
    }
    // Ready once this wrangler says it listens on the port and the port answers as the
    // gateway: another process that took the port between freePort and this start (a
    // Miniflare's loopback server answers 403 "Forbidden"; another gateway would answer as
    // one) fails neither check alone. This one then fails to listen and exits, and the
    // error says so ("Address already in use").
    if (readyLine.test(output.replace(ANSI_STYLE, ""))) {
      try {
        const response = await fetch(`${url}/`, {
          signal: AbortSignal.timeout(Math.max(1, Math.min(10_000, deadline - Date.now()))),
        });
        if (isGatewayHome(await response.text())) return { url, port, pid: child.pid, stop, logs };
        lastAnswer = `HTTP ${response.status}`;
      } catch {
        // Not answering yet.
      }
    }
    if (Date.now() >= deadline) {
      await stop();
      throw new Error(
        `Gateway on port ${port} was not ready within ${READY_TIMEOUT_MS / 1000} s${lastAnswer ? ` (the port answered ${lastAnswer}, not as the gateway)` : ""}. Logs:\n${output}`,
      );
    }
    await sleep(POLL_INTERVAL_MS);
  }
}
