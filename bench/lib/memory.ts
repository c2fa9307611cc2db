/**
 * Resident memory of a gateway started by the benches (`npm start`): of its workerd
 * processes and of its whole process tree, read from /proc, and peaks sampled over time.
 */
import { readFileSync } from "node:fs";
import { descendantPids, workerdPids } from "./proc.ts";

/** RSS in bytes of the gateway's workerd processes, and of its whole tree (wrangler, esbuild too). */
export type GatewayMemory = { readonly workerd: number; readonly tree: number };

/** Resident memory of `pid` in bytes (0 when it is gone). */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The memory of the gateway whose root process is `rootPid`, now. */
export function gatewayMemory(rootPid: number): GatewayMemory {
  const workerd = workerdPids(rootPid).reduce((sum, pid) => sum + rssBytes(pid), 0);
  const tree = [rootPid, ...descendantPids(rootPid)].reduce((sum, pid) => sum + rssBytes(pid), 0);
  return { workerd, tree };
}

/** Samples the gateway's memory every `intervalMs` until the returned function is called; it returns the peaks. */
export function sampleMemory(rootPid: number, intervalMs: number): () => GatewayMemory {
  let peak = gatewayMemory(rootPid);
  const take = () => {
    const now = gatewayMemory(rootPid);
    peak = { workerd: Math.max(peak.workerd, now.workerd), tree: Math.max(peak.tree, now.tree) };
  };
  const timer = setInterval(take, intervalMs);
  return () => {
    clearInterval(timer);
    take();
    return peak;
  };
}
