/**
 * A frozen copy of the gateway's working tree for one benchmark run.
 *
 * wrangler dev rebuilds and restarts the Worker whenever a source file changes, and the
 * repository may be edited while the benchmark runs; measuring a copy keeps every call
 * on the same code and says which code that was. The copy holds the files git knows
 * (tracked, and untracked but not ignored) as they are on disk now, with node_modules
 * linked from the original.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export type Snapshot = {
  readonly dir: string;
  readonly source: string;
  /** HEAD of the source tree, and the files that differ from it (git status --short). */
  readonly commit: string;
  readonly changes: readonly string[];
  readonly remove: () => void;
};

function git(cwd: string, args: readonly string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

function copyTree(source: string, dir: string): void {
  const files = git(source, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    if (file === "node_modules") continue; // a symlink git does not ignore; linked below
    const from = path.join(source, file);
    const to = path.join(dir, file);
    const stat = lstatSync(from, { throwIfNoEntry: false });
    if (!stat) continue; // deleted in the working tree
    mkdirSync(path.dirname(to), { recursive: true });
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (stat.isFile()) copyFileSync(from, to);
  }
}

/** Copies the working tree of the git repository at `source` to a new temporary directory. */
export function snapshotTree(source: string): Snapshot {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-gateway-tree-"));
  try {
    copyTree(source, dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  symlinkSync(path.join(source, "node_modules"), path.join(dir, "node_modules"), "dir");
  return {
    dir,
    source,
    commit: git(source, ["rev-parse", "HEAD"]).trim(),
    changes: git(source, ["status", "--short"]).split("\n").filter(Boolean),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Drops every `[[queues.consumers]]` table from the wrangler.toml in `dir` (a snapshot):
 * the table's lines up to the next table header. Throws when there was none to drop, so
 * a measurement that asked for no consumer never runs with one.
 */
export function withoutQueueConsumers(dir: string): void {
  const file = path.join(dir, "wrangler.toml");
  const kept: string[] = [];
  let dropping = false;
  let dropped = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const header = /^\s*\[/.test(line);
    if (header) dropping = /^\s*\[\[\s*queues\.consumers\s*\]\]/.test(line);
    if (dropping && header) dropped++;
    if (!dropping) kept.push(line);
  }
  if (dropped === 0) throw new Error(`${file} has no [[queues.consumers]] table to leave out`);
  writeFileSync(file, kept.join("\n"));
}
