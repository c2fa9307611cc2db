/**
 * One place the benchmark sends its tools/call (or tools/list) to (the upstream itself, the
 * pass-through, or the gateway on /mcp/<name> or /mcp), with the MCP session opened
 * first the way a client would: initialize, then notifications/initialized, then every
 * call carries the Mcp-Session-Id (when the target gave one) and MCP-Protocol-Version.
 */

export const PROTOCOL_VERSION = "2025-11-25";
/** A call that takes longer fails; BENCH_REQUEST_TIMEOUT_MS raises it (a 10 MiB result under load, bench/profile-call.mjs). */
const REQUEST_TIMEOUT_MS = Number(process.env.BENCH_REQUEST_TIMEOUT_MS) || 10_000;

export type TargetSpec = {
  /** Short unique label, e.g. "raw gateway /mcp". */
  readonly name: string;
  /** Which upstream the call ends at. */
  readonly upstream: string;
  readonly via: "direct" | "passthrough" | "gateway" | "gateway-aggregated";
  readonly url: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** What each call sends: a tools/call of `tool` (the default), or a tools/list. */
  readonly method?: "tools/call" | "tools/list";
  /** Extra request headers (an Authorization header for the gateway with AUTH on). */
  readonly headers?: Readonly<Record<string, string>>;
};

export type Target = TargetSpec & {
  /** Sends one tools/call (or tools/list) and reads the whole answer; throws unless it is a 200 with a result. */
  readonly call: () => Promise<void>;
};

let nextId = 1;

async function post(url: string, headers: Record<string, string>, body: string): Promise<Response> {
  return fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
}

function failure(spec: TargetSpec, what: string, response: Response, text: string): Error {
  return new Error(`${spec.name}: ${what} answered HTTP ${response.status}: ${text.slice(0, 300)}`);
}

/** Opens the session at `spec.url` and returns the target ready to call. */
export async function openTarget(spec: TargetSpec): Promise<Target> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...spec.headers,
  };
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: nextId++,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "mcp-edge-gateway-bench", version: "0.1.0" },
    },
  });
  const answer = await post(spec.url, headers, initialize);
  const answerText = await answer.text();
  if (!answer.ok || !answerText.includes('"result"')) throw failure(spec, "initialize", answer, answerText);
  const session = answer.headers.get("mcp-session-id");
  if (session) headers["mcp-session-id"] = session;
  headers["mcp-protocol-version"] = PROTOCOL_VERSION;
  const initialized = await post(spec.url, headers, '{"jsonrpc":"2.0","method":"notifications/initialized"}');
  await initialized.body?.cancel();

  const call = async () => {
    const method = spec.method ?? "tools/call";
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      ...(method === "tools/call" ? { params: { name: spec.tool, arguments: spec.args } } : {}),
    });
    const response = await post(spec.url, headers, body);
    const text = await response.text();
    if (response.status !== 200 || !text.includes('"result"')) throw failure(spec, method, response, text);
  };
  await call(); // fails here, before any measurement, when the target is not usable
  return { ...spec, call };
}
