/**
 * README's first steps work on a clean clone: the commands of its first shell block are
 * read from README.md itself (so the test follows what a newcomer reads), `npm install`
 * runs in a fresh `git clone` of this repository's HEAD, the test script exists (running
 * it here would run this test again), and `npm start` answers `/mcp` with the demo tools.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** The commands of README's first ```sh block, comments dropped. */
function firstCommands(readme: string): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(readme);
  if (!block) return [];
  return block[1]!
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

describe("README's first steps on a clean clone", () => {
  const commands = firstCommands(readFileSync(path.join(ROOT, "README.md"), "utf8"));
  const clone = mkdtempSync(path.join(tmpdir(), "gateway-clone-"));
  let stop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await stop?.();
    rmSync(clone, { recursive: true, force: true });
  });

  it("are npm install, npm test and npm start", () => {
    expect(commands).toEqual(["npm install", "npm test", "npm start"]);
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts["test"]).toBeTruthy();
    expect(scripts["start"]).toBeTruthy();
  });

  it("installs, and npm start answers /mcp with the demo tools", async () => {
    const cloned = spawnSync("git", ["clone", "--quiet", "--no-hardlinks", ROOT, clone], { encoding: "utf8" });
    expect(cloned.status, cloned.stderr).toBe(0);
    // The command as README gives it; npm's cache makes it quick where it already ran.
    const install = spawnSync("sh", ["-c", commands[0]!], { cwd: clone, encoding: "utf8", env: { ...process.env, npm_config_prefer_offline: "true" } });
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
