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
  /** Reads a chunk the caller may keep (its own memory, no larger than what was read). */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
};

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
  let spare: ArrayBuffer | undefined = new ArrayBuffer(BYTE_READ_BYTES);
  return {
    async readInto(into) {
      const { done, value } = await reader.read(into);
      return { done, value };
    },
    async read() {
      // The bytes are copied out of one reused buffer: a chunk of the size read, not of the buffer's.
      const { done, value } = await reader.read(new Uint8Array(spare ?? new ArrayBuffer(BYTE_READ_BYTES)));
      spare = value?.buffer;
      return done ? { done: true, value: undefined } : { done: false, value: value!.slice() };
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
  return {
    async readInto(into) {
      const chunk = await next();
      if (!chunk) return { done: true, value: into.subarray(0, 0) };
      const length = Math.min(chunk.byteLength, into.byteLength);
      into.set(chunk.subarray(0, length));
      if (length < chunk.byteLength) rest = chunk.subarray(length);
      return { done: false, value: into.subarray(0, length) };
    },
    async read() {
      const chunk = await next();
      return chunk ? { done: false, value: chunk } : { done: true, value: undefined };
    },
    cancel: (reason) => reader.cancel(reason),
    releaseLock: () => reader.releaseLock(),
  };
}
