/**
 * Reading SSE: the framing cases a rewrite of the line splitter must keep, whatever
 * byte the body is cut at and whether it is read into the reader's own buffer (BYOB) or
 * in chunks; and that its work is linear in the body however the body is cut.
 */
import { describe, expect, it } from "vitest";
import { readSse, type SseEvent } from "../../src/core/sse";
import { MAX_FIELD_LINE_BYTES, readSseEvents } from "../../src/core/sse-bytes";
import { textSlices } from "../../src/core/text-slices";

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

/** A byte stream (it takes BYOB reads, as a fetch body does) of the given chunks (empty ones left out: a byte stream has none). */
function byteStreamOf(all: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  const chunks = all.filter((chunk) => chunk.length > 0);
  let next = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk === undefined) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      controller.enqueue(chunk.slice());
    },
  });
}

/** `bytes` cut at each of `cuts` (ascending offsets). */
function cutAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const edges = [0, ...cuts, bytes.length];
  return edges.slice(1).map((end, i) => bytes.subarray(edges[i], end));
}

/** The text of a stream read the way offload reads it: BYOB into a small buffer of its own (core/text-slices.ts). */
async function slicedText(body: ReadableStream<Uint8Array>, sliceBytes: number): Promise<string> {
  const reader = textSlices(body, sliceBytes);
  let text = "";
  for (let next = await reader.read(); !next.done; next = await reader.read()) text += next.value;
  return text;
}

/** The events of `body`; a long event's data read whole, or in slices of `largeSlice` bytes (BYOB) when given. */
async function eventsOf(
  body: ReadableStream<Uint8Array>,
  largeChars?: number,
  largeSlice?: number,
): Promise<Partial<SseEvent>[]> {
  const events: Partial<SseEvent>[] = [];
  for await (const event of readSse(body, largeChars)) {
    const large =
      event.large && (largeSlice ? await slicedText(event.large, largeSlice) : await new Response(event.large).text());
    events.push(event.large ? { ...event, large: undefined, data: `large:${large}` } : event);
  }
  return events.map((event) => Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined)));
}

