/**
 * On /mcp/<upstream> the gateway answers a POST in the framing the upstream chose: SSE
 * when the upstream answered with a stream, JSON when it answered with JSON. On /mcp,
 * which merges upstreams, the gateway chooses (JSON unless a message must go first).
 */
import { inject, describe, expect, it } from "vitest";
import { initialize, messageTexts, post } from "../helpers/gateway";

const raw = inject("fixtureUrls").raw;
const VARS = {
  UPSTREAMS: JSON.stringify([
    { name: "raw", url: raw },
    { name: "rawsse", url: raw.replace(/\/mcp$/, "/sse/mcp") },
  ]),
};

describe("the framing of an answer", () => {
  it.each([
    ["/mcp/rawsse", "tools/call", "text/event-stream", { name: "trap", arguments: {} }],
    ["/mcp/rawsse", "tools/list", "text/event-stream", {}],
    ["/mcp/rawsse", "ping", "text/event-stream", undefined],
    ["/mcp/raw", "tools/call", "application/json", { name: "trap", arguments: {} }],
    ["/mcp/raw", "tools/list", "application/json", {}],
    ["/mcp", "tools/call", "application/json", { name: "rawsse___trap", arguments: {} }],
  ])("on %s, %s is answered as %s", async (path, method, type, params) => {
    const { session } = await initialize(path, { vars: VARS });
    const response = await post(
      path,
      { jsonrpc: "2.0", id: 5, method, ...(params ? { params } : {}) },
      { session, vars: VARS },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain(type);
    const texts = await messageTexts(response);
    expect(texts).toHaveLength(1);
    expect(JSON.parse(texts[0]!)).toMatchObject({ jsonrpc: "2.0", id: 5 });
  });
});
