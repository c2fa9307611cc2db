/**
 * README's first steps work on a fresh copy: the commands of its first shell block are
 * read from README.md itself (so the test follows what a newcomer reads), `npm install`
 * runs in a copy of the project as a user gets it (test/helpers/node/release-tree.ts: no
 * node_modules, .wrangler or other ignored files; no git needed, so it runs from a release
 * archive too), the test script exists (running it here would run this test again), and
 * `npm start` answers `/mcp` with the demo tools.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { copyReleaseTree, releaseFilter } from "../helpers/node/release-tree.ts";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const INSTALL_AND_START_TIMEOUT_MS = 300_000;

/** The commands of README's first ```sh block, comments dropped. */
function firstCommands(readme: string): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(readme);
  if (!block) return [];
  return block[1]!
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** The files git tracks under ROOT, or undefined where ROOT is not a git work tree (a release archive). */
function trackedFiles(): string[] | undefined {
  const listed = spawnSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" });
  return listed.status === 0 ? listed.stdout.split("\0").filter(Boolean) : undefined;
}

describe("a copy of the project as a user gets it", () => {
  const tracked = trackedFiles();

  it.skipIf(tracked === undefined)("holds every file git tracks, and none that git ignores", () => {
    const leftOut = releaseFilter(ROOT);
    expect(tracked!.filter((file) => leftOut(file))).toEqual([]);
    const ignored = spawnSync("git", ["ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    for (const entry of ignored.stdout.split("\0").filter(Boolean))
      expect(leftOut(entry.replace(/\/$/, "")), entry).toBe(true);
  });

  it("leaves out a developer's local files", () => {
    const leftOut = releaseFilter(ROOT);
    for (const file of [".dev.vars", "node_modules", ".wrangler", ".git", "src/storage/yaml-module.mjs", "test/x.log"])
      expect(leftOut(file), file).toBe(true);
    for (const file of ["README.md", "src/index.ts", "package-lock.json", "test/e2e/quickstart.test.ts"])
      expect(leftOut(file), file).toBe(false);
  });
});

describe("README's first steps on a fresh copy", () => {
  const commands = firstCommands(readFileSync(path.join(ROOT, "README.md"), "utf8"));
  const clone = mkdtempSync(path.join(tmpdir(), "gateway-copy-"));
  let stop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await stop?.();
    rmSync(clone, { recursive: true, force: true });
  });

  it("are npm install, npm test and npm start", () => {
    expect(commands).toEqual(["npm install", "npm test", "npm start"]);
    const scripts = (
      JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts["test"]).toBeTruthy();
    expect(scripts["start"]).toBeTruthy();
  });

  it("are what CI runs (but npm start), with npm run check, which README names too", () => {
    const ci = readFileSync(path.join(ROOT, ".ci", "run"), "utf8").split("\n");
    for (const command of [...commands.filter((command) => command !== "npm start"), "npm run check"]) {
      expect(ci, command).toContain(command);
    }
    expect(readFileSync(path.join(ROOT, "README.md"), "utf8")).toContain("`npm run check`");
  });

  // npm install of a fresh copy takes 1-3 minutes on a loaded 2-core machine, even from npm's cache.
  it("installs, and npm start answers /mcp with the demo tools", {
    timeout: INSTALL_AND_START_TIMEOUT_MS,
  }, async () => {
    copyReleaseTree(ROOT, clone);
    expect(existsSync(path.join(clone, "package-lock.json"))).toBe(true);
    expect(existsSync(path.join(clone, "node_modules"))).toBe(false);
    // The command as README gives it; npm's cache makes it quick where it already ran.
    const install = spawnSync("sh", ["-c", commands[0]!], {
      cwd: clone,
      encoding: "utf8",
      env: { ...process.env, npm_config_prefer_offline: "true" },
    });
    expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);

    const gateway = await startGateway({ port: await freePort(), cwd: clone });
    stop = gateway.stop;
    const client = new Client({ name: "quickstart", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["demo___echo", "demo___add"]));
    await client.close();
  });
});
