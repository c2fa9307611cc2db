/**
 * The bound on an MCP POST body (MAX_MESSAGE_BYTES, 4 MiB by default): past it the
 * gateway answers 413 with a JSON-RPC error naming the limit, in both eras, whether the
 * size is declared (Content-Length) or only counted as a chunked body arrives; a message
 * within it is served, and the gateway goes on serving.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../../src/config/gateway-config";
import { MAX_DRAIN_BYTES, readMessageBody } from "../../src/shell/message-body";
import { countedJunk, drainedAtMost } from "../helpers/counted-body";
import { ACCEPT_BOTH, answer, gatewayFetch, initialize, post, request, type Json } from "../helpers/gateway";
import { modern, modernPost } from "../helpers/modern";

/** A tools/call of alpha's echo whose JSON text is exactly `bytes` long (ASCII). */
function echoOfSize(bytes: number): string {
  const shell = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "" } },
  });
  return shell.replace('"text":""', `"text":"${"x".repeat(bytes - shell.length)}"`);
}

/** A body that arrives in chunks, with no Content-Length. */
function chunked(text: string, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunkBytes));
      at += chunkBytes;
    },
  });
}

async function expectTooLarge(response: Response, limitText: string, maxBytes: number): Promise<void> {
  expect(response.status).toBe(413);
  const body = (await response.json()) as Json;
  expect(body.error.code).toBe(-32600);
  expect(body.error.message).toContain(`at most ${limitText}`);
  expect(body.error.data).toEqual({ maxBytes });
}

describe("an MCP POST body past the limit", () => {
  const over = echoOfSize(DEFAULT_MAX_MESSAGE_BYTES + 1);

  it("is refused with 413 naming the default limit, 2025 (declared length)", async () => {
    const { session } = await initialize("/mcp/alpha");
    await expectTooLarge(
      await post("/mcp/alpha", over, { session }),
      "4 MiB (4194304 bytes)",
      DEFAULT_MAX_MESSAGE_BYTES,
    );
    // The session and the gateway go on.
    expect(
      (await request("/mcp/alpha", session, "tools/call", { name: "echo", arguments: { text: "after" } })).result
        .content[0].text,
    ).toBe("alpha: after");
  });

  it("is refused with 413 naming the default limit, 2026-07-28 (declared length)", async () => {
    const big = "x".repeat(DEFAULT_MAX_MESSAGE_BYTES);
    await expectTooLarge(
      await modernPost("/mcp", "tools/call", { name: "alpha___echo", arguments: { text: big } }),
      "4 MiB (4194304 bytes)",
      DEFAULT_MAX_MESSAGE_BYTES,
    );
    expect(
      (await modern("/mcp", "tools/call", { name: "alpha___echo", arguments: { text: "after" } })).result.content[0]
        .text,
    ).toBe("alpha: after");
  });

  it.each([
    ["2025", { "mcp-protocol-version": "2025-11-25" }],
    ["2026-07-28", { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo" }],
  ])("is counted while a chunked body arrives, and refused at the limit (%s)", async (_era, headers) => {
    const response = await gatewayFetch("/mcp/alpha", {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
      body: chunked(over),
    });
    await expectTooLarge(response, "4 MiB (4194304 bytes)", DEFAULT_MAX_MESSAGE_BYTES);
  });
});

describe("MAX_MESSAGE_BYTES", () => {
  const vars = { MAX_MESSAGE_BYTES: "2048" };

  it("sets the limit: a message of exactly that size is served, one byte more is refused", async () => {
    const { session } = await initialize("/mcp/alpha", { vars });
    const fits = await post("/mcp/alpha", echoOfSize(2048), { session, vars });
    expect(fits.status).toBe(200);
    expect((await answer(fits)).result.content[0].text).toMatch(/^alpha: x+$/);
    await expectTooLarge(await post("/mcp/alpha", echoOfSize(2049), { session, vars }), "2048 bytes", 2048);
    const streamed = await gatewayFetch(
      "/mcp/alpha",
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: ACCEPT_BOTH,
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25",
        },
        body: chunked(echoOfSize(2049), 100),
      },
      vars,
    );
    await expectTooLarge(streamed, "2048 bytes", 2048);
  });

  it.each(["0", "-5", "1.5", "lots"])(
    "keeps the default when it is not a positive whole number (%s)",
    async (value) => {
      const { session } = await initialize("/mcp/alpha", { vars: { MAX_MESSAGE_BYTES: value } });
      const fits = await post("/mcp/alpha", echoOfSize(64 * 1024), { session, vars: { MAX_MESSAGE_BYTES: value } });
      expect(fits.status).toBe(200);
    },
  );
});

describe("a refused body", () => {
  // A client that has not finished sending loses the 413 with the connection (test/e2e/message-size.test.ts).
  it("is read to its end before the 413, up to MAX_DRAIN_BYTES, and no further", async () => {
    const small = countedJunk(5 * 1024 * 1024);
    await expect(
      readMessageBody(
        new Request("http://gateway.test/mcp", { method: "POST", body: small.body }),
        DEFAULT_MAX_MESSAGE_BYTES,
      ),
    ).rejects.toMatchObject({ status: 413 });
    expect(small.read()).toBe(5 * 1024 * 1024);

    const huge = countedJunk(64 * 1024 * 1024);
    await expect(
      readMessageBody(
        new Request("http://gateway.test/mcp", { method: "POST", body: huge.body }),
        DEFAULT_MAX_MESSAGE_BYTES,
      ),
    ).rejects.toMatchObject({ status: 413 });
    expect(huge.read()).toBeLessThanOrEqual(drainedAtMost(MAX_DRAIN_BYTES));
  });
});
