/**
 * The real servers `npm run bench:code` runs its tasks on: server-everything, server-memory
 * and server-filesystem as installed from npm by bench/catalog/servers.mjs, each spawned
 * over stdio and served to the gateway over Streamable HTTP on 127.0.0.1 by a small bridge
 * (an SDK Server per request, stateless JSON, forwarding tools/list and tools/call to the
 * stdio client as they are). server-filesystem works on a tree generated here, and
 * server-memory on a file of its own, both under a temporary folder removed at the end.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { SERVERS, SERVERS_DIR } from "../catalog/servers.mjs";

/** Files of the generated tree: sizes chosen so results are the size real ones are (a few KB to tens of KB). */
const SOURCE_FILES = 30;
const LINES_PER_SOURCE = 60;
const CSV_FILES = 6;
const ROWS_PER_CSV = 120;
const LOG_FILES = 4;
const LINES_PER_LOG = 200;

/** A deterministic pseudo-random sequence (the tree is the same on every run). */
function sequence(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Writes the tree server-filesystem serves: src/ (TypeScript with TODOs), data/ (CSV, JSON), logs/, docs/. */
export function generateTree(root) {
  const next = sequence(35);
  for (const dir of ["src/core", "src/features", "data", "logs", "docs", "config"])
    mkdirSync(path.join(root, dir), { recursive: true });
  for (let f = 0; f < SOURCE_FILES; f++) {
    const lines = Array.from({ length: LINES_PER_SOURCE }, (_, i) =>
      next() < 0.08 ? `  // TODO(${["ada", "bob", "cy"][i % 3]}): handle case ${i}` : `  const v${i} = ${i} * ${f};`,
    );
    const dir = f % 2 === 0 ? "src/core" : "src/features";
    writeFileSync(path.join(root, dir, `module-${f}.ts`), `export function m${f}() {\n${lines.join("\n")}\n}\n`);
  }
  for (let f = 0; f < CSV_FILES; f++) {
    const rows = Array.from(
      { length: ROWS_PER_CSV },
      (_, i) => `${i},${["north", "south", "east"][i % 3]},${Math.floor(next() * 1000)}`,
    );
    writeFileSync(path.join(root, "data", `sales-${f}.csv`), `id,region,amount\n${rows.join("\n")}\n`);
  }
  const people = ["Ada", "Bob", "Cy", "Dee", "Eve"].map((name, i) => ({
    name,
    role: i % 2 ? "engineer" : "designer",
    team: i < 3 ? "edge" : "core",
  }));
  writeFileSync(path.join(root, "data", "people.json"), `${JSON.stringify(people, null, 2)}\n`);
  writeFileSync(
    path.join(root, "data", "numbers.txt"),
    `${Array.from({ length: 8 }, () => Math.floor(next() * 100)).join("\n")}\n`,
  );
  for (let f = 0; f < LOG_FILES; f++) {
    const lines = Array.from({ length: LINES_PER_LOG }, (_, i) => {
      const r = next();
      const level = r < 0.06 ? `ERROR E${100 + Math.floor(next() * 4)}` : r < 0.2 ? "WARN" : "INFO";
      return `2026-11-29T0${f}:${String(i % 60).padStart(2, "0")}:00Z ${level} request ${i} served`;
    });
    writeFileSync(path.join(root, "logs", `app-${f}.log`), `${lines.join("\n")}\n`);
  }
  for (const [name, headings] of [
    ["guide", ["Install", "Configure", "Run"]],
    ["api", ["Tools", "Errors"]],
    ["faq", ["Why", "How", "Who", "When"]],
  ])
    writeFileSync(
      path.join(root, "docs", `${name}.md`),
      headings.map((h) => `# ${h}\n\nSome text about ${h}.\n`).join("\n"),
    );
  for (const [name, debug] of [
    ["dev", true],
    ["prod", false],
    ["test", true],
  ])
    writeFileSync(
      path.join(root, "config", `${name}.json`),
      `${JSON.stringify({ name, debug, port: 8000 + name.length })}\n`,
    );
}

/** Spawns one installed server over stdio. */
async function stdioClient(name, args = [], env = {}) {
  const client = new Client({ name: "bench-code", version: "1.0.0" });
  const server = SERVERS[name];
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(SERVERS_DIR, "node_modules", server.entry), ...args],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      stderr: "pipe",
    }),
  );
  return client;
}

/**
 * Starts the three real servers on a generated tree and serves them, with `fixtures`
 * (the catalog's other servers, answered by bench/catalog/servers.mjs) beside them.
 */
export async function serveRealServers() {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-code-"));
  const tree = path.join(dir, "tree");
  generateTree(tree);
  const clients = {
    everything: await stdioClient("everything"),
    memory: await stdioClient("memory", [], { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") }),
    filesystem: await stdioClient("filesystem", [tree]),
  };
  const http = createServer(async (req, res) => {
    const name = decodeURIComponent((req.url ?? "").split("/")[1] ?? "");
    const client = clients[name];
    if (!client) return void res.writeHead(404).end();
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const server = new Server({ name: `bench-${name}`, version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, (request) =>
      client.request({ method: "tools/list", params: request.params }, ListToolsResultSchema),
    );
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      client.request({ method: "tools/call", params: request.params }, CallToolResultSchema),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address();
  const upstreams = Object.keys(clients).map((name) => ({ name, url: `http://127.0.0.1:${port}/${name}/mcp` }));
  return {
    upstreams,
    root: tree,
    dir,
    close: async () => {
      await new Promise((resolve) => http.close(resolve));
      for (const client of Object.values(clients)) await client.close().catch(() => {});
    },
  };
}
