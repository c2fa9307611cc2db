/**
 * A client that stops reading: the gateway must stop reading the upstream too, holding
 * no more than a small buffer, and deliver everything intact once the client reads again.
 * The upstream (test/fixtures/flood-upstream.ts) writes only as fast as its socket
 * drains and reports how much it managed to write while the client paused.
 */
import { inject, describe, expect, it } from "vitest";
import { readSse } from "../../src/core/sse";
import { FLOOD_EVENT_BYTES, type FloodStats } from "../fixtures/flood-upstream";
import { gatewayFetch, initialize, LATEST, post } from "../helpers/gateway";

const FLOOD_MB = 64;
const FLOOD_EVENTS = (FLOOD_MB * 1024 * 1024) / FLOOD_EVENT_BYTES;
/** Socket buffers on loopback plus the gateway's own small buffer stay well under this; without backpressure all 64 MiB go. */
const MAX_WRITTEN_WHILE_PAUSED_BYTES = 16 * 1024 * 1024;
/** The upstream counts as held back once it has waited this long for its socket to drain. */
const QUIET_MS = 1_000;

let runs = 0;

function floodVars(): { key: string; vars: Record<string, string> } {
  const key = `bp-${++runs}-${Math.random().toString(36).slice(2)}`;
  return {
    key,
    vars: { UPSTREAMS: JSON.stringify([{ name: "flood", url: `${inject("floodUrl")}?key=${key}&mb=${FLOOD_MB}` }]) },
  };
}

/** Waits until the flood of `key` is over or held back by a full socket, and says how far it got. */
async function floodStats(key: string): Promise<FloodStats> {
  const url = new URL("/stats", inject("floodUrl"));
  url.searchParams.set("key", key);
  url.searchParams.set("quietMs", String(QUIET_MS));
  return (await (await fetch(url)).json()) as FloodStats;
}

/** Reads one chunk of `body`, then (after `pause`) the whole of it, as SSE events. */
async function readWithPause(body: ReadableStream<Uint8Array>, pause: () => Promise<void>): Promise<string[]> {
  const reader = body.getReader();
  const first = await reader.read();
  expect(first.done).toBe(false);
  await pause();
  let head: Uint8Array | undefined = first.value;
  const rest = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (head) {
        controller.enqueue(head);
        head = undefined;
        return;
      }
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  const texts: string[] = [];
  for await (const event of readSse(rest)) texts.push(event.data);
  return texts;
}

function expectWholeFlood(texts: string[]): void {
  const notifications = texts.slice(0, -1).map((text) => JSON.parse(text) as { params: { data: { index: number } } });
  expect(notifications.map((n) => n.params.data.index)).toEqual(Array.from({ length: FLOOD_EVENTS }, (_, i) => i));
}

describe("a client that stops reading", () => {
  it("holds the upstream of a POST answered as SSE back to the client's pace", { timeout: 120_000 }, async () => {
    const { key, vars } = floodVars();
    const { session } = await initialize("/mcp/flood", { vars });
    const response = await post(
      "/mcp/flood",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "flood", arguments: {} } },
      { session, vars },
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    let paused: FloodStats | undefined;
    const texts = await readWithPause(response.body!, async () => {
      paused = await floodStats(key);
    });
    expect(paused!.done).toBe(false);
    expect(paused!.written).toBeLessThan(MAX_WRITTEN_WHILE_PAUSED_BYTES);
    expectWholeFlood(texts);
    expect(JSON.parse(texts.at(-1)!)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: `flooded ${FLOOD_EVENTS} events` }] },
    });
  });

  it("holds the upstream of the GET stream back to the client's pace", { timeout: 120_000 }, async () => {
    const { key, vars } = floodVars();
    const { session } = await initialize("/mcp/flood", { vars });
    const response = await gatewayFetch(
      "/mcp/flood",
      {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": LATEST },
      },
      vars,
    );
    expect(response.status).toBe(200);
    let paused: FloodStats | undefined;
    const texts = await readWithPause(response.body!, async () => {
      paused = await floodStats(key);
    });
    expect(paused!.done).toBe(false);
    expect(paused!.written).toBeLessThan(MAX_WRITTEN_WHILE_PAUSED_BYTES);
    expectWholeFlood([...texts, "end"]);
  });
});
