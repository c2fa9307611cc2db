/**
 * Reading SSE: the framing cases a rewrite of the line splitter must keep, and that its
 * work is linear in the body however the body is cut.
 */
import { describe, expect, it } from "vitest";
import { readSse, type SseEvent } from "../src/core/sse";

const encoder = new TextEncoder();

/** A body delivered as the given chunks, one per read. */
function bodyOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk === undefined) return controller.close();
      controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
    },
  });
}

/** A body of `text` delivered in chunks of `size` bytes. */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

async function eventsOf(body: ReadableStream<Uint8Array>, largeChars?: number): Promise<Partial<SseEvent>[]> {
  const events: Partial<SseEvent>[] = [];
  for await (const event of readSse(body, largeChars)) {
    events.push(event.large ? { ...event, large: undefined, data: `large:${await new Response(event.large).text()}` } : event);
  }
  return events.map((event) => Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined)));
}

describe("SSE framing", () => {
  it.each<[string, (string | Uint8Array)[], Partial<SseEvent>[]]>([
    ["LF line ends", ["event: message\ndata: {}\n\n"], [{ event: "message", data: "{}" }]],
    ["CR line ends", ["data: a\rdata: b\r\r"], [{ event: "message", data: "a\nb" }]],
    ["CRLF line ends", ["data: a\r\ndata: b\r\n\r\n"], [{ event: "message", data: "a\nb" }]],
    ["CRLF split across chunks", ["data: a\r", "\ndata: b\r", "\n\r", "\n"], [{ event: "message", data: "a\nb" }]],
    ["a CR at a chunk's end that is a line end of its own", ["data: a\r", "data: b\r", "\r"], [{ event: "message", data: "a\nb" }]],
    ["mixed line ends", ["data: a\ndata: b\r\ndata: c\r\n\n"], [{ event: "message", data: "a\nb\nc" }]],
    ["one byte at a time", [..."id: 4\ndata: x\r\n\r\n"], [{ event: "message", data: "x", id: "4" }]],
    ["a character split between chunks", [encoder.encode("data: é").subarray(0, 7), encoder.encode("data: é").subarray(7), "\n\n"], [{ event: "message", data: "é" }]],
    ["comments, alone and inside an event", [": hello\n\ndata: a\n: inside\ndata: b\n\n"], [{ event: "message", data: "a\nb" }]],
    ["multi-line data, with and without the space", ["data: {\ndata:  \"a\": 1\ndata:}\n\n"], [{ event: "message", data: '{\n "a": 1\n}' }]],
    ["a field without a colon", ["data\ndata: x\n\n"], [{ event: "message", data: "\nx" }]],
    ["id and retry carried to later events", ["id: 7\nretry: 300\ndata: a\n\ndata: b\n\n"], [{ event: "message", data: "a", id: "7", retry: 300 }, { event: "message", data: "b", id: "7", retry: 300 }]],
    ["a retry that is not a number", ["retry: soon\ndata: a\n\n"], [{ event: "message", data: "a" }]],
    ["a priming event without data", ["id: p-0\nretry: 20\ndata: \n\n"], [{ event: "message", data: "", id: "p-0", retry: 20 }]],
    ["an event name", ["event: ping\ndata: 1\n\n"], [{ event: "ping", data: "1" }]],
    ["a byte order mark", ["\uFEFFdata: x\n\n"], [{ event: "message", data: "x" }]],
    ["a blank line with no fields", ["\n\n\ndata: x\n\n"], [{ event: "message", data: "x" }]],
    ["an unfinished event at the end", ["data: a\n\ndata: b\n"], [{ event: "message", data: "a" }]],
  ])("reads %s", async (_label, chunks, expected) => {
    expect(await eventsOf(bodyOf(chunks))).toEqual(expected);
  });

  it.each([1, 2, 3, 7, 64])("reads the same events whatever the chunk size (%i bytes)", async (size) => {
    const text = ": c\r\nid: 1\r\nevent: message\r\ndata: {\"a\":\r\ndata: \"é\"}\r\n\r\nretry: 5\rdata: z\r\rdata: last\n\n";
    expect(await eventsOf(chunked(text, size))).toEqual([
      { event: "message", data: '{"a":\n"é"}', id: "1" },
      { event: "message", data: "z", id: "1", retry: 5 },
      { event: "message", data: "last", id: "1", retry: 5 },
    ]);
  });

  it.each([
    ["CRLF", "data: " + "w".repeat(150) + "\r\n\r\n", "w".repeat(150)],
    ["CR", "data: " + "w".repeat(150) + "\r\r", "w".repeat(150)],
    ["data lines after the long one, other fields skipped", "data: a\ndata: " + "v".repeat(100) + "\nid: 9\ndata:b\ndata: " + "u".repeat(80) + "\n\n", `a\n${"v".repeat(100)}\nb\n${"u".repeat(80)}`],
  ])("hands a long data line over as a stream with %s", async (_label, first, expected) => {
    for (const size of [1, 5, 7, 40]) {
      expect((await eventsOf(chunked(`${first}event: message\ndata: after\n\n`, size), 50)).map((e) => e.data)).toEqual([`large:${expected}`, "after"]);
    }
  });
});

/** The old splitter rescanned the whole buffer per chunk: about 15 s of CPU for this line; a linear one takes well under a second. */
const LINEAR_BOUND_MS = 4_000;

describe("SSE reading is linear", () => {
  it("reads one 8 MiB data line delivered in 1 KiB chunks", { timeout: 120_000 }, async () => {
    const chars = 8 * 1024 * 1024;
    const started = performance.now();
    const events = await (async () => {
      const out: SseEvent[] = [];
      for await (const event of readSse(chunked(`data: ${"x".repeat(chars)}\n\n`, 1024))) out.push(event);
      return out;
    })();
    const elapsed = performance.now() - started;
    expect(events).toHaveLength(1);
    expect(events[0]!.data.length).toBe(chars);
    expect(events[0]!.data.replaceAll("x", "")).toBe("");
    expect(elapsed).toBeLessThan(LINEAR_BOUND_MS);
  });
});
