/**
 * The answer deadline raced against each read of a guarded body (upstream/deadlines.ts)
 * must not leave a reaction per read on a promise that lives as long as the body: an
 * upstream decides how many chunks its answer comes in, so that memory would follow the
 * upstream's framing, not the bytes held. `Promise.race` subscribes to each promise it is
 * given through its `then`; counting `then` per promise shows what each read leaves behind.
 */
import { afterEach, describe, expect, it } from "vitest";
import { byteReader } from "../../src/core/byte-reads";
import { AnswerDeadline, guardBody, type BodyGuard } from "../../src/upstream/deadlines";
import { readToEnd } from "../helpers/byte-streams";

const CHUNKS = 2_000;
const CHUNK_BYTES = 8;

/** A body of `CHUNKS` chunks of `CHUNK_BYTES` bytes, one per pull. */
function manyChunks(): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent === CHUNKS) return controller.close();
        sent++;
        controller.enqueue(new Uint8Array(CHUNK_BYTES).fill(0x61));
      },
    },
    { highWaterMark: 0 },
  );
}

/** Counts the `then` calls each promise receives until the returned function restores `then`. */
function countThens(): { most: () => number; restore: () => void } {
  const original = Promise.prototype.then;
  const counts = new WeakMap<object, number>();
  let most = 0;
  // biome-ignore lint/suspicious/noThenProperty: the test counts reactions by wrapping Promise.prototype.then itself.
  Promise.prototype.then = function then(this: Promise<unknown>, ...args: Parameters<typeof original>) {
    const count = (counts.get(this) ?? 0) + 1;
    counts.set(this, count);
    most = Math.max(most, count);
    return original.apply(this, args) as never;
  } as typeof original;
  return {
    most: () => most,
    restore: () => {
      // biome-ignore lint/suspicious/noThenProperty: puts back the Promise.prototype.then the test wrapped.
      Promise.prototype.then = original;
    },
  };
}

let restore: (() => void) | undefined;
afterEach(() => restore?.());

describe("a guarded body under the answer deadline", () => {
  it.each([
    ["the answer deadline alone", undefined],
    ["the answer deadline and an idle deadline", 60_000],
  ])("reads %s with no reaction per read on a promise that outlives the read", async (_, idleMs) => {
    const deadline = new AnswerDeadline(60_000, () => {});
    const guard: BodyGuard = {
      upstream: "many-chunks",
      deadline,
      ...(idleMs === undefined ? {} : { idleMs }),
      broke: {},
      received: { bytes: 0 },
    };
    const counter = countThens();
    restore = counter.restore;
    const total = await readToEnd(byteReader(guardBody(manyChunks(), guard)), 64);
    counter.restore();
    deadline.disarm();
    expect(total).toBe(CHUNKS * CHUNK_BYTES);
    expect(guard.received.bytes).toBe(CHUNKS * CHUNK_BYTES);
    // One read's own promises take a `then` or two; a promise raced on every read would take one per chunk.
    expect(counter.most()).toBeLessThan(10);
  });

  it("fails every read waiting when the answer deadline passes, not only the last one started", async () => {
    const deadline = new AnswerDeadline(50, () => {});
    const guard: BodyGuard = { upstream: "silent", deadline, broke: {}, received: { bytes: 0 } };
    const reader = byteReader(
      guardBody(new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) }), guard),
    );
    const settled = (read: Promise<unknown>) =>
      read.then(
        (value) => ({ value }),
        (error: { failure?: unknown }) => ({ failure: error.failure }),
      );
    const reads = await Promise.all([
      settled(reader.readInto(new Uint8Array(16))),
      settled(reader.readInto(new Uint8Array(16))),
    ]);
    expect(reads).toEqual([
      { failure: expect.objectContaining({ reason: "timeout", waited: "answer" }) },
      { failure: expect.objectContaining({ reason: "timeout", waited: "answer" }) },
    ]);
  });

  it("still ends a body whose upstream stops sending when the answer deadline passes", async () => {
    const deadline = new AnswerDeadline(50, () => {});
    const guard: BodyGuard = { upstream: "stalled", deadline, broke: {}, received: { bytes: 0 } };
    let sent = false;
    const stalled = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return new Promise<void>(() => {}); // never sends again
        sent = true;
        controller.enqueue(new Uint8Array([0x7b]));
      },
    });
    const reader = byteReader(guardBody(stalled, guard));
    const buffer = new Uint8Array(16);
    expect((await reader.readInto(buffer)).value?.byteLength).toBe(1);
    await expect(reader.readInto(buffer)).rejects.toMatchObject({
      name: "UpstreamBreak",
      failure: { reason: "timeout", waited: "answer" },
    });
    expect(guard.broke.failure).toMatchObject({ reason: "timeout", waited: "answer", upstream: "stalled" });
  });
});
