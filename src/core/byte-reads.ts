/**
 * Reading a byte stream into memory the reader owns. Each chunk a stream hands out is a
 * new ArrayBuffer, and workerd frees a fetch body's chunks late: reading a 150 MiB answer
 * at full speed grew the isolate by about 100 MB though nothing held them, where the bare
 * pass-through Worker grew by 1.4 MB (docs/benchmarks.md). A stream that takes BYOB reads
 * (a fetch body, a byte stream) reads into the reader's buffer instead, which the reader
 * reuses; a stream of chunks made in JS has each chunk copied in.
 *
 * Every read from JS costs workerd memory of its own that only a full collection gives
 * back (about 3 KiB a read: reading 1,000 MiB of 64 KiB chunks grew a Worker that did
 * nothing else by 48 MiB, docs/benchmarks.md), so a stream the gateway makes over a reader
 * of its own (`readableOf`) is read through that reader, not a read of the stream on top
 * of each read of the one below; and a reader that needs the bytes whatever comes (a body
 * read to its end) asks for many at once (`atLeast`).
 */

/** Bytes read at a time into the buffer a `ByteReader` keeps for `read()`. */
export const BYTE_READ_BYTES = 64 * 1024;

/** The result of `readInto`: the bytes read, in a view of the memory that was passed in. */
export type IntoResult = { readonly done: boolean; readonly value: Uint8Array | undefined };

export type ByteReader = {
  /**
   * Reads at most `into.length` bytes (at least one, unless the stream ended) into the
   * memory of `into`, and hands that memory back as `value`: `into` itself may no longer
   * be usable (a BYOB read moves its buffer to `value.buffer`). `value` is undefined only
   * when the stream was cancelled; at its end it is empty. With `atLeast`, a stream that
   * can wait for more (a fetch body) resolves only once that many bytes are read or at
   * its end: for a reader that cannot act before then anyway, never for one that must
   * hand on what has come (an SSE stream's events).
   */
  readInto(into: Uint8Array, atLeast?: number): Promise<IntoResult>;
  /**
   * Copies at most `into.length` bytes (at least one, unless the stream ended) into `into`,
   * which stays the caller's (for a BYOB request's view, whose buffer may not be moved);
   * resolves with the number of bytes, 0 at the end.
   */
  fill(into: Uint8Array): Promise<number>;
  /** Reads a chunk the caller may keep and hand on (its own memory, no larger than what was read). */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
};

/**
 * Answers a pending BYOB request of a byte stream's `controller` from `reader` (the bytes
 * copied into the request's view), or else enqueues a chunk of the reader's; closes the
 * stream at the reader's end. For the `pull` of a byte stream that hands on another.
 */
