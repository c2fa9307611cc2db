/**
 * Child processes of the benchmark (the pass-through's wrangler dev, the upstreams),
 * each in its own process group so that stopping one also ends whatever it started
 * (workerd, esbuild). Groups still running when the benchmark exits are killed.
 */
import { spawn } from "node:child_process";

const KILL_GRACE_MS = 5_000;

export type Child = {
  readonly pid: number;
  /** Everything the child wrote to stdout and stderr so far. */
  readonly logs: () => string;
  /** Resolves with a description once the child has exited (it should not before stop()). */
  readonly exited: Promise<string>;
  /** SIGTERM to the group, SIGKILL after 5 s, and SIGKILL to anything of the group left. */
  readonly stop: () => Promise<void>;
};

/** Starts `command args` detached, in its own process group, with stdout/stderr captured. */
export function spawnGroup(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Child {
  let output = "";
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = child.pid;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  let running = true;
  const exited = new Promise<string>((resolve) =>
    child.once("exit", (code, signal) => {
      running = false;
      resolve(`exited (code ${code}, signal ${signal})`);
    }),
  );
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  };
  const killOnExit = () => signalGroup("SIGKILL");
  process.once("exit", killOnExit);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.removeListener("exit", killOnExit);
      child.stdin.end();
      if (running) {
        signalGroup("SIGTERM");
        const timer = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      signalGroup("SIGKILL");
    })());
  return { pid, logs: () => output, exited, stop };
}
