/**
 * The demo upstream MCP server: a small Cloudflare Worker built with the MCP SDK.
 *
 * It exists so that a newcomer has something real behind the gateway from the first
 * `npm start`: scripts/start.mjs runs this Worker beside the gateway in one `wrangler dev`
 * session, and the gateway's default UPSTREAMS entry reaches it through the
 * DEMO_UPSTREAM service binding. Everything it returns is fake and deterministic, so it
 * also serves as a known upstream for anything that starts the gateway with `npm start`.
 *
 * It serves MCP Streamable HTTP at `/mcp` in stateless mode: every request gets a fresh
 * McpServer and transport, no session id is issued, and GET/DELETE answer 405 (there
 * are no server-initiated messages to stream). Any other path answers 404.
 *
 * Capabilities: tools `echo`, `add` (structured output), `get_forecast` (fake,
 * deterministic), `count_slowly` (progress notifications), `big_report` (a JSON text of a
 * chosen size, by default just above the gateway's 512 KiB offload threshold, to see
 * offload at work); resource `demo://readme`,
 * resource template `demo://notes/{id}`; prompt `summarize`.
 *
 * Runtime note: the SDK's Server builds an Ajv JSON Schema validator by default. Ajv only
 * generates code (`new Function`, forbidden in workerd) when it compiles a schema, which
 * the server side does only for elicitation; this server never elicits, so the default
 * is safe here and no `@cfworker/json-schema` dependency is needed. Tool arguments and
 * structured output are validated with zod, which detects Workers and runs without eval.
 */
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** Name and version the demo server reports in its `initialize` result. */
export const DEMO_SERVER_INFO = { name: "mcp-edge-gateway-demo", version: "0.1.0" } as const;

const README = `# Demo upstream

This is the demo MCP server that ships with mcp-edge-gateway. Try the tools
\`echo\`, \`add\`, \`get_forecast\`, \`count_slowly\` and \`big_report\`, read \`demo://notes/{id}\`
(ids 1-3) and get the \`summarize\` prompt, all through the gateway.
`;

const NOTES: Readonly<Record<string, string>> = {
  "1": "Buy coffee beans.",
  "2": "The gateway relays tools, resources and prompts from its upstreams.",
  "3": "Progress notifications travel back over the same SSE stream as the result.",
};

/** `big_report`'s default size: just above the gateway's default offload threshold (512 KiB). */
const BIG_REPORT_DEFAULT_KB = 520;
const BIG_REPORT_MAX_KB = 8 * 1024;
const REGIONS = ["north", "south", "east", "west"] as const;
const PRODUCTS = ["anvil", "rocket skates", "giant magnet", "earthquake pills", "tornado seeds"] as const;

/** A fake, deterministic sales report whose JSON text is at least `kb` KiB: the same `kb` always gives the same bytes. */
export function bigReport(kb: number): {
  report: string;
  currency: "EUR";
  total: number;
  rows: { id: number; region: string; product: string; units: number; revenue: number; note: string }[];
} {
  const rows: { id: number; region: string; product: string; units: number; revenue: number; note: string }[] = [];
  // Each row is about 130 bytes of JSON; enough rows to pass the size asked.
  const wanted = kb * 1024;
  for (let id = 0, bytes = 60; bytes < wanted; id++) {
    const h = hash(`row:${id}`);
    const row = {
      id,
      region: REGIONS[h % REGIONS.length]!,
      product: PRODUCTS[(h >>> 4) % PRODUCTS.length]!,
      units: 1 + (h % 97),
      revenue: ((h >>> 8) % 100_000) / 100,
      note: `order ${id} shipped`,
    };
    rows.push(row);
    bytes += JSON.stringify(row).length + 1;
  }
  return { report: "quarterly sales", currency: "EUR", total: rows.length, rows };
}

const CONDITIONS = ["sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy", "snow"] as const;

/** A small deterministic hash (FNV-1a) so the same city always gets the same weather. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (const ch of text.toLowerCase()) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Fake, deterministic forecast for `city`: one entry per day. */
export function forecastFor(
  city: string,
  days: number,
): { city: string; unit: "celsius"; days: { day: number; condition: string; high: number; low: number }[] } {
  const seed = hash(city.trim());
  return {
    city: city.trim(),
    unit: "celsius",
    days: Array.from({ length: days }, (_, day) => {
      const h = hash(`${seed}:${day}`);
      const high = (h % 30) - 2;
      return {
        day: day + 1,
        condition: CONDITIONS[h % CONDITIONS.length] ?? "sunny",
        high,
        low: high - 3 - ((h >>> 8) % 8),
      };
    }),
  };
}

