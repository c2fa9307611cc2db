/**
 * The benchmark's catalog of real tools: MCP servers installed from npm at bench time
 * (into bench/.servers, not the project's dependencies), each spawned over stdio with the
 * SDK's StdioClientTransport and asked for tools/list. Their definitions stay theirs:
 * nothing of them is written into the repository. A fixture upstream then serves each
 * server's tools over Streamable HTTP on 127.0.0.1 (an SDK Server, stateless), so the
 * gateway aggregates them as it would the servers themselves.
 *
 * The servers need a credential only when a tool runs, so placeholders are given; none
 * of them is called (the fixture answers calls itself).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SERVERS_DIR = path.join(HERE, "..", ".servers");
const LIST_TIMEOUT_MS = 30_000;

/** Upstream name → package (pinned), entry (under node_modules), arguments and placeholder environment. */
export const SERVERS = {
  github: {
    pkg: "@modelcontextprotocol/server-github@2025.4.8",
    entry: "@modelcontextprotocol/server-github/dist/index.js",
    env: { GITHUB_PERSONAL_ACCESS_TOKEN: "placeholder" },
  },
  gitlab: {
    pkg: "@modelcontextprotocol/server-gitlab@2025.4.25",
    entry: "@modelcontextprotocol/server-gitlab/dist/index.js",
    env: { GITLAB_PERSONAL_ACCESS_TOKEN: "placeholder" },
  },
  slack: {
    pkg: "@modelcontextprotocol/server-slack@2025.4.25",
    entry: "@modelcontextprotocol/server-slack/dist/index.js",
    env: { SLACK_BOT_TOKEN: "xoxb-placeholder", SLACK_TEAM_ID: "T0" },
  },
  notion: {
    pkg: "@notionhq/notion-mcp-server@2.5.2",
    entry: ".bin/notion-mcp-server",
    env: { NOTION_TOKEN: "placeholder" },
  },
  playwright: { pkg: "@playwright/mcp@0.0.83", entry: "@playwright/mcp/cli.js" },
  sentry: { pkg: "@sentry/mcp-server@0.36.0", entry: ".bin/sentry-mcp", args: ["--access-token", "placeholder"] },
  filesystem: {
    pkg: "@modelcontextprotocol/server-filesystem@2026.8.31",
    entry: ".bin/mcp-server-filesystem",
    args: ["/tmp"],
  },
  memory: { pkg: "@modelcontextprotocol/server-memory@2026.8.31", entry: ".bin/mcp-server-memory" },
  maps: {
    pkg: "@modelcontextprotocol/server-google-maps@0.6.2",
    entry: ".bin/mcp-server-google-maps",
    env: { GOOGLE_MAPS_API_KEY: "placeholder" },
  },
  brave: {
    pkg: "@modelcontextprotocol/server-brave-search@0.6.2",
    entry: ".bin/mcp-server-brave-search",
    env: { BRAVE_API_KEY: "placeholder" },
  },
  puppeteer: { pkg: "@modelcontextprotocol/server-puppeteer@2025.5.12", entry: ".bin/mcp-server-puppeteer" },
  context7: { pkg: "@upstash/context7-mcp@4.1.1", entry: ".bin/context7-mcp" },
  everything: { pkg: "@modelcontextprotocol/server-everything@2026.8.31", entry: ".bin/mcp-server-everything" },
};

/** Installs the servers into bench/.servers unless they are there (no install scripts: none needs one to list its tools). */
export function installServers() {
  const missing = Object.values(SERVERS).filter(
    (server) => !existsSync(path.join(SERVERS_DIR, "node_modules", server.entry)),
  );
  if (missing.length === 0) return;
  mkdirSync(SERVERS_DIR, { recursive: true });
  if (!existsSync(path.join(SERVERS_DIR, "package.json")))
    writeFileSync(path.join(SERVERS_DIR, "package.json"), '{"name":"bench-catalog-servers","private":true}\n');
  console.log(`[catalog] installing ${missing.length} MCP servers from npm into ${SERVERS_DIR}`);
  const run = spawnSync(
    "npm",
    ["install", "--ignore-scripts", "--no-audit", "--no-fund", ...Object.values(SERVERS).map((s) => s.pkg)],
    { cwd: SERVERS_DIR, stdio: "inherit" },
  );
  if (run.status !== 0) throw new Error("npm install of the benchmark servers failed");
}

/** Spawns one server over stdio and returns its tools (as the SDK client reads them). */
async function listOne(_name, server) {
  const client = new Client({ name: "bench-catalog", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(SERVERS_DIR, "node_modules", server.entry), ...(server.args ?? [])],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...server.env },
    stderr: "pipe",
  });
  let timer;
  try {
    await Promise.race([
      client.connect(transport),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("no answer")), LIST_TIMEOUT_MS))),
    ]);
    const { tools } = await client.listTools();
    return tools;
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

/** Every server's tools, by upstream name; a server that fails is reported and left out. */
export async function listServers() {
  const catalog = {};
  for (const [name, server] of Object.entries(SERVERS)) {
    try {
      catalog[name] = await listOne(name, server);
    } catch (error) {
      console.log(`[catalog] ${name}: left out (${error.message})`);
    }
  }
  return catalog;
}

/** An SDK server answering tools/list with `tools` and every call with a short text. */
function fixtureServer(tools) {
  const server = new Server({ name: "bench-fixture", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: "text", text: `${request.params.name} ran` }],
  }));
  return server;
}

/**
 * Serves each upstream's tools at http://127.0.0.1:<port>/<name>/mcp (stateless JSON).
 * Returns the UPSTREAMS value for the gateway and a close function.
 */
export async function serveFixtures(catalog) {
  const http = createServer(async (req, res) => {
    const name = decodeURIComponent((req.url ?? "").split("/")[1] ?? "");
    const tools = catalog[name];
    if (!tools) return void res.writeHead(404).end();
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = fixtureServer(tools);
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address();
  const upstreams = Object.keys(catalog).map((name) => ({
    name,
    url: `http://127.0.0.1:${port}/${encodeURIComponent(name)}/mcp`,
  }));
  return { upstreams, close: () => new Promise((resolve) => http.close(resolve)) };
}
