/**
 * CPU accounting for one relay (a wrangler dev process tree) and one upstream process:
 * ticks by role, so a batch of calls can be charged to what actually did the work.
 *
 * wrangler dev runs two workerd processes: its dev proxy, listening on the public port,
 * and the runtime with the Worker(s) behind it (for the gateway also the idle demo
 * Worker and the local KV/R2/queue simulators). "wrangler" is every other process of
 * the tree (wrangler's node, which logs each request, and esbuild).
 */
import { cpuTicks, descendantPids, processArgs } from "./proc.ts";

/** A relay's process tree: the root pid (the process the benchmark or helper spawned) and its public port. */
export type RelayTree = { readonly root: number; readonly port: number };

type Role = "proxy" | "runtime" | "wrangler";
export type RelayRoles = Readonly<Record<Role, readonly number[]>>;
export type Ticks = Readonly<Record<Role | "upstream", number>>;

export const ZERO_TICKS: Ticks = { proxy: 0, runtime: 0, wrangler: 0, upstream: 0 };

/** utime+stime of each process at one moment; a process that ended has no entry. */
export type Reading = { readonly roles: RelayRoles; readonly ticks: ReadonlyMap<number, number> };

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

/** Reads the ticks of `roles` (none when undefined) and of the upstream process. */
export function readTicks(roles: RelayRoles | undefined, upstreamPid: number): Reading & { readonly upstreamPid: number } {
  const pids = [...Object.values(roles ?? NO_RELAY).flat(), upstreamPid];
  return { roles: roles ?? NO_RELAY, upstreamPid, ticks: new Map(pids.map((pid) => [pid, cpuTicks(pid)] as const).filter(([, t]) => t > 0)) };
}

/**
 * `total` plus the ticks used between two readings, by role. A workerd process or the
 * upstream that ended in between makes the batch meaningless (throws); a short-lived
 * wrangler helper that ended only loses its share.
 */
export function addTicks(total: Ticks, before: Reading & { readonly upstreamPid: number }, after: Reading): Ticks {
  const used = (pid: number, mustLive: boolean) => {
    const end = after.ticks.get(pid);
    if (end === undefined && mustLive) throw new Error(`process ${pid} ended during a CPU batch (did wrangler dev restart?)`);
    return end === undefined ? 0 : end - (before.ticks.get(pid) ?? 0);
  };
  const sum = (pids: readonly number[], mustLive: boolean) => pids.reduce((s, pid) => s + used(pid, mustLive), 0);
  return {
    proxy: total.proxy + sum(before.roles.proxy, true),
    runtime: total.runtime + sum(before.roles.runtime, true),
    wrangler: total.wrangler + sum(before.roles.wrangler, false),
    upstream: total.upstream + used(before.upstreamPid, true),
  };
}
