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
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const READY_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 200;
const KILL_GRACE_MS = 5_000;
const START_ATTEMPTS = 3;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A free TCP port on 127.0.0.1, found by listening on port 0 and closing again.
 * (Another process could take it before it is used; fine for tests.)
 * @returns {Promise<number>}
 */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close((error) => (error ? reject(error) : resolve(port)));
    });
  });
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
 * and waits until `GET http://127.0.0.1:<port>/` answers with any HTTP status.
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
      if (attempt >= START_ATTEMPTS || !String(error.message).includes('Address already in use')) throw error;
    }
  }
}

async function startGatewayOnce({ port, vars = {}, persistTo, extraArgs = [], cwd = REPO_ROOT, env = {} }) {
  const args = [path.join(cwd, 'scripts', 'start.mjs'), '--port', String(port)];
  for (const [key, value] of Object.entries(vars)) {
    args.push('--var', `${key}:${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  if (persistTo !== undefined) args.push('--persist-to', persistTo);
  args.push(...extraArgs);

  let output = '';
  const child = spawn(process.execPath, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const spawnError = new Promise((resolve) => child.once('error', resolve));

  const signalGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  };
  // Should this process end without calling stop(), do not leave wrangler and workerd running.
  const killOnExit = () => signalGroup('SIGKILL');
  process.once('exit', killOnExit);
  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      process.removeListener('exit', killOnExit);
      if (child.pid === undefined) return;
      if (!hasExited) {
        signalGroup('SIGTERM');
        const timer = setTimeout(() => signalGroup('SIGKILL'), KILL_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      // Anything of the group left behind (wrangler's workerd, esbuild) goes too.
      signalGroup('SIGKILL');
    })());
  const logs = () => output;
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + READY_TIMEOUT_MS;
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
    try {
      await fetch(`${url}/`, { signal: AbortSignal.timeout(Math.max(1, Math.min(10_000, deadline - Date.now()))) }).then((response) => response.body?.cancel());
      return { url, port, pid: child.pid, stop, logs };
    } catch {
      // Not listening yet.
    }
    if (Date.now() >= deadline) {
      await stop();
      throw new Error(`Gateway on port ${port} was not ready within ${READY_TIMEOUT_MS / 1000} s. Logs:\n${output}`);
    }
    await sleep(POLL_INTERVAL_MS);
  }
}
