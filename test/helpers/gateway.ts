/**
 * Drives the Worker the way a client would, inside workerd: real requests into the
 * Worker's fetch with the real KV/R2/Queue bindings, optionally with other vars.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../src/index";
import { readSse } from "../../src/core/sse";

export const ACCEPT_BOTH = "application/json, text/event-stream";
export const LATEST = "2025-11-25";

export type Vars = Record<string, unknown>;

/** What a request is sent to: the Worker itself, or an app built with other pipeline options. */
export type GatewayTarget = {
  fetch: (request: Request, env: Vars, ctx: ExecutionContext) => Response | Promise<Response>;
};

/**
 * The address a test file's requests come from when they name none (CF-Connecting-IP): one
 * of its own per file, from its path. Every workers file runs in one runtime, and the admin
 * throttle counts wrong tokens per source in isolate memory (auth/admin-throttle.ts): a file
 * that tries wrong tokens must not throttle the files after it.
 */
function fileSource(): string {
  let hash = 0;
  for (const char of expect.getState().testPath ?? "") hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return `10.${(hash >>> 16) & 255}.${(hash >>> 8) & 255}.${hash & 255}`;
}

/**
 * Sends one HTTP request to the gateway (or `target`) with the test bindings (plus `vars`).
 * With `settle`, returns only once the body is read and the work the Worker left to
 * `waitUntil` is done (a notification's delivery to the upstreams, for one).
 */
export async function gatewayFetch(
  path: string,
  init: RequestInit = {},
  vars: Vars = {},
  target: GatewayTarget = worker as GatewayTarget,
  settle = false,
): Promise<Response> {
  const ctx = createExecutionContext();
  const headers = new Headers(init.headers);
  if (!headers.has("cf-connecting-ip")) headers.set("cf-connecting-ip", fileSource());
  const response = await target.fetch(
    new Request(path.startsWith("http") ? path : `http://gateway.test${path}`, { ...init, headers }),
    { ...env, ...vars },
    ctx,
  );
  if (!settle) {
    void waitOnExecutionContext(ctx);
    return response;
  }
  // An answer that flows (src/core/response-flow.ts) leaves its record and audit to when it ended: read it first.
  const body = await response.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return new Response(response.status === 204 || response.status === 304 ? null : body, response);
}

export type PostOptions = {
  session?: string;
  headers?: Record<string, string>;
  vars?: Vars;
  version?: string | null;
  target?: GatewayTarget;
  settle?: boolean;
};

/** POSTs a JSON-RPC body (object, array or raw text). */
export function post(path: string, body: unknown, options: PostOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: ACCEPT_BOTH,
    ...options.headers,
  };
  if (options.session) headers["mcp-session-id"] = options.session;
  if (options.session && options.version !== null) headers["mcp-protocol-version"] = options.version ?? LATEST;
  return gatewayFetch(
    path,
    { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) },
    options.vars,
    options.target,
    options.settle,
  );
}

/** The raw JSON-RPC message texts of a response, whether JSON or SSE. */
export async function messageTexts(response: Response): Promise<string[]> {
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) {
    const out: string[] = [];
    for await (const event of readSse(response.body!)) out.push(event.data);
    return out;
  }
  return [await response.text()];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read deep into JSON
// biome-ignore lint/suspicious/noExplicitAny: tests read answers loosely; the assertions check them.
export type Json = any;

export async function messages(response: Response): Promise<Json[]> {
  return (await messageTexts(response)).map((text) => JSON.parse(text));
}

/** The final response of a POST (the last message). */
export async function answer(response: Response): Promise<Json> {
  const all = await messages(response);
  return all[all.length - 1];
}

/** Starts a session on `path`; returns its id and the initialize result. */
export async function initialize(
  path = "/mcp",
  options: {
    capabilities?: Record<string, unknown>;
    version?: string;
    vars?: Vars;
    target?: GatewayTarget;
    headers?: Record<string, string>;
  } = {},
): Promise<{ session: string; result: Json }> {
  const response = await post(
    path,
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: options.version ?? LATEST,
        capabilities: options.capabilities ?? {},
        clientInfo: { name: "test", version: "1" },
      },
    },
    { vars: options.vars, target: options.target, headers: options.headers },
  );
  if (response.status !== 200) throw new Error(`initialize failed: ${response.status} ${await response.text()}`);
  const session = response.headers.get("mcp-session-id");
  if (!session) throw new Error("initialize answered without Mcp-Session-Id");
  const result = (await response.json()) as Json;
  await post(
    path,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { session, vars: options.vars, version: options.version, target: options.target, headers: options.headers },
  );
  return { session, result: result.result };
}

let nextId = 1;

/** Sends a request in a session and returns the final JSON-RPC response. */
export async function request(
  path: string,
  session: string,
  method: string,
  params?: unknown,
  options: PostOptions = {},
): Promise<Json> {
  const response = await post(
    path,
    { jsonrpc: "2.0", id: nextId++, method, ...(params === undefined ? {} : { params }) },
    { ...options, session },
  );
  return answer(response);
}
