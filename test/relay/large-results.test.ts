/**
 * A large result that no policy changes (offload off for its tool) reaches the client as
 * the upstream's own text: as a JSON answer, and as the last event of an SSE answer, whose
 * frame is written from the text's bytes between the event's prefix and end, not from a
 * concatenated copy (front/http/sse-writer.ts, issue 38). The raw upstream answers the same
 * call with the same bytes either way, so the JSON answer is the SSE event's data.
 */
import { describe, expect, inject, it } from "vitest";
import { initialize, post } from "../helpers/gateway";

const MB = 1;

describe("a large result relayed unchanged", () => {
  it("is the same bytes as JSON and as the SSE answer's event, framed as one data line", async () => {
    const vars = {
      UPSTREAMS: JSON.stringify([{ name: "raw", url: inject("fixtureUrls").raw, timeoutMs: 60_000 }]),
      OFFLOAD: JSON.stringify({ exclude: ["raw___*"] }),
    };
    const { session } = await initialize("/mcp/raw", { vars });
    const call = async (sse: boolean) => {
      const body = {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "huge", arguments: { mb: MB, sse } },
      };
      const response = await post("/mcp/raw", body, { session, vars });
      expect(response.status).toBe(200);
      return { type: response.headers.get("content-type"), text: await response.text() };
    };
    const json = await call(false);
    expect(json.type).toBe("application/json");
    expect(json.text.length).toBeGreaterThan(MB * 1024 * 1024);
    expect(JSON.parse(json.text).id).toBe(7);

    const sse = await call(true);
    expect(sse.type).toContain("text/event-stream");
    // The upstream's log line first (its own bytes), then the answer, keepalives aside.
    const events = sse.text.split("\n\n").filter((event) => event !== "" && !event.startsWith(":"));
    expect(events).toHaveLength(2);
    expect(events[0]).toContain('"notifications/message"');
    expect(`${events[1]}\n\n`).toBe(`event: message\ndata: ${json.text}\n\n`);
    expect(sse.text.endsWith(`data: ${json.text}\n\n`)).toBe(true);
  });
});
