/**
 * Reading a byte stream into memory the reader owns. Each chunk a stream hands out is a
 * new ArrayBuffer, and workerd frees a fetch body's chunks late: reading a 150 MiB answer
 * at full speed grew the isolate by about 100 MB though nothing held them, where the bare
 * pass-through Worker grew by 1.4 MB (docs/benchmarks.md). A stream that takes BYOB reads
 * (a fetch body, a byte stream) reads into the reader's buffer instead, which the reader
 * reuses; a stream of chunks made in JS has each chunk copied in.
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
   * when the stream was cancelled; at its end it is empty.
   */
  readInto(into: Uint8Array): Promise<IntoResult>;
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

/** Locks `body` to a reader that reads into the caller's memory (BYOB when `body` takes it). */
export function byteReader(body: ReadableStream<Uint8Array>): ByteReader {
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
    const { done, value } = await reader.read(new Uint8Array(spare ?? new ArrayBuffer(BYTE_READ_BYTES), 0, Math.min(max, BYTE_READ_BYTES)));
    spare = value?.buffer;
    return done ? undefined : value;
  };
  return {
    async readInto(into) {
      const { done, value } = await reader.read(into);
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