export async function pullFrom(reader: ByteReader, controller: ReadableByteStreamController): Promise<void> {
  const request = controller.byobRequest;
  const view = request?.view;
  if (request && view) {
    const length = await reader.fill(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    if (length > 0) return request.respond(length);
    controller.close();
    return request.respond(0);
  }
  const { done, value } = await reader.read();
  if (done) controller.close();
  else controller.enqueue(value);
}

/** `reader`, after the chunks of it already read (`held`, handed on first, in order). */
export function afterHeld(held: Uint8Array[], reader: ByteReader): ByteReader {
  /** Copies as much of the next held chunk as fits into `into`; what does not fit comes next. */
  const copyHeld = (into: Uint8Array): number => {
    const chunk = held[0]!;
    const length = Math.min(chunk.byteLength, into.byteLength);
    into.set(chunk.subarray(0, length));
    if (length < chunk.byteLength) held[0] = chunk.subarray(length);
    else held.shift();
    return length;
  };
  return {
    async readInto(into, atLeast) {
      if (held.length === 0) return reader.readInto(into, atLeast);
      return { done: false, value: into.subarray(0, copyHeld(into)) };
    },
    fill: async (into) => (held.length > 0 ? copyHeld(into) : reader.fill(into)),
    read: async () => (held.length > 0 ? { done: false, value: held.shift()! } : reader.read()),
    cancel: (reason) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}

/** Streams made by `readableOf`, with the reader they hand on. */
const directReaders = new WeakMap<ReadableStream<Uint8Array>, ByteReader>();

/**
 * A byte stream of what `reader` reads, for any reader of streams; `byteReader` of it
 * reads `reader` itself, with no read of the stream in between.
 */
export function readableOf(reader: ByteReader): ReadableStream<Uint8Array> {
  const stream = new ReadableStream(
    { type: "bytes", pull: (controller) => pullFrom(reader, controller), cancel: (reason) => reader.cancel(reason) },
    { highWaterMark: 0 },
  );
  directReaders.set(stream, reader);
  return stream;
}

/** Locks `body` to a reader that reads into the caller's memory (BYOB when `body` takes it). */
export function byteReader(body: ReadableStream<Uint8Array>): ByteReader {
  const direct = directReaders.get(body);
  if (direct) {
    // Locked as any reader locks it, so that nothing else reads it meanwhile; cancelled through the stream.
    const lock = body.getReader();
    return {
      readInto: (into, atLeast) => direct.readInto(into, atLeast),
      fill: (into) => direct.fill(into),
      read: () => direct.read(),
      cancel: (reason) => lock.cancel(reason),
      releaseLock: () => lock.releaseLock(),
    };
  }
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // A stream of chunks (one made in JS): read below, each chunk copied.
  }
  return byob ? byobReads(byob) : chunkReads(body.getReader());
}

function byobReads(reader: ReadableStreamBYOBReader): ByteReader {
  let spare: ArrayBufferLike | undefined;
  /** The next bytes, read into the spare buffer (at most `max`): valid until the next read. */
  const readSpare = async (max: number): Promise<Uint8Array | undefined> => {
    const { done, value } = await reader.read(
      new Uint8Array(spare ?? new ArrayBuffer(BYTE_READ_BYTES), 0, Math.min(max, BYTE_READ_BYTES)),
    );
    spare = value?.buffer;
    return done ? undefined : value;
  };
  return {
    async readInto(into, atLeast = 1) {
      const min = Math.min(atLeast, into.byteLength);
      // workerd's readAtLeast; elsewhere (Node, for the benches) a plain read.
      const { done, value } = await (min > 1 && typeof reader.readAtLeast === "function"
        ? reader.readAtLeast(min, into)
        : reader.read(into));
      return { done, value };
    },
    async fill(into) {
      const value = await readSpare(into.byteLength);
      if (!value) return 0;
      into.set(value);
      return value.byteLength;
    },
    async read() {
      // The bytes are copied out of one reused buffer: a chunk of the size read, not of the buffer's.
      const value = await readSpare(BYTE_READ_BYTES);
      return value ? { done: false, value: value.slice() } : { done: true, value: undefined };
    },
    cancel: (reason) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}

function chunkReads(reader: ReadableStreamDefaultReader<Uint8Array>): ByteReader {
  /** What is left of a chunk larger than the memory it was read into. */
  let rest: Uint8Array | undefined;
  const next = async (): Promise<Uint8Array | undefined> => {
    if (rest) {
      const chunk = rest;
      rest = undefined;
      return chunk;
    }
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return undefined;
      if (value.byteLength > 0) return value;
    }
  };
  const fill = async (into: Uint8Array): Promise<number> => {
    const chunk = await next();
    if (!chunk) return 0;
    const length = Math.min(chunk.byteLength, into.byteLength);
    into.set(chunk.subarray(0, length));
    if (length < chunk.byteLength) rest = chunk.subarray(length);
    return length;
  };
  return {
    async readInto(into) {
      const length = await fill(into);
      return { done: length === 0, value: into.subarray(0, length) };
    },
    fill,
    async read() {
      // A copy: the stream's own chunk may be one it still uses (a view of a larger buffer).
      const chunk = await next();
      return chunk ? { done: false, value: chunk.slice() } : { done: true, value: undefined };
    },
    cancel: (reason) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}
