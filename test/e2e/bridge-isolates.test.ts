/**
 * The bridge across isolates: the gateway bundle (built as `wrangler deploy` builds it)
 * loaded twice in one Miniflare, as two Workers — each its own isolate — sharing the KV
 * namespace and the BridgedCall Durable Object namespace (the second binds the first's
 * class by scriptName). A 2026-07-28 client's call reaches a 2025 SDK upstream through
 * Worker A; the upstream asks for sampling; the client's retry goes to Worker B, which
 * holds nothing of the call, and completes the same upstream call through the Durable
 * Object. (Each Worker of a Miniflare is its own workerd service, so its own isolate:
 * nothing of the call is in B's memory.) And the other way round: a 2025 client's call to a
 * 2026-07-28 upstream waits on Worker A while the client's answer to the upstream's
 * question is POSTed to Worker B (they meet in the INPUT_RENDEZVOUS Durable Object).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAlpha } from "../fixtures/sdk-upstream.ts";
import { startModernUpstream } from "../fixtures/modern-upstream.ts";
import { gatewayWorkerOptions } from "../../scripts/lib/worker-options.mjs";

const MODERN = "2026-07-28";
const SECRET = "isolates-test-secret-0123456789abcdef";
const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");

type Json = {
  id: unknown;
  result?: Record<string, unknown> & {
    requestState?: string;
    inputRequests?: Record<string, unknown>;
    content?: { text: string }[];
  };
  error?: { code: number; message: string; data?: { reason?: string } };
};
type WorkerFetch = (url: string, init: RequestInit) => Promise<Response>;

let nextId = 1;

async function call(
  worker: WorkerFetch,
  route: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown>,
): Promise<{ status: number; body: Json }> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: nextId++,
    method: "tools/call",
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  });
  const response = await worker(`http://gateway.test${route}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": String(params["name"]),
    },
    body,
  });
  const text = await response.text();
  // An SSE answer: the last event's data is the response.
  const last = text.startsWith("{")
    ? text
    : text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)!
        .slice(6);
  return { status: response.status, body: JSON.parse(last) as Json };
}

describe("two isolates sharing the Durable Objects", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let modern: Awaited<ReturnType<typeof startModernUpstream>>;
  let mf: Miniflare;
  let outdir: string;
  let workerA: WorkerFetch;
  let workerB: WorkerFetch;

  beforeAll(async () => {
    alpha = await startAlpha();
    modern = await startModernUpstream();
    outdir = await mkdtemp(path.join(tmpdir(), "gateway-bundle-"));
    await promisify(execFile)(
      path.join(REPO_ROOT, "node_modules", ".bin", "wrangler"),
      ["deploy", "--dry-run", "--outdir", outdir],
      { cwd: REPO_ROOT },
    );
    const gateway = {
      modules: true,
      scriptPath: path.join(outdir, "index.js"),
      modulesRoot: outdir,
      // The deployed Worker's compatibility date and flags (wrangler.toml).
      compatibilityDate: gatewayWorkerOptions().compatibilityDate,
      compatibilityFlags: gatewayWorkerOptions().compatibilityFlags,
      bindings: {
        UPSTREAMS: JSON.stringify([
          { name: "alpha", url: alpha.url },
          { name: "modern", url: modern.url },
        ]),
        SESSION_SECRET: SECRET,
        AUTH: '{"mode":"off"}',
      },
      kvNamespaces: { GATEWAY_KV: "gateway-kv" },
    };
    // Miniflare's classic (v4) options, converted: the form its README documents.
    mf = new Miniflare(
      convertV4MiniflareOptions({
        workers: [
          {
            name: "gateway-a",
            ...gateway,
            durableObjects: {
              BRIDGED_CALLS: { className: "BridgedCall", useSQLite: true },
              INPUT_RENDEZVOUS: { className: "InputRendezvous", useSQLite: true },
            },
          },
          {
            name: "gateway-b",
            ...gateway,
            durableObjects: {
              BRIDGED_CALLS: { className: "BridgedCall", scriptName: "gateway-a", useSQLite: true },
              INPUT_RENDEZVOUS: { className: "InputRendezvous", scriptName: "gateway-a", useSQLite: true },
            },
          },
        ],
      }),
    );
    const a = await mf.getWorker("gateway-a");
    const b = await mf.getWorker("gateway-b");
    workerA = (url, init) => a.fetch(url, init as never) as unknown as Promise<Response>;
    workerB = (url, init) => b.fetch(url, init as never) as unknown as Promise<Response>;
  });

  afterAll(async () => {
    await mf?.dispose();
    await alpha?.close();
    await modern?.close();
    if (outdir) await rm(outdir, { recursive: true, force: true });
  });

  it.each([
    ["/mcp/alpha", "ask_llm"],
    ["/mcp", "alpha___ask_llm"],
  ])(
    "a sampling request from a 2025 upstream, answered by a 2026 client whose retry lands on another isolate, on %s",
    async (route, tool) => {
      const capabilities = { sampling: {} };
      const args = { question: "Capital of France?" };
      const first = await call(workerA, route, { name: tool, arguments: args }, capabilities);
      expect(first.status).toBe(200);
      expect(first.body.result).toMatchObject({
        resultType: "input_required",
        inputRequests: { "sampling-1": { method: "sampling/createMessage" } },
      });
      const completion = {
        role: "assistant",
        content: { type: "text", text: "Paris" },
        model: "test-model",
        stopReason: "endTurn",
      };
      const retry = await call(
        workerB,
        route,
        {
          name: tool,
          arguments: args,
          inputResponses: { "sampling-1": completion },
          requestState: first.body.result!.requestState,
        },
        capabilities,
      );
      expect(retry.status).toBe(200);
      expect(retry.body.result).toMatchObject({
        resultType: "complete",
        content: [{ type: "text", text: "model said: Paris" }],
      });
    },
  );

  it("a 2025 client's answer to a 2026-07-28 upstream's question, POSTed to the other isolate, completes the call waiting on the first", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "legacy", version: "1" },
      },
    };
    const opened = await workerA("http://gateway.test/mcp/modern", {
      method: "POST",
      headers,
      body: JSON.stringify(init),
    });
    const session = opened.headers.get("mcp-session-id")!;
    await opened.text();
    const inSession = { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const call = await workerA("http://gateway.test/mcp/modern", {
      method: "POST",
      headers: inSession,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "confirm", arguments: { text: "elsewhere" } },
      }),
    });
    const events = sseData(call.body!);
    const asked = JSON.parse((await events.next()).value as string) as { id: string; method: string };
    expect(asked.method).toBe("elicitation/create");
    const delivered = await workerB("http://gateway.test/mcp/modern", {
      method: "POST",
      headers: inSession,
      body: JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { action: "accept", content: { ok: false } } }),
    });
    expect(delivered.status).toBe(202);
    const final = JSON.parse((await events.next()).value as string) as Json;
    expect(final).toMatchObject({
      id: 2,
      result: { content: [{ type: "text", text: "confirmed elsewhere: false (state confirm:elsewhere)" }] },
    });
    await events.return(undefined);
  });
});

/** The data of each SSE event of `body`, as it arrives. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf("\n\n"); end !== -1; end = buffered.indexOf("\n\n")) {
      const data = buffered
        .slice(0, end)
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      buffered = buffered.slice(end + 2);
      if (data) yield data;
    }
  }
}