describe("SSE framing", () => {
  it.each<[string, (string | Uint8Array)[], Partial<SseEvent>[]]>([
    ["LF line ends", ["event: message\ndata: {}\n\n"], [{ event: "message", data: "{}" }]],
    ["CR line ends", ["data: a\rdata: b\r\r"], [{ event: "message", data: "a\nb" }]],
    ["CRLF line ends", ["data: a\r\ndata: b\r\n\r\n"], [{ event: "message", data: "a\nb" }]],
    ["CRLF split across chunks", ["data: a\r", "\ndata: b\r", "\n\r", "\n"], [{ event: "message", data: "a\nb" }]],
    [
      "a CR at a chunk's end that is a line end of its own",
      ["data: a\r", "data: b\r", "\r"],
      [{ event: "message", data: "a\nb" }],
    ],
    ["mixed line ends", ["data: a\ndata: b\r\ndata: c\r\n\n"], [{ event: "message", data: "a\nb\nc" }]],
    ["one byte at a time", [..."id: 4\ndata: x\r\n\r\n"], [{ event: "message", data: "x", id: "4" }]],
    [
      "a character split between chunks",
      [encoder.encode("data: é").subarray(0, 7), encoder.encode("data: é").subarray(7), "\n\n"],
      [{ event: "message", data: "é" }],
    ],
    [
      "comments, alone and inside an event",
      [": hello\n\ndata: a\n: inside\ndata: b\n\n"],
      [{ event: "message", data: "a\nb" }],
    ],
    [
      "multi-line data, with and without the space",
      ['data: {\ndata:  "a": 1\ndata:}\n\n'],
      [{ event: "message", data: '{\n "a": 1\n}' }],
    ],
    ["a field without a colon", ["data\ndata: x\n\n"], [{ event: "message", data: "\nx" }]],
    [
      "id and retry carried to later events",
      ["id: 7\nretry: 300\ndata: a\n\ndata: b\n\n"],
      [
        { event: "message", data: "a", id: "7", retry: 300 },
        { event: "message", data: "b", id: "7", retry: 300 },
      ],
    ],
    ["a retry that is not a number", ["retry: soon\ndata: a\n\n"], [{ event: "message", data: "a" }]],
    [
      "an id holding NULL, ignored",
      ["id: 1\ndata: a\n\nid: x\u0000y\ndata: b\n\n"],
      [
        { event: "message", data: "a", id: "1" },
        { event: "message", data: "b", id: "1" },
      ],
    ],
    [
      "a priming event without data",
      ["id: p-0\nretry: 20\ndata: \n\n"],
      [{ event: "message", data: "", id: "p-0", retry: 20 }],
    ],
    ["an event name", ["event: ping\ndata: 1\n\n"], [{ event: "ping", data: "1" }]],
    ["a byte order mark", ["\uFEFFdata: x\n\n"], [{ event: "message", data: "x" }]],
    ["a blank line with no fields", ["\n\n\ndata: x\n\n"], [{ event: "message", data: "x" }]],
    ["an unfinished event at the end", ["data: a\n\ndata: b\n"], [{ event: "message", data: "a" }]],
  ])("reads %s", async (_label, chunks, expected) => {
    expect(await eventsOf(bodyOf(chunks))).toEqual(expected);
  });

  it.each([1, 2, 3, 7, 64])("reads the same events whatever the chunk size (%i bytes)", async (size) => {
    const text =
      ': c\r\nid: 1\r\nevent: message\r\ndata: {"a":\r\ndata: "é"}\r\n\r\nretry: 5\rdata: z\r\rdata: last\n\n';
    expect(await eventsOf(chunked(text, size))).toEqual([
      { event: "message", data: '{"a":\n"é"}', id: "1" },
      { event: "message", data: "z", id: "1", retry: 5 },
      { event: "message", data: "last", id: "1", retry: 5 },
    ]);
  });

  it.each([
    ["CRLF", `data: ${"w".repeat(150)}\r\n\r\n`, "w".repeat(150)],
    ["CR", `data: ${"w".repeat(150)}\r\r`, "w".repeat(150)],
    [
      "data lines after the long one, other fields skipped",
      `data: a\ndata: ${"v".repeat(100)}\nid: 9\ndata:b\ndata: ${"u".repeat(80)}\n\n`,
      `a\n${"v".repeat(100)}\nb\n${"u".repeat(80)}`,
    ],
    [
      "an empty data line before the long one",
      `data: ${"a".repeat(40)}\ndata:\ndata: ${"b".repeat(100)}\n\n`,
      `${"a".repeat(40)}\n\n${"b".repeat(100)}`,
    ],
    [
      "a long event whose first line is only the field name and its space",
      `data: \ndata: ${"c".repeat(100)}\n\n`,
      `\n${"c".repeat(100)}`,
    ],
  ])("hands a long data line over as a stream with %s", async (_label, first, expected) => {
    const text = `${first}event: message\ndata: after\n\n`;
    const bytes = encoder.encode(text);
    for (const size of [1, 5, 7, 40]) {
      expect((await eventsOf(chunked(text, size), 50)).map((e) => e.data)).toEqual([`large:${expected}`, "after"]);
      const cuts = Array.from({ length: Math.ceil(bytes.length / size) - 1 }, (_, i) => (i + 1) * size);
      expect((await eventsOf(byteStreamOf(cutAt(bytes, cuts)), 50)).map((e) => e.data)).toEqual([
        `large:${expected}`,
        "after",
      ]);
      expect((await eventsOf(byteStreamOf(cutAt(bytes, cuts)), 50, 3)).map((e) => e.data)).toEqual([
        `large:${expected}`,
        "after",
      ]);
    }
  });
});

describe("an event is not held past the bound, whatever it is made of", () => {
  // The bound counted only data values, and only while a data line was cut by a read: an
  // upstream could have one event held whole of any size (a million empty data lines, or
  // one data line then comments for ever, which also keep the idle deadline from firing).
  it.each([
    ["empty data lines (each counted beyond its bytes)", `${"data:\n".repeat(400)}\n`, "\n".repeat(399)],
    ["comments after a data line", `data: {}\n${": ping\n".repeat(400)}\n`, "{}"],
    ["a comment longer than the bound after a data line", `data: x\n:${"c".repeat(3000)}\n\n`, "x"],
    ["other fields after a data line, then more data", `data: a\n${"event: message\n".repeat(100)}data: b\n\n`, "a\nb"],
  ])("hands over as a stream an event of %s", async (_label, first, expected) => {
    const text = `${first}data: after\n\n`;
    const bytes = encoder.encode(text);
    for (const size of [1, 7, 64, bytes.length]) {
      expect((await eventsOf(chunked(text, size), 1000)).map((e) => e.data)).toEqual([`large:${expected}`, "after"]);
      const cuts = Array.from({ length: Math.ceil(bytes.length / size) - 1 }, (_, i) => (i + 1) * size);
      expect((await eventsOf(byteStreamOf(cutAt(bytes, cuts)), 1000, 5)).map((e) => e.data)).toEqual([
        `large:${expected}`,
        "after",
      ]);
    }
  });

  it("holds an event within the bound whole, its lines and comments included", async () => {
    const text = `data: a\n: ping\ndata: b\n\ndata: after\n\n`;
    for (const size of [1, 7, text.length])
      expect((await eventsOf(chunked(text, size), 1000)).map((e) => e.data)).toEqual(["a\nb", "after"]);
  });
});

