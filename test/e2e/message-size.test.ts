/**
 * A body past the message limit, sent with Node's fetch to the gateway `npm start` runs:
 * the client reads the 413 and its JSON-RPC error, rather than a connection dropped while
 * it was still sending ("terminated"), whether the size is declared or the body is chunked.
 * workerd in-process tests (test/front/message-size.test.ts) never show this: it happens on the
 * socket, between the HTTP server and a client that has not finished writing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startGateway } from "../../scripts/lib/gateway-process.mjs";
import { countedJunk } from "../helpers/counted-body.ts";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

/** The size of junk a user sent: over the 4 MiB default limit, under what is drained before answering. */
const JUNK_BYTES = 5 * 1024 * 1024;
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};
const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "e2e", version: "1" } },
};

let gateway: Gateway;

beforeAll(async () => {
  gateway = await startGateway({ port: await freePort() });
});
afterAll(async () => {
  await gateway?.stop();
});

async function expectReadable413(response: Response): Promise<void> {
  expect(response.status).toBe(413);
  const body = (await response.json()) as { error: { code: number; message: string; data: unknown } };
  expect(body.error.code).toBe(-32600);
  expect(body.error.message).toMatch(/^Payload Too Large: an MCP message body may hold at most 4 MiB/);
}

describe("a 5 MB junk body", () => {
  it("with a declared length answers a 413 Node's fetch reads", async () => {
    const body = new Uint8Array(JUNK_BYTES).fill(0x78);
    await expectReadable413(await fetch(`${gateway.url}/mcp`, { method: "POST", headers: HEADERS, body }));
  });

  it("sent chunked answers a 413 Node's fetch reads", async () => {
    const init = { method: "POST", headers: HEADERS, body: countedJunk(JUNK_BYTES).body, duplex: "half" };
    await expectReadable413(await fetch(`${gateway.url}/mcp`, init as RequestInit));
  });

  it("leaves the gateway serving", async () => {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify(INIT),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });
});
