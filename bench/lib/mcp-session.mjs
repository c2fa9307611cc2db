/**
 * A 2025-11-25 client session over plain fetch for the benchmarks that count what a client
 * reads (bench/catalog.mjs, bench/code.mjs): each answer's final JSON-RPC message and its text,
 * whether the gateway answered JSON or SSE.
 */
/** The last JSON-RPC message of an HTTP answer (JSON or SSE). */
export async function lastMessage(response) {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream"))
    return { text, message: JSON.parse(text) };
  const events = text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n"),
    )
    .filter(Boolean);
  const last = events.at(-1);
  return { text: last, message: JSON.parse(last) };
}

/** A 2025 session on `url`; `send(method, params)` answers the final message and its text. */
export async function session(url, clientName = "bench-catalog") {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  let id = 0;
  const post = (body) => fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const init = await post({
    jsonrpc: "2.0",
    id: id++,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: clientName, version: "1" } },
  });
  if (init.status !== 200) throw new Error(`initialize on ${url}: ${init.status} ${await init.text()}`);
  headers["mcp-session-id"] = init.headers.get("mcp-session-id");
  headers["mcp-protocol-version"] = "2025-11-25";
  await init.text();
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
  return {
    send: async (method, params) => {
      const answer = await lastMessage(await post({ jsonrpc: "2.0", id: id++, method, ...(params ? { params } : {}) }));
      if (answer.message.error) throw new Error(`${method}: ${answer.message.error.message}`);
      return answer;
    },
  };
}

/** Every tool of a list (following nextCursor). */
export async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const { message } = await client.send("tools/list", cursor ? { cursor } : undefined);
    tools.push(...message.result.tools);
    cursor = message.result.nextCursor;
  } while (cursor);
  return tools;
}