/** Every framing case above at once: CRLF, CR, LF, a BOM, comments, id and retry, multi-line data, characters of 2 and 4 bytes. */
const MIXED =
  '\uFEFF: c\r\nid: 1\r\nevent: message\r\ndata: {"a":\r\ndata: "é😀"}\r\n\r\nretry: 5\rdata: z\r\rdata:last\n: x\n\n';
const MIXED_EVENTS = [
  { event: "message", data: '{"a":\n"é😀"}', id: "1" },
  { event: "message", data: "z", id: "1", retry: 5 },
  { event: "message", data: "last", id: "1", retry: 5 },
];

describe("SSE framing on the bytes", () => {
  const bytes = encoder.encode(MIXED);

  it("reads the same events whatever byte the body is cut at, once or twice", async () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(await eventsOf(bodyOf(cutAt(bytes, [cut]))), `cut at ${cut}`).toEqual(MIXED_EVENTS);
      expect(await eventsOf(byteStreamOf(cutAt(bytes, [cut]))), `cut at ${cut}, BYOB`).toEqual(MIXED_EVENTS);
      for (const second of [cut + 1, cut + 2, cut + 5]) {
        if (second < bytes.length)
          expect(await eventsOf(byteStreamOf(cutAt(bytes, [cut, second]))), `cut at ${cut} and ${second}`).toEqual(
            MIXED_EVENTS,
          );
      }
    }
  });

  it("reads a body that takes BYOB reads byte by byte", async () => {
    expect(
      await eventsOf(
        byteStreamOf(
          cutAt(
            bytes,
            Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
          ),
        ),
      ),
    ).toEqual(MIXED_EVENTS);
  });

  it("reads from a fetch-like body (a Response's, which takes BYOB reads)", async () => {
    expect(await eventsOf(new Response(bytes).body!)).toEqual(MIXED_EVENTS);
  });

  it("keeps a character whose bytes arrive in three chunks, and a BOM that is part of the data", async () => {
    const text = encoder.encode("data: \uFEFF𝄞é\n\n");
    for (const cuts of [[7], [8, 9, 10], [6, 12, 13]]) {
      expect(await eventsOf(byteStreamOf(cutAt(text, cuts)))).toEqual([{ event: "message", data: "\uFEFF𝄞é" }]);
    }
  });

  it("decodes bytes that are not UTF-8 as a stream decoder does (U+FFFD), before a line break too", async () => {
    const text = new Uint8Array([
      ...encoder.encode("data: a"),
      0xe2,
      0x82,
      0x0a,
      ...encoder.encode("data: "),
      0xff,
      0x0a,
      0x0a,
    ]);
    expect(await eventsOf(byteStreamOf(cutAt(text, [8])))).toEqual([{ event: "message", data: "a\uFFFD\n\uFFFD" }]);
  });

  it.each([
    ["events longer than the reader's first buffer", 3, 1, 200 * 1024, [4093, 65536, 1]],
    ["many events across the buffer's end", 400, 1, 1000, [7, 65_521, 100_003]],
    ["events of many data lines that outgrow the buffer", 6, 12, 9 * 1024, [3000, 61_440, 65_537]],
  ])("reads %s, however the body is cut", async (_label, count, lines, size, chunkSizes) => {
    const texts = Array.from({ length: count }, (_, i) =>
      Array.from({ length: lines }, (_, j) => `{"i":${i},"j":${j},"pad":"${"é".repeat(size / 2)}"}`),
    );
    const frame = (values: string[], i: number) =>
      i % 2
        ? `${values.map((v) => `data: ${v}\r\n`).join("")}\r\n`
        : `: note\nid: ${i}\n${values.map((v) => `data:${v}\n`).join("")}\n`;
    const body = encoder.encode(texts.map(frame).join(""));
    for (const chunk of chunkSizes) {
      const cuts = Array.from({ length: Math.ceil(body.length / chunk) - 1 }, (_, i) => (i + 1) * chunk);
      expect((await eventsOf(byteStreamOf(cutAt(body, cuts)))).map((e) => e.data)).toEqual(
        texts.map((values) => values.join("\n")),
      );
    }
  });

  it.each([
    ["in one chunk", 1024 * 1024],
    ["cut into 1 KiB chunks", 1024],
  ])(
    "skips an id, event or retry line longer than MAX_FIELD_LINE_BYTES (%s), keeping the event",
    async (_label, size) => {
      const long = "i".repeat(MAX_FIELD_LINE_BYTES + 1);
      const body = `id: 1\ndata: first\n\nid: ${long}\nevent: ${long}\nretry: ${"9".repeat(MAX_FIELD_LINE_BYTES + 1)}\ndata: second\n\nid: 3\ndata: third\n\n`;
      expect(await eventsOf(chunked(body, size))).toEqual([
        { event: "message", data: "first", id: "1" },
        { event: "message", data: "second", id: "1" },
        { event: "message", data: "third", id: "3" },
      ]);
    },
  );

  it("skips a comment line longer than any buffer without holding it", async () => {
    const body = `: ${"c".repeat(3 * 1024 * 1024)}\ndata: after\n\n${"x".repeat(10)}: y\n\n`;
    expect(await eventsOf(chunked(body, 64 * 1024))).toEqual([
      { event: "message", data: "after" },
      { event: "message", data: "" },
    ]);
  });
});

