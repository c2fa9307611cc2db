/**
 * `npm start` never puts the session key on a command line: `ps` shows every process's
 * arguments to every user of the machine. The command lines of the whole process group
 * of a started gateway (start.mjs, wrangler, workerd, esbuild) are read from /proc.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";

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

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function newSession(gateway: Gateway): Promise<string> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "e2e", version: "1" } },
    }),
  });
  await response.body?.cancel();
  expect(response.status).toBe(200);
  return response.headers.get("mcp-session-id")!;
}

async function pingStatus(gateway: Gateway, session: string): Promise<number> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: { ...HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await response.body?.cancel();
  return response.status;
}

describe.skipIf(!existsSync("/proc/self/stat"))("the session key of npm start", () => {
  const gateways: Gateway[] = [];
  afterAll(async () => Promise.all(gateways.map((g) => g.stop())));

  it("from the environment, or generated for development, reaches the gateway and no command line", async () => {
    const secret = randomBytes(32).toString("hex");
    const [fromEnv, generated] = await Promise.all([
      startGateway({ port: await freePort(), env: { SESSION_SECRET: secret } }),
      startGateway({ port: await freePort(), env: { SESSION_SECRET: "" } }),
    ]);
    gateways.push(fromEnv, generated);
    const devKey = readFileSync(path.join(ROOT, ".wrangler", "dev-session-secret"), "utf8").trim();
    expect(devKey).toMatch(/^[0-9a-f]{64}$/);
    for (const gateway of [fromEnv, generated]) {
      const lines = commandLines(gateway.pid);
      expect(lines.some((line) => line.includes("wrangler"))).toBe(true);
      for (const line of lines) {
        expect(line).not.toContain(secret);
        expect(line).not.toContain(devKey);
      }
    }
    // Each gateway has a key (initialize works), and not the same one: the environment's arrived.
    const [a, b] = [await newSession(fromEnv), await newSession(generated)];
    expect([await pingStatus(fromEnv, a), await pingStatus(generated, b)]).toEqual([200, 200]);
    expect([await pingStatus(generated, a), await pingStatus(fromEnv, b)]).toEqual([404, 404]);
  });
});
