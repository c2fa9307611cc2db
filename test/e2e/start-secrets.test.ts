/**
 * `npm start` never puts the session key on a command line: `ps` shows every process's
 * arguments to every user of the machine. The command lines of the whole process group
 * of a started gateway (start.mjs, wrangler, workerd, esbuild) are read from /proc.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { sealSession } from "../../src/core/session-token";

type Gateway = Awaited<ReturnType<typeof startGateway>>;
const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** The command lines of every process in the process group `group`. */
function commandLines(group: number): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name (which may hold spaces) in parentheses: state, ppid, pgrp.
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp === group) lines.push(readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " "));
    } catch {
      // The process ended while being read.
    }
  }
  return lines;
}

async function toolsListStatus(gateway: Gateway, session: string): Promise<number> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.body?.cancel();
  return response.status;
}

describe.skipIf(!existsSync("/proc/self/stat"))("the session key of npm start", () => {
  let gateway: Gateway | undefined;
  afterEach(async () => gateway?.stop());

  it("from the environment reaches the gateway, and no command line", async () => {
    const secret = randomBytes(32).toString("hex");
    gateway = await startGateway({ port: await freePort(), env: { SESSION_SECRET: secret } });
    const lines = commandLines(gateway.pid);
    expect(lines.some((line) => line.includes("wrangler"))).toBe(true);
    for (const line of lines) expect(line).not.toContain(secret);
    // A session sealed with that key is the gateway's own: the key arrived.
    const state = { sid: "0".repeat(32), protocolVersion: "2025-11-25", clientCapabilities: {}, clientInfo: { name: "e2e", version: "1" }, principal: "anonymous", route: "", upstreams: {}, exp: Math.floor(Date.now() / 1000) + 600 };
    expect(await toolsListStatus(gateway, await sealSession(state, secret))).toBe(200);
    expect(await toolsListStatus(gateway, await sealSession(state, "another-key-0123456789abcdef"))).toBe(404);
  });

  it("generated for development reaches no command line either", async () => {
    gateway = await startGateway({ port: await freePort(), env: { SESSION_SECRET: "" } });
    const secret = readFileSync(path.join(ROOT, ".wrangler", "dev-session-secret"), "utf8").trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    for (const line of commandLines(gateway.pid)) expect(line).not.toContain(secret);
  });
});
