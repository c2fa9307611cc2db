/**
 * End to end, under `npm start` (wrangler dev, so every request runs in a request context
 * of its own, as deployed): many calls and lists in flight together in one isolate while
 * the KV documents every call reads (personas, filters, visibility, ...) and the
 * upstream's pins every list reads expire every few milliseconds. A call must never wait on a read another call began: workerd cancels a
 * request whose only pending work belongs to another request's context as hung ("the
 * Worker's code had hung"), which is what a read shared at each expiry did to most of the
 * calls waiting on it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { startAlpha } from "../fixtures/sdk-upstream.ts";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

const BURSTS = 3;
const CALLS_PER_BURST = 300;

describe("calls and lists in flight together while documents and pins expire", () => {
  let alpha: Awaited<ReturnType<typeof startAlpha>>;
  let gateway: Gateway;

  beforeAll(async () => {
    alpha = await startAlpha();
    gateway = await startGateway({
      port: await freePort(),
      vars: { UPSTREAMS: [{ name: "alpha", url: alpha.url }], FILTER_CACHE_TTL_MS: "5" },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await alpha?.close();
  });

  it("answers every one of them", async () => {
    const url = `${gateway.url}/mcp/alpha`;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const opened = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "burst", version: "1" } },
      }),
    });
    expect(opened.status).toBe(200);
    await opened.text();
    const session = {
      ...headers,
      "mcp-session-id": opened.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25",
    };
    await (
      await fetch(url, {
        method: "POST",
        headers: session,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      })
    ).text();

    const failures: string[] = [];
    for (let burst = 0; burst < BURSTS; burst++) {
      await Promise.all(
        Array.from({ length: CALLS_PER_BURST }, async (_, i) => {
          // Every third a tools/list (which reads the upstream's pins from KV too), the rest calls.
          const text = `call ${burst}.${i}`;
          const message =
            i % 3 === 0
              ? { method: "tools/list" }
              : { method: "tools/call", params: { name: "echo", arguments: { text } } };
          const response = await fetch(url, {
            method: "POST",
            headers: session,
            body: JSON.stringify({ jsonrpc: "2.0", id: i + 1, ...message }),
          });
          const body = await response.text();
          const expected = i % 3 === 0 ? '"name":"echo"' : `alpha: ${text}`;
          if (response.status !== 200 || !body.includes(expected))
            failures.push(`${response.status} ${body.slice(0, 160)}`);
        }),
      );
    }
    expect(failures.length, failures.slice(0, 3).join("\n")).toBe(0);
  });
});
