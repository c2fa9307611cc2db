/**
 * Starts an upstream of the benchmark in a child process (bench/lib/upstream-server.ts)
 * and returns its URL and pid once it says READY.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnGroup } from "./child.ts";
import type { UpstreamKind } from "./upstream-server.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const ENTRY = path.join(ROOT, "bench", "lib", "upstream-server.ts");
const READY_TIMEOUT_MS = 30_000;

export type UpstreamProcess = {
  readonly kind: UpstreamKind;
  readonly url: string;
  readonly pid: number;
  readonly stop: () => Promise<void>;
};

export async function startUpstream(kind: UpstreamKind): Promise<UpstreamProcess> {
  const child = spawnGroup(process.execPath, [ENTRY, kind], ROOT);
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let failure: string | undefined;
  void child.exited.then((how) => (failure = how));
  while (failure === undefined && Date.now() < deadline) {
    const url = /^READY (\S+)$/m.exec(child.logs())?.[1];
    if (url) return { kind, url, pid: child.pid, stop: child.stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await child.stop();
  throw new Error(`upstream ${kind} ${failure ?? "did not start within 30 s"}. Logs:\n${child.logs()}`);
}