/** Resolves after `ms`, or rejects early when `signal` aborts (the client cancelled). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Builds a fresh demo McpServer with all tools, resources and prompts registered. */
export function createDemoServer(): McpServer {
  const server = new McpServer(DEMO_SERVER_INFO, {
    instructions: "Demo upstream for mcp-edge-gateway. All data is fake and deterministic.",
  });

  server.registerTool(
    "echo",
    {
      title: "Echo",
      description: "Returns the text it is given.",
      inputSchema: { text: z.string().describe("Text to echo back") },
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );

  server.registerTool(
    "add",
    {
      title: "Add",
      description: "Adds two numbers and returns the sum as structured content.",
      inputSchema: { a: z.number().describe("First addend"), b: z.number().describe("Second addend") },
      outputSchema: { sum: z.number() },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );

  server.registerTool(
    "get_forecast",
    {
      title: "Weather forecast",
      description: "Fake but deterministic weather forecast for a city, as JSON text.",
      inputSchema: {
        city: z.string().min(1).describe('City name, e.g. "Lisbon"'),
        days: z.number().int().min(1).max(7).optional().describe("Number of days (1-7, default 3)"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ city, days }) => ({ content: [{ type: "text", text: JSON.stringify(forecastFor(city, days ?? 3)) }] }),
  );

  server.registerTool(
    "count_slowly",
    {
      title: "Count slowly",
      description:
        "Counts to `to`, one step every 200 ms, reporting progress when the request carries a progressToken.",
      inputSchema: { to: z.number().int().min(1).max(20).optional().describe("Number to count to (1-20, default 5)") },
    },
    async ({ to }, extra) => {
      const total = to ?? 5;
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= total; step++) {
        await sleep(200, extra.signal);
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: step, total, message: `Counted ${step} of ${total}` },
          });
        }
      }
      return { content: [{ type: "text", text: `Counted to ${total}.` }] };
    },
  );

  server.registerTool(
    "big_report",
    {
      title: "Big report",
      description: `A fake, deterministic sales report as JSON text, about size_kb KiB (default ${BIG_REPORT_DEFAULT_KB}, just above the gateway's offload threshold): a result large enough to be offloaded.`,
      inputSchema: {
        size_kb: z
          .number()
          .int()
          .min(1)
          .max(BIG_REPORT_MAX_KB)
          .optional()
          .describe(`Approximate size in KiB (1-${BIG_REPORT_MAX_KB}, default ${BIG_REPORT_DEFAULT_KB})`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ size_kb }) => ({
      content: [{ type: "text", text: JSON.stringify(bigReport(size_kb ?? BIG_REPORT_DEFAULT_KB)) }],
    }),
  );

  server.registerResource(
    "readme",
    "demo://readme",
    { title: "Demo README", description: "What this demo upstream offers.", mimeType: "text/markdown" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: README }] }),
  );

  server.registerResource(
    "note",
    new ResourceTemplate("demo://notes/{id}", {
      list: async () => ({
        resources: Object.keys(NOTES).map((id) => ({
          uri: `demo://notes/${id}`,
          name: `note-${id}`,
          mimeType: "text/plain",
        })),
      }),
      complete: { id: (value) => Object.keys(NOTES).filter((id) => id.startsWith(value)) },
    }),
    { title: "Note", description: "A short demo note by id (1-3).", mimeType: "text/plain" },
    async (uri, { id }) => {
      const key = Array.isArray(id) ? id[0] : id;
      const text = key === undefined ? undefined : NOTES[key];
      if (text === undefined) throw new McpError(ErrorCode.InvalidParams, `Note ${String(key)} not found`);
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text }] };
    },
  );

  server.registerPrompt(
    "summarize",
    {
      title: "Summarize",
      description: "Asks the model to summarize a text.",
      argsSchema: { text: z.string().describe("Text to summarize") },
    },
    ({ text }) => ({
      messages: [
        { role: "user", content: { type: "text", text: `Summarize the following text in two sentences:\n\n${text}` } },
      ],
    }),
  );

  return server;
}

/** Answers one HTTP request: MCP at POST /mcp (stateless), 405 for other methods there, 404 elsewhere. */
export async function handleRequest(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (pathname !== "/mcp") return new Response("Not found", { status: 404 });
  if (request.method !== "POST") {
    return Response.json(
      {
        jsonrpc: "2.0",
        error: { code: ErrorCode.ConnectionClosed, message: "Method not allowed: this server is stateless" },
        id: null,
      },
      { status: 405, headers: { Allow: "POST" } },
    );
  }
  const server = createDemoServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  return transport.handleRequest(request);
}

export default { fetch: handleRequest } satisfies ExportedHandler;
