/**
 * Reading byte streams with as few reads as the reader can afford (core/byte-reads.ts):
 * each read of a stream from JS costs workerd memory that only a full collection gives
 * back, so a stream the gateway makes over its own reader is read through that reader,
 * and a reader that wants a whole body asks for full slices at a time.
 */
import { describe, expect, it } from "vitest";
import { byteReader, readableOf, type ByteReader } from "../../src/core/byte-reads";
import { textSlices } from "../../src/core/text-slices";
import { readToEnd } from "../helpers/byte-streams";

/** A byte stream of `total` bytes of "a" that hands out at most `pieceBytes` per pull, counting its pulls. */
function pieces(total: number, pieceBytes: number): { stream: ReadableStream<Uint8Array>; pulls: () => number } {
  let sent = 0;
  let pulls = 0;
  const stream = new ReadableStream(
    {
      type: "bytes",
      pull(controller) {
        pulls++;
        const length = Math.min(pieceBytes, total - sent);
        if (length === 0) {
          controller.close();
          return controller.byobRequest?.respond(0);
        }
        const request = controller.byobRequest;
        const view = request?.view;
        const into = view
          ? new Uint8Array(view.buffer, view.byteOffset, Math.min(length, view.byteLength))
          : new Uint8Array(length);
        into.fill(0x61);
        sent += into.byteLength;
        if (request) request.respond(into.byteLength);
        else controller.enqueue(into);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulls: () => pulls };
}

/** A reader that counts which of its reads were used, over `inner`. */
function counted(inner: ByteReader): { reader: ByteReader; calls: Record<"readInto" | "fill" | "read", number> } {
  const calls = { readInto: 0, fill: 0, read: 0 };
  const reader: ByteReader = {
    readInto: (into, atLeast) => {
      calls.readInto++;
      return inner.readInto(into, atLeast);
    },
    fill: (into) => {
      calls.fill++;
      return inner.fill(into);
    },
    read: () => {
      calls.read++;
      return inner.read();
    },
    cancel: (reason) => inner.cancel(reason),
    releaseLock: () => inner.releaseLock(),
  };
  return { reader, calls };
}

describe("byteReader", () => {
  it("reads a stream made by readableOf through its reader: the bytes land in the caller's buffer with one read each, not a read of the stream on top", async () => {
    const source = pieces(10 * 1024, 1024);
    const { reader, calls } = counted(byteReader(source.stream));
    const direct = byteReader(readableOf(reader));
    expect(await readToEnd(direct, 4096)).toBe(10 * 1024);
    expect(calls).toEqual({ readInto: 11, fill: 0, read: 0 });
  });

  it("still hands a stream made by readableOf to any other reader, and cancels through it", async () => {
    const source = pieces(3000, 1024);
    const stream = readableOf(byteReader(source.stream));
    const text = await new Response(stream).text();
    expect(text).toBe("a".repeat(3000));
    const other = byteReader(readableOf(byteReader(pieces(3000, 1024).stream)));
    await other.cancel();
    expect(await other.readInto(new Uint8Array(16))).toMatchObject({ done: true });
  });
});

describe("textSlices on a body that comes in small pieces", () => {
  it.each([
    ["through readableOf", true],
    ["straight", false],
  ])("asks for full slices (%s): one string per slice, not one per piece", async (_label, wrapped) => {
    const source = pieces(64 * 1024 + 100, 1024);
    const body = wrapped ? readableOf(byteReader(source.stream)) : source.stream;
    const reader = textSlices(body, 16 * 1024);
    const lengths: number[] = [];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      lengths.push(next.value.length);
    }
    expect(lengths).toEqual([16 * 1024, 16 * 1024, 16 * 1024, 16 * 1024, 100]);
  });
});
