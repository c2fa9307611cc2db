/**
 * Linux /proc readings for the benchmark: the process tree below a pid, which of it is
 * `workerd` (where wrangler dev runs the Worker), and the CPU time a process has used.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
export const CLOCK_TICKS: number = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return ""; // the process (or thread) is gone
  }
}

/** Direct children of `pid`, from every thread's children list. */
export function childPids(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children = tasks.flatMap((task) =>
    readOrEmpty(`/proc/${pid}/task/${task}/children`).split(" ").filter(Boolean).map(Number),
  );
  return [...new Set(children)];
}

/** Every process below `pid` (not `pid` itself), depth-first; at most 10 levels deep. */
export function descendantPids(pid: number, depth = 0): number[] {
  if (depth >= 10) return [];
  return childPids(pid).flatMap((child) => [child, ...descendantPids(child, depth + 1)]);
}

/** The executable name of `pid` (`/proc/<pid>/comm`), "" when it is gone. */
export function commandName(pid: number): string {
  return readOrEmpty(`/proc/${pid}/comm`).trim();
}

/** The workerd processes below `rootPid`: wrangler dev runs one for its proxy and one for the Workers. */
export function workerdPids(rootPid: number): number[] {
  return descendantPids(rootPid).filter((pid) => commandName(pid) === "workerd");
}

/** The argument list of `pid` ([] when it is gone). */
export function processArgs(pid: number): string[] {
  return readOrEmpty(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
}

/** utime + stime of `pid` in clock ticks (all its threads, living and ended); 0 when it is gone. */
export function cpuTicks(pid: number): number {
  const stat = readOrEmpty(`/proc/${pid}/stat`);
  // Fields after the ")" that closes the command name start at field 3 (state); utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
}

/**
 * CPU time of each living thread of `pid`, in microseconds, by thread id: the scheduler's
 * `se.sum_exec_runtime` (/proc/<pid>/task/<tid>/sched, nanosecond resolution). Where the
 * kernel shows no such file, one entry "stat" with utime+stime (10 ms resolution, ended
 * threads included). Empty when the process is gone.
 */
export function threadMicros(pid: number): Map<string, number> {
  const times = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return times;
  }
  for (const tid of tasks) {
    const micros = oneThreadMicros(pid, Number(tid));
    if (!Number.isNaN(micros)) times.set(tid, micros);
  }
  if (times.size === 0 && tasks.length > 0) {
    const ticks = cpuTicks(pid);
    if (ticks > 0) times.set("stat", (ticks * 1e6) / CLOCK_TICKS);
  }
  return times;
}

/**
 * CPU time of one thread, `tid` of `pid` (the main thread when `tid` is `pid`), in
 * microseconds, as `threadMicros` reads it; NaN when it is gone.
 */
export function oneThreadMicros(pid: number, tid: number = pid): number {
  const match = /^se\.sum_exec_runtime\s*:\s*([\d.]+)/m.exec(readOrEmpty(`/proc/${pid}/task/${tid}/sched`));
  return match ? Number(match[1]) * 1000 : NaN;
}

/** Total CPU ticks of several processes. */
export function totalTicks(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
}
