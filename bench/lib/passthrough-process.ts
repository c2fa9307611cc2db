/**
 * Starts and stops the pass-through Worker (bench/passthrough/) the way the gateway is
 * run: `wrangler dev` from node_modules on 127.0.0.1, with `--var TARGET:<url>`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnGroup } from "./child.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const CONFIG = path.join("bench", "passthrough", "wrangler.toml");
const READY_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 200;

export type PassthroughProcess = {
  readonly url: string;
  /** The wrangler process at the root of its tree (workerd runs below it). */
  readonly pid: number;
  readonly logs: () => string;
  readonly stop: () => Promise<void>;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the pass-through on `port`, forwarding to `target`; resolves once `GET /` answers
 * with any status. `config` runs another Worker of bench/ the same way (bench/r2-writer/);
 * `extraArgs` go to wrangler dev (`--inspector-port`).
 */
export async function startPassthrough(
  port: number,
  target: string,
  config = CONFIG,
  extraArgs: readonly string[] = [],
): Promise<PassthroughProcess> {
  const state = mkdtempSync(path.join(tmpdir(), "bench-passthrough-"));
  const args = [
    WRANGLER,
    "dev",
    "-c",
    config,
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--show-interactive-dev-session=false",
  ];
  args.push("--persist-to", state, "--var", `TARGET:${target}`, ...extraArgs);
  const child = spawnGroup(process.execPath, args, ROOT);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await child.stop();
    rmSync(state, { recursive: true, force: true });
  };
  let failure: string | undefined;
  void child.exited.then((how) => (failure = how));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (failure === undefined && Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      return { url, pid: child.pid, logs: child.logs, stop };
    } catch {
      await sleep(POLL_INTERVAL_MS); // not listening yet
    }
  }
  await stop();
  throw new Error(`pass-through on port ${port} ${failure ?? "was not ready within 60 s"}. Logs:\n${child.logs()}`);
}