/** The old splitter rescanned the whole buffer per chunk: about 15 s of CPU for this line; a linear one takes well under a second. */
const LINEAR_BOUND_MS = 4_000;

describe("a long first data line read across many chunks", () => {
  /** A value full of the bytes a line's start is classified by (":" of a comment, "data:"), and characters cut anywhere. */
  const long = `{"k":"data: é😀 :x"},`.repeat(12_000);
  const text =
    `data: small\n\n: c\r\nid: 7\r\nevent: big\r\ndata: ${long}\r\n: between\r\ndata: tail\r\n\r\n` +
    `data: ${long}\r\rdata: after\n\n`;
  const expected = [
    { event: "message", data: "small" },
    { event: "big", data: `${long}\ntail`, id: "7" },
    { event: "message", data: long, id: "7" },
    { event: "message", data: "after", id: "7" },
  ];
  const bytes = encoder.encode(text);
  /** `bytes` cut into chunks of the given sizes in turn (a line break, a character, a prefix split anywhere). */
  const cutBy = (sizes: readonly number[]) => {
    const cuts: number[] = [];
    for (let at = sizes[0]!, i = 1; at < bytes.length; at += sizes[i++ % sizes.length]!) cuts.push(at);
    return cutAt(
      bytes,
      cuts.filter((cut) => cut < bytes.length),
    );
  };

  it.each([[[1_000]], [[4_093, 7, 1]], [[65_536]], [[16_385, 3]]])(
    "frames it as one event, whatever the chunks (%j bytes), BYOB or not",
    async (sizes) => {
      expect(await eventsOf(bodyOf(cutBy(sizes)))).toEqual(expected);
      expect(await eventsOf(byteStreamOf(cutBy(sizes)))).toEqual(expected);
    },
  );

  it("hands it over as a stream at the bound, the same bytes", async () => {
    const bound = 200_000;
    const asLarge = expected.map((event) =>
      event.data.length > bound ? { ...event, data: `large:${event.data}` } : event,
    );
    expect(await eventsOf(byteStreamOf(cutBy([4_093, 7, 1])), bound)).toEqual(asLarge);
    expect(await eventsOf(bodyOf(cutBy([1_000])), bound, 777)).toEqual(asLarge);
  });
});

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

describe("a one-line event read across buffers", () => {
  it("hands out its line's pieces, each its own memory, and joins them once only if the data is read", async () => {
    const value = `{"jsonrpc":"2.0","id":1,"result":{"t":"${"é".repeat(100_000)}"}}`;
    const events = [];
    for await (const event of readSseEvents(chunked(`event: message\ndata: ${value}\n\ndata: next\n\n`, 1000)))
      events.push(event);
    const [long, next] = events;
    expect(long!.line!.length).toBeGreaterThan(1);
    const decoder = new TextDecoder();
    expect(long!.line!.map((piece) => decoder.decode(piece, { stream: true })).join("") + decoder.decode()).toBe(value);
    // The pieces outlive the reading of the next event (none is a view of the buffer read into since).
    expect(next!.line).toBeUndefined();
    expect(decoder.decode(next!.data[0])).toBe("next");
    expect(long!.data).toBe(long!.data);
    expect(new TextDecoder().decode(long!.data[0])).toBe(value);
  });
});
