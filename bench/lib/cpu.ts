/**
 * CPU accounting for one relay (a wrangler dev process tree) and one upstream process:
 * microseconds by role, so a batch of calls can be charged to what actually did the work.
 *
 * wrangler dev runs two workerd processes: its dev proxy, listening on the public port,
 * and the runtime with the Worker(s) behind it (for the gateway also the idle demo
 * Worker and the local KV/R2/queue simulators). "wrangler" is every other process of
 * the tree (wrangler's node, which logs each request, and esbuild). "isolate" is the
 * runtime's main thread, where the Workers' JavaScript and their I/O run; the runtime's
 * other threads are V8's (concurrent collection and compilation).
 *
 * Times are the scheduler's per-thread run time (nanosecond resolution, lib/proc.ts):
 * utime+stime in clock ticks, 10 ms each, rounded a batch of a few hundred calls to
 * ±0.05 ms per call, more than the difference being looked for.
 */
import { descendantPids, processArgs, threadMicros } from "./proc.ts";

/** A relay's process tree: the root pid (the process the benchmark or helper spawned) and its public port. */
export type RelayTree = { readonly root: number; readonly port: number };

type Role = "proxy" | "runtime" | "wrangler";
export type RelayRoles = Readonly<Record<Role, readonly number[]>>;
/** Microseconds of CPU by role. */
export type CpuTime = Readonly<Record<Role | "isolate" | "upstream", number>>;

export const ZERO_CPU: CpuTime = { proxy: 0, runtime: 0, isolate: 0, wrangler: 0, upstream: 0 };

/** The CPU time of each thread of each process at one moment; a process that ended has no entry. */
export type Reading = {
  readonly roles: RelayRoles;
  readonly threads: ReadonlyMap<number, ReadonlyMap<string, number>>;
};

const NO_RELAY: RelayRoles = { proxy: [], runtime: [], wrangler: [] };

function roleOf(pid: number, port: number): Role {
  const args = processArgs(pid);
  if (!args[0]?.endsWith("workerd")) return "wrangler";
  return args.includes(`--socket-addr=entry=127.0.0.1:${port}`) ? "proxy" : "runtime";
}

/** The processes of a relay tree by role; throws when it has no workerd (it is not running). */
export function relayProcesses(relay: RelayTree): RelayRoles {
  const roles: Record<Role, number[]> = { proxy: [], runtime: [], wrangler: [] };
  for (const pid of [relay.root, ...descendantPids(relay.root)]) roles[roleOf(pid, relay.port)].push(pid);
  if (roles.proxy.length + roles.runtime.length === 0) throw new Error(`no workerd process below pid ${relay.root}`);
  return roles;
}

/** Reads the CPU time of every thread of `roles` (none when undefined) and of the upstream process. */
export function readCpu(
  roles: RelayRoles | undefined,
  upstreamPid: number,
): Reading & { readonly upstreamPid: number } {
  const pids = [...Object.values(roles ?? NO_RELAY).flat(), upstreamPid];
  return {
    roles: roles ?? NO_RELAY,
    upstreamPid,
    threads: new Map(pids.map((pid) => [pid, threadMicros(pid)] as const).filter(([, t]) => t.size > 0)),
  };
}

/**
 * `total` plus the CPU used between two readings, by role. A workerd process or the
 * upstream that ended in between makes the batch meaningless (throws); a short-lived
 * wrangler helper that ended only loses its share, and so does a thread that ended.
 */
export function addCpu(total: CpuTime, before: Reading & { readonly upstreamPid: number }, after: Reading): CpuTime {
  const used = (pid: number, mustLive: boolean, mainOnly = false) => {
    const end = after.threads.get(pid);
    if (end === undefined && mustLive)
      throw new Error(`process ${pid} ended during a CPU batch (did wrangler dev restart?)`);
    const start = before.threads.get(pid);
    let sum = 0;
    for (const [tid, micros] of end ?? []) if (!mainOnly || tid === String(pid)) sum += micros - (start?.get(tid) ?? 0);
    return sum;
  };
  const sum = (pids: readonly number[], mustLive: boolean) => pids.reduce((s, pid) => s + used(pid, mustLive), 0);
  return {
    proxy: total.proxy + sum(before.roles.proxy, true),
    runtime: total.runtime + sum(before.roles.runtime, true),
    isolate: total.isolate + before.roles.runtime.reduce((s, pid) => s + used(pid, true, true), 0),
    wrangler: total.wrangler + sum(before.roles.wrangler, false),
    upstream: total.upstream + used(before.upstreamPid, true),
  };
}
